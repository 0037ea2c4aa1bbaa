import JackHost
import JackHostPlugins

/// With `--results FILE`: once a second, every plugin's latest results go to the file.
final class ResultsFileWriter: TakeDuty {
    private let writer: PluginResultsWriter
    private let sources: [PluginResultSource]
    private let host: CaptureHost
    private var cadence = Cadence(every: 1, startAtOnce: false)

    init(writer: PluginResultsWriter, sources: [PluginResultSource], host: CaptureHost) {
        self.writer = writer
        self.sources = sources
        self.host = host
    }

    func tick(now: Double) -> [TakeController.Command] {
        guard cadence.isDue(now) else { return [] }
        writer.write(sources, seconds: Double(host.statistics.capturedFrames) / host.sampleRateOrDefault, summary: false)
        return []
    }
}
