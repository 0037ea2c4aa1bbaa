// The types a plugin touches (AudioBlock, StreamFormat, the consumer protocols) come from
// JackHostTypes, re-exported so a plugin needs `import JackHostPluginSDK` only.
@_exported import JackHostTypes

/// A JackHost consumer that can be exported as a plugin through the C interface.
///
/// Adopt ``RealtimePlugin`` or ``DeferredPlugin``, not this protocol directly, then
/// export the type with one line in the plugin's module:
///
/// ```swift
/// @c(jackhost_plugin_descriptor)
/// public func jackhostPluginDescriptor() -> UnsafeRawPointer { exportPlugin(PeakFinder.self) }
/// ```
///
/// The SDK owns the C glue: it builds the descriptor from the static properties below,
/// checks and parses option values, turns the host's C calls into ``AudioConsumer``
/// calls, and turns thrown errors into the host's one-line messages.
public protocol JackHostPlugin: AudioConsumer {
    /// The plugin's name, shown by `jackhost plugin inspect`, in reports and in errors.
    static var name: String { get }
    /// The plugin's own version, such as "1.0.0".
    static var version: String { get }
    /// The options users may give as `PATH:name=value,...`. The default is none.
    static var options: [PluginOption] { get }
    /// The results the plugin publishes through ``PluginHost/result(_:)``. The default is none.
    static var results: [PluginResult] { get }
    /// Blocks of exactly this many frames, rebuffered by the host (the last of a run may be
    /// shorter), like `installTap(bufferSize:)`; nil (the default) takes JACK's periods.
    /// Deferred plugins only.
    static var blockFrames: Int? { get }
    /// The sample rate to receive, converted by the host with libsoxr; nil (the default)
    /// takes the server's rate. Deferred plugins only.
    static var sampleRate: Double? { get }

    /// Creates an instance. `options` holds only declared options, each checked against
    /// its kind, with defaults filled in. Throw to refuse; the error's description is what
    /// the user sees (throw ``PluginUsageError`` when the user's value is at fault: exit
    /// status 2). Runs on an ordinary thread, before any JACK work.
    init(options: PluginOptions) throws

    /// Creates an instance with the host's services (logging, the frame clock, results); the
    /// host calls this one. Implement it to use them (and keep ``init(options:)``, which has no
    /// default: in a final class, `convenience init(options: PluginOptions) throws { try
    /// self.init(options: options, host: .none) }`); the default calls
    /// ``init(options:)``.
    init(options: PluginOptions, host: PluginHost) throws
}

/// A plugin whose `process` runs inside JACK's real-time process callback; see
/// ``RealtimeAudioConsumer`` for what is forbidden there.
public protocol RealtimePlugin: JackHostPlugin, RealtimeAudioConsumer {}

/// A plugin whose `consume` runs on its own worker thread, fed through a lock-free ring;
/// see ``DeferredAudioConsumer``.
public protocol DeferredPlugin: JackHostPlugin, DeferredAudioConsumer {}

extension JackHostPlugin {
    /// No options.
    public static var options: [PluginOption] { [] }

    /// No results.
    public static var results: [PluginResult] { [] }

    /// JACK's periods as they come.
    public static var blockFrames: Int? { nil }

    /// The server's rate.
    public static var sampleRate: Double? { nil }

    /// Ignores the host and calls ``init(options:)``.
    public init(options: PluginOptions, host: PluginHost) throws { try self.init(options: options) }

    /// The plugin's ``name``.
    public var consumerName: String { Self.name }

    /// Creates an instance the way the host would: checks `options` against ``options``
    /// and fills in defaults first. For tests and for embedding the plugin directly.
    public static func make(options: [String: String] = [:], host: PluginHost = .none) throws -> Self {
        try Self(options: PluginOptions(options, declaredBy: Self.options), host: host)
    }
}
