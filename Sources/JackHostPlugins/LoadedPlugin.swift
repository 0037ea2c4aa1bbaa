import JackHost

/// A plugin ready to run: its library opened and checked, its options validated, and one
/// instance created.
///
/// ```swift
/// let plugin = try LoadedPlugin.load(PluginSpecification(parsing: "./libPeak.so:max-channels=8"))
/// host.add(plugin)                       // or switch over plugin.makeConsumer()
/// try host.start()                       // the plugin's prepare may refuse the format here
/// ```
///
/// The instance is destroyed when the last of this object and its consumer is released.
public final class LoadedPlugin {
    /// The library the instance came from.
    public let library: PluginLibrary
    /// The plugin's name.
    public var name: String { library.name }
    /// The plugin's own version string.
    public var version: String { library.version }
    /// The ABI version the plugin was built for.
    public var abiVersion: UInt32 { library.abiVersion }
    /// Where the plugin's `process` runs.
    public var mode: PluginDeliveryMode { library.mode }
    /// The options the plugin declares.
    public var options: [PluginOptionInfo] { library.options }
    /// The option values the instance was created with: the user's, then defaults.
    public let optionValues: [(key: String, value: String)]
    /// The path the plugin was loaded from.
    public var path: String { library.path }

    private let consumer: PluginConsumer
    private let instance: PluginInstance

    /// Checks `options` against an opened library's declarations and creates an instance.
    ///
    /// Nothing is created unless every option is known and well-typed, so a typo never
    /// reaches the plugin. Call it again for another instance of the same library.
    public init(library: PluginLibrary, options: [(key: String, value: String)]) throws(PluginError) {
        let values = try library.resolveOptions(options)
        let instance = try PluginInstance(library: library, options: values)
        self.library = library
        self.optionValues = values
        self.instance = instance
        consumer =
            switch library.mode {
            case .realtime: .realtime(RealtimePluginConsumer(instance: instance))
            case .deferred: .deferred(DeferredPluginConsumer(instance: instance))
            }
    }

    /// Opens the plugin, checks its ABI and the specification's options, and creates an instance.
    public static func load(_ specification: PluginSpecification) throws(PluginError) -> LoadedPlugin {
        try LoadedPlugin(library: PluginLibrary.open(path: specification.path), options: specification.options)
    }

    /// The instance as a JackHost consumer of the plugin's mode. Every call returns the same
    /// consumer: there is one instance per loaded plugin.
    public func makeConsumer() -> PluginConsumer { consumer }

    /// The block size the plugin asks for, or nil for JACK's periods.
    public var preferredBlockFrames: Int? { library.preferredBlockFrames }
    /// The sample rate the plugin asks for, or nil for the server's.
    public var preferredSampleRate: Double? { library.preferredSampleRate }

    /// The latest value of every result the plugin has published (ABI 2), in declaration order.
    public func latestResults() -> [PublishedResult] { instance.services?.latestResults() ?? [] }

    /// Events that did not fit the plugin's mailbox (it had no block for a long while).
    public var lostEvents: Int { instance.mailbox?.lostEvents.load(ordering: .relaxed) ?? 0 }

    /// Routes every plugin's log lines (ABI 2 `log`): set once, before plugins load. The default
    /// prints `jackhost: plugin NAME: [level: ]message` on stderr.
    public static func setLogHandler(_ handler: @escaping @Sendable (_ plugin: String, _ level: PluginLogLevel, _ message: String) -> Void) {
        PluginHostServices.logHandler.withLock { $0 = handler }
    }

    /// The watchdog of a real-time plugin (nil for a deferred one, whose worker may take its time).
    public var watchdog: PluginWatchdog? {
        if case .realtime(let consumer) = consumer { return (consumer as? RealtimePluginConsumer)?.watchdog }
        return nil
    }

    /// What `jackhost plugin inspect` prints.
    public var inspectionText: String { library.inspectionText }
}

/// A loaded plugin as a JackHost consumer, by delivery mode.
public enum PluginConsumer {
    /// Add with ``CaptureHost/add(realtime:)``; runs in the process callback.
    case realtime(any RealtimeAudioConsumer)
    /// Add with ``CaptureHost/add(deferred:ringSeconds:)``; runs on its own worker.
    case deferred(any DeferredAudioConsumer)

    /// The consumer, whatever its mode.
    public var consumer: any AudioConsumer {
        switch self {
        case .realtime(let consumer): return consumer
        case .deferred(let consumer): return consumer
        }
    }
}

extension CaptureHost {
    /// Adds a loaded plugin's consumer in the plugin's mode. Call before ``start()``.
    /// - Parameter ringSeconds: For a deferred plugin, audio its ring holds; nil uses the configuration's default.
    public func add(_ plugin: LoadedPlugin, ringSeconds: Double? = nil) {
        switch plugin.makeConsumer() {
        case .realtime(let consumer): add(realtime: consumer)
        case .deferred(let consumer): add(deferred: consumer, ringSeconds: ringSeconds)
        }
    }
}
