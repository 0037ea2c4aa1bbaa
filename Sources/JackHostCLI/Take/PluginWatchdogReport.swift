import JackHostPlugins

/// Says once, when it happens, that a plugin's watchdog bypassed it (it overran its budget).
final class PluginWatchdogReport: TakeDuty {
    private let plugins: [LoadedPlugin]
    /// In an isolated plugin's process, every line already names the plugin.
    private let namesPlugin: Bool
    private var reported = Set<Int>()

    init(plugins: [LoadedPlugin], namesPlugin: Bool) {
        self.plugins = plugins
        self.namesPlugin = namesPlugin
    }

    func tick(now: Double) -> [TakeController.Command] {
        for (index, plugin) in plugins.enumerated() where !reported.contains(index) {
            guard let watchdog = plugin.watchdog, watchdog.isBypassed.load(ordering: .acquiring) else { continue }
            reported.insert(index)
            printError(namesPlugin ? "plugin \(plugin.name) \(watchdog.bypassDescription)" : watchdog.bypassDescription)
        }
        return []
    }
}
