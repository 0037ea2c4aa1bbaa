import JackHost
import JackHostConsumers
import JackHostPlugins

/// With `--results FILE`: once a second, every plugin's latest results and the loudness
/// measurements go to the file, and every marker placed in the take since the last look, once each.
final class ResultsFileWriter: TakeDuty {
    private let writer: PluginResultsWriter
    private let sources: [PluginResultSource]
    private let host: CaptureHost
    private let recorder: Recorder?
    private let loudness: LoudnessMeter?
    private var cadence = Cadence(every: 1, startAtOnce: false)
    /// Markers already written.
    private var markersWritten = 0

    init(writer: PluginResultsWriter, sources: [PluginResultSource], host: CaptureHost, recorder: Recorder?, loudness: LoudnessMeter?) {
        self.writer = writer
        self.loudness = loudness
        self.sources = sources
        self.host = host
        self.recorder = recorder
    }

    func tick(now: Double) -> [TakeController.Command] {
        guard cadence.isDue(now) else { return [] }
        let seconds = Double(host.statistics.capturedFrames) / host.sampleRateOrDefault
        writer.write(sources, seconds: seconds, summary: false)
        if let loudness { writer.writeLoudness(loudness.readings, seconds: seconds, summary: false) }
        writeNewMarkers(seconds: seconds)
        return []
    }

    /// The markers placed since the last call (also at the end, so none is left out).
    func writeNewMarkers(seconds: Double) {
        guard let markers = recorder?.markers, markers.count > markersWritten else { return }
        for marker in markers[markersWritten...] { writer.writeMarker(marker, seconds: seconds) }
        markersWritten = markers.count
    }
}
