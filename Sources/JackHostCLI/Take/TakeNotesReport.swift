import JackHostConsumers

/// Once a second: the recorder's notes (a take that could not open, a split that failed), the
/// files `--keep` removed and the markers placed, each said as it happens.
final class TakeNotesReport: TakeDuty {
    private let recorder: Recorder
    private let sampleRate: Double
    private var cadence = Cadence(every: 1)
    private var markersSaid = 0

    init(recorder: Recorder, sampleRate: Double) {
        self.recorder = recorder
        self.sampleRate = sampleRate
    }

    func tick(now: Double) -> [TakeController.Command] {
        guard cadence.isDue(now) else { return [] }
        Self.flush(recorder)
        let markers = recorder.markers
        for marker in markers.dropFirst(markersSaid) { printNote(Self.describe(marker, sampleRate: sampleRate)) }
        markersSaid = markers.count
        return []
    }

    /// Prints what the recorder has to say now (also once more at the end of the run).
    static func flush(_ recorder: Recorder) {
        for note in recorder.takeNotes() { printError("warning: \(note)") }
        for line in recorder.takeRemovals() { printNote(line) }
    }

    /// `marker "verse" (keyboard) at 12.345 s, frame 592560 of take.wav`, and where it is kept.
    static func describe(_ marker: TakeMarker, sampleRate: Double) -> String {
        let seconds = (Double(marker.frame) / max(sampleRate, 1)).formatted(places: 3)
        let kept =
            marker.inFile
            ? "" : marker.inSidecar ? " (in the sidecar only)" : " (kept in no file: this container has no cue chunk; --sidecar keeps markers)"
        return "marker \"\(marker.label)\" (\(marker.source)) at \(seconds) s, frame \(marker.frame) of \(marker.file)\(kept)"
    }
}
