import JackHost
import JackHostPlugins

/// In the child process of an isolated plugin: five times a second, tells the recording how
/// far this plugin got and its latest results; ends the run when the recording went away.
final class SupervisorReport: TakeDuty {
    private let link: SupervisorLink
    private let host: CaptureHost
    private let plugins: [LoadedPlugin]
    private var cadence = Cadence(every: 0.2)

    init(link: SupervisorLink, host: CaptureHost, plugins: [LoadedPlugin]) {
        self.link = link
        self.host = host
        self.plugins = plugins
    }

    func tick(now: Double) -> [TakeController.Command] {
        if link.isClosed { return [.quit(.init(.supervisorGone))] }
        guard cadence.isDue(now) else { return [] }
        let stats = host.statistics
        link.sendProgress(stats.consumers.map(\.deliveredFrames).min() ?? stats.capturedFrames)
        for plugin in plugins { link.sendResults(plugin.latestResults()) }
        return []
    }
}
