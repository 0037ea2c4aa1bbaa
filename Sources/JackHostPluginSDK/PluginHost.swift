import CJackHostPlugin

/// What jackhost offers a plugin (plugin ABI 2): logging through the host, the stream's frame
/// clock, and results it shows and writes. A plugin receives it in
/// ``JackHostPlugin/init(options:host:)``.
///
/// ```swift
/// public init(options: PluginOptions, host: PluginHost) throws {
///     frequency = host.result("frequency.hz")        // declared in `static let results`
///     host.log("listening up to \(maximum) Hz")
/// }
/// public func process(_ block: AudioBlock) {
///     frequency.publish(estimate)                     // real-time safe: one atomic store
/// }
/// ```
///
/// Under a host that predates ABI 2, or in tests that give none, every call does nothing
/// (``none``).
public struct PluginHost: @unchecked Sendable {
    // @unchecked: the C struct is the host's, valid until the instance is destroyed, and its
    // functions are thread-safe as the ABI documents.
    let host: UnsafePointer<jackhost_host_t>?
    let resultNames: [String]

    /// The levels of ``log(_:level:)``.
    public enum LogLevel: UInt32, Sendable {
        case error = 0
        case warning = 1
        case info = 2
        case debug = 3
    }

    /// Wraps the C host handed to `create2`; `results` are the plugin's declared results.
    public init(_ host: UnsafePointer<jackhost_host_t>?, results: [PluginResult]) {
        self.host = host
        resultNames = results.map(\.name)
    }

    /// A host that offers nothing: logs go nowhere, the clock reads 0, results are dropped.
    public static let none = PluginHost(nil, results: [])

    /// Prints `message` on jackhost's stderr as `jackhost: plugin NAME: [level: ]message`.
    /// **Not real-time safe**: call it from `init`, `prepare`, `finish`, or a deferred plugin's `consume`.
    public func log(_ message: String, level: LogLevel = .info) {
        guard let host, let log = host.pointee.log else { return }
        message.withCString { log(host, level.rawValue, $0) }
    }

    /// Frames of the stream before the block being processed (or, between blocks, the next
    /// one), including frames this plugin lost to drops. **Real-time safe.**
    public var frameClock: UInt64 {
        guard let host, let clock = host.pointee.frame_clock else { return 0 }
        return clock(host)
    }

    /// The handle for publishing one declared result; look it up once, in `init`.
    /// A name the plugin did not declare gives a handle that publishes nothing.
    public func result(_ name: String) -> PluginResultHandle {
        PluginResultHandle(host: host, index: resultNames.firstIndex(of: name).map { UInt32($0) })
    }
}

/// Publishes one declared result's latest value: jackhost shows it in the meter display and
/// the summary, and writes it with `--results FILE`.
public struct PluginResultHandle: @unchecked Sendable {
    // @unchecked: see PluginHost.
    let host: UnsafePointer<jackhost_host_t>?
    let index: UInt32?

    /// Publishes `value`. **Real-time safe**: one atomic store in the host.
    @inline(__always)
    public func publish(_ value: Double) {
        guard let host, let index, let publish = host.pointee.publish else { return }
        publish(host, index, value)
    }
}

/// One named value a plugin publishes, declared in ``JackHostPlugin/results``.
public struct PluginResult: Sendable, Equatable {
    /// Dotted name, e.g. `loudness.momentary`: letters, digits, '.', '-' and '_'.
    public let name: String
    /// The unit shown next to the value, e.g. `LUFS`; empty for none.
    public let unit: String
    /// One line for `jackhost plugin inspect`.
    public let help: String

    /// Declares a result.
    public init(_ name: String, unit: String = "", help: String = "") {
        self.name = name
        self.unit = unit
        self.help = help
    }
}

/// Throw this from `init` to refuse an option value the user gave: jackhost reports it as
/// the user's mistake (exit status 2), not as a broken plugin (status 1).
///
/// ```swift
/// guard maximum < 24000 else { throw PluginUsageError("max-frequency must be below 24000 Hz") }
/// ```
public struct PluginUsageError: Error, CustomStringConvertible, Sendable {
    /// The one-line reason the user sees.
    public let description: String

    /// A refusal with its reason.
    public init(_ description: String) { self.description = description }
}
