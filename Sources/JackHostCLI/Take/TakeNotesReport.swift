import JackHostConsumers

/// Once a second: the recorder's notes (a take that could not open, a split that failed) and
/// the files `--keep` removed, each said as it happens.
final class TakeNotesReport: TakeDuty {
    private let recorder: Recorder
    private var cadence = Cadence(every: 1)

    init(recorder: Recorder) { self.recorder = recorder }

    func tick(now: Double) -> [TakeController.Command] {
        guard cadence.isDue(now) else { return [] }
        Self.flush(recorder)
        return []
    }

    /// Prints what the recorder has to say now (also once more at the end of the run).
    static func flush(_ recorder: Recorder) {
        for note in recorder.takeNotes() { printError("warning: \(note)") }
        for line in recorder.takeRemovals() { printNote(line) }
    }
}
