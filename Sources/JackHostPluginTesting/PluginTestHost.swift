import CJackHostPlugin
import JackHostPluginSDK
import Synchronization

/// A host for plugin tests: hands a plugin the services of ABI 2 (``PluginHost``) and records
/// what the plugin does with them, the results it publishes and the lines it logs, as jackhost
/// would show them.
///
/// ```swift
/// let host = PluginTestHost(results: LoudnessMeter.results)
/// let meter = try LoudnessMeter.make(options: ["output": path], host: host.pluginHost)
/// try PluginTestDriver().run(meter, channels: [PluginTestAudio.sine(frequency: 997, frames: 96000)])
/// XCTAssertEqual(try XCTUnwrap(host.latest("momentary")), -3.01, accuracy: 0.01)
/// ```
///
/// Keep the test host alive for as long as the plugin may call it: ``pluginHost`` does not
/// own it, just as a plugin does not own jackhost. The frame clock reads 0.
public final class PluginTestHost: @unchecked Sendable {
    // @unchecked: the storage is allocated once; results are atomics (publish is called from
    // real-time sections, which must not lock), the log is behind a Mutex (never real-time).

    /// The results the plugin declared, in the order `publish` numbers them.
    public let results: [PluginResult]
    private let values: UnsafeMutablePointer<Atomic<UInt64>>
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    private let host: UnsafeMutablePointer<jackhost_host_t>
    private let logged = Mutex<[String]>([])

    /// Creates a host that accepts the `results` a plugin declares (its static `results`).
    public init(results: [PluginResult]) {
        self.results = results
        let capacity = max(results.count, 1)
        values = .allocate(capacity: capacity)
        counts = .allocate(capacity: capacity)
        for index in 0..<capacity {
            (values + index).initialize(to: Atomic(0))
            (counts + index).initialize(to: Atomic(0))
        }
        host = .allocate(capacity: 1)
        host.initialize(
            to: jackhost_host_t(
                struct_size: UInt32(MemoryLayout<jackhost_host_t>.size), reserved: 0, host_data: nil,
                log: Self.log, frame_clock: { _ in 0 }, publish: Self.publish))
        host.pointee.host_data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        let capacity = max(results.count, 1)
        values.deinitialize(count: capacity).deallocate()
        counts.deinitialize(count: capacity).deallocate()
        host.deinitialize(count: 1).deallocate()
    }

    /// What to hand the plugin: `Plugin.make(options:host:)` or `init(options:host:)`.
    public var pluginHost: PluginHost { PluginHost(UnsafePointer(host), results: results) }

    /// The latest value published for the result `name`; nil if it was never published.
    public func latest(_ name: String) -> Double? {
        guard let index = results.firstIndex(where: { $0.name == name }), counts[index].load(ordering: .acquiring) > 0 else {
            return nil
        }
        return Double(bitPattern: values[index].load(ordering: .relaxed))
    }

    /// How many times the result `name` was published (0 for a name the plugin did not declare).
    public func publishCount(_ name: String) -> Int {
        guard let index = results.firstIndex(where: { $0.name == name }) else { return 0 }
        return counts[index].load(ordering: .acquiring)
    }

    /// Every line the plugin logged, as `level: message` (`info: listening up to 2000 Hz`).
    public var log: [String] { logged.withLock { $0 } }

    // MARK: The C functions

    private static func owner(_ host: UnsafePointer<jackhost_host_t>?) -> PluginTestHost? {
        guard let data = host?.pointee.host_data else { return nil }
        return Unmanaged<PluginTestHost>.fromOpaque(data).takeUnretainedValue()
    }

    private static let log: @convention(c) (UnsafePointer<jackhost_host_t>?, UInt32, UnsafePointer<CChar>?) -> Void = {
        host, level, message in
        guard let owner = owner(host), let message else { return }
        let name = PluginHost.LogLevel(rawValue: level).map { "\($0)" } ?? "level \(level)"
        let line = "\(name): \(String(cString: message))"
        owner.logged.withLock { $0.append(line) }
    }

    private static let publish: @convention(c) (UnsafePointer<jackhost_host_t>?, UInt32, Double) -> Void = {
        host, index, value in
        guard let owner = owner(host), Int(index) < owner.results.count else { return }
        owner.values[Int(index)].store(value.bitPattern, ordering: .relaxed)
        owner.counts[Int(index)].add(1, ordering: .releasing)
    }
}
