import CJackHostPlugin
import Glibc
import JackHost
import Synchronization

/// What the host offers one plugin instance through ABI 2's `jackhost_host_t`: logging, the
/// stream's frame clock, and storage for the results it publishes.
///
/// The C struct and the state its functions reach are plain memory at fixed addresses, with no
/// reference counting on the way: `publish` and `frame_clock` are called from a real-time
/// plugin's `process` and must not retain, lock or allocate (one atomic operation each).
final class PluginHostServices: @unchecked Sendable {
    // @unchecked: `state` and `host` are allocated once and only read (or atomically written)
    // afterwards; they are freed in deinit, after the instance (their only user) is destroyed.

    /// How a plugin's log line reaches the user: set once by the front end before plugins load.
    /// The default prints `jackhost: plugin NAME: [level: ]message` on stderr.
    static let logHandler = Mutex<@Sendable (_ plugin: String, _ level: PluginLogLevel, _ message: String) -> Void>(
        { plugin, level, message in
            let line = "jackhost: plugin \(plugin): \(level.prefix)\(message)\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
        })

    /// The state the C functions reach through `host_data`: pointers only, no references.
    struct State {
        var resultCount: Int
        /// Each result's latest value, as `Double.bitPattern`.
        var values: UnsafeMutablePointer<Atomic<UInt64>>
        /// Whether each result has been published at all.
        var published: UnsafeMutablePointer<Atomic<Bool>>
        /// Frames of the stream before the block now being processed.
        var frameClock: UnsafeMutablePointer<Atomic<Int>>
        /// This object, unretained, for `log` (an ordinary-thread call).
        var owner: UnsafeMutableRawPointer?
    }

    let pluginName: String
    let results: [PluginResultInfo]
    private let state: UnsafeMutablePointer<State>
    /// The struct handed to `create2`; valid until this object goes away.
    let host: UnsafeMutablePointer<jackhost_host_t>

    init(pluginName: String, results: [PluginResultInfo]) {
        self.pluginName = pluginName
        self.results = results
        let count = results.count
        let values = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: max(count, 1))
        let published = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: max(count, 1))
        for index in 0..<max(count, 1) {
            (values + index).initialize(to: Atomic(0))
            (published + index).initialize(to: Atomic(false))
        }
        let clock = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
        clock.initialize(to: Atomic(0))
        state = .allocate(capacity: 1)
        state.initialize(to: State(resultCount: count, values: values, published: published, frameClock: clock, owner: nil))
        host = .allocate(capacity: 1)
        host.initialize(
            to: jackhost_host_t(
                struct_size: UInt32(MemoryLayout<jackhost_host_t>.size), reserved: 0, host_data: UnsafeMutableRawPointer(state),
                log: Self.log, frame_clock: Self.frameClock, publish: Self.publish))
        state.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        let count = max(state.pointee.resultCount, 1)
        state.pointee.values.deinitialize(count: count).deallocate()
        state.pointee.published.deinitialize(count: count).deallocate()
        state.pointee.frameClock.deinitialize(count: 1).deallocate()
        state.deinitialize(count: 1).deallocate()
        host.deinitialize(count: 1).deallocate()
    }

    /// **Real-time safe.** Sets the frame clock the plugin reads during its next calls.
    @inline(__always)
    func setFrameClock(_ frames: Int) {
        state.pointee.frameClock.pointee.store(frames, ordering: .relaxed)
    }

    /// The frame clock's storage, for the real-time path: storing through it touches no
    /// reference (valid as long as this object is).
    var frameClockStorage: UnsafeMutablePointer<Atomic<Int>> { state.pointee.frameClock }

    /// The latest value of every result published so far, in declaration order.
    func latestResults() -> [PublishedResult] {
        results.enumerated().compactMap { index, info in
            guard state.pointee.published[index].load(ordering: .acquiring) else { return nil }
            return PublishedResult(
                name: info.name, unit: info.unit, value: Double(bitPattern: state.pointee.values[index].load(ordering: .relaxed)))
        }
    }

    // MARK: The C functions

    private static let log: @convention(c) (UnsafePointer<jackhost_host_t>?, UInt32, UnsafePointer<CChar>?) -> Void = {
        host, level, message in
        guard let state = host?.pointee.host_data?.assumingMemoryBound(to: State.self), let owner = state.pointee.owner,
            let message
        else { return }
        let services = Unmanaged<PluginHostServices>.fromOpaque(owner).takeUnretainedValue()
        let handler = logHandler.withLock { $0 }
        handler(services.pluginName, PluginLogLevel(abiValue: level), String(cString: message))
    }

    private static let frameClock: @convention(c) (UnsafePointer<jackhost_host_t>?) -> UInt64 = { host in
        guard let state = host?.pointee.host_data?.assumingMemoryBound(to: State.self) else { return 0 }
        return UInt64(truncatingIfNeeded: state.pointee.frameClock.pointee.load(ordering: .relaxed))
    }

    private static let publish: @convention(c) (UnsafePointer<jackhost_host_t>?, UInt32, Double) -> Void = {
        host, index, value in
        guard let state = host?.pointee.host_data?.assumingMemoryBound(to: State.self),
            Int(index) < state.pointee.resultCount
        else { return }
        state.pointee.values[Int(index)].store(value.bitPattern, ordering: .relaxed)
        state.pointee.published[Int(index)].store(true, ordering: .releasing)
    }
}

/// One result's latest value.
public struct PublishedResult: Sendable, Equatable {
    /// The result's declared name.
    public let name: String
    /// Its unit, or empty.
    public let unit: String
    /// The latest value the plugin published.
    public let value: Double

    /// A result's value (a host forwarding results from another process builds these).
    public init(name: String, unit: String, value: Double) {
        self.name = name
        self.unit = unit
        self.value = value
    }
}

/// The level of a plugin's log line (ABI 2 `JACKHOST_PLUGIN_LOG_*`).
public enum PluginLogLevel: Sendable {
    case error, warning, info, debug

    init(abiValue: UInt32) {
        switch abiValue {
        case JACKHOST_PLUGIN_LOG_ERROR: self = .error
        case JACKHOST_PLUGIN_LOG_WARNING: self = .warning
        case JACKHOST_PLUGIN_LOG_INFO: self = .info
        default: self = .debug
        }
    }

    /// What precedes the message: "error: ", "warning: ", nothing for info, "debug: ".
    public var prefix: String {
        switch self {
        case .error: "error: "
        case .warning: "warning: "
        case .info: ""
        case .debug: "debug: "
        }
    }
}
