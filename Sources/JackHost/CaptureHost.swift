import Foundation
import Synchronization

/// The host engine, JackHost's RemoteIO unit with input enabled and output disabled.
///
/// A host opens a JACK client, registers one input port per channel (`in_1` …
/// `in_N`, with pretty-name and order metadata), connects them, and hands every
/// process cycle to its consumers in the canonical non-interleaved layout.
///
/// ```swift
/// let host = CaptureHost(configuration: .init(serverName: "studio"))
/// host.add(realtime: myMeter)
/// host.add(deferred: myRecorder)
/// try host.start()
/// // ...
/// host.stop()
/// ```
public final class CaptureHost: @unchecked Sendable {
    /// How the host's inputs are wired after activation.
    public enum Connections: Sendable, Equatable {
        /// Physical capture port i feeds `in_i` (the default).
        case physicalCapture
        /// Output ports matching these patterns, in order, feed `in_1`, `in_2`, …
        /// A pattern is an exact port name or a JACK (POSIX extended) regular expression.
        case patterns([String])
        /// Leave the inputs unconnected, for patching by hand.
        case none
    }

    /// Everything a host needs to know before it starts.
    public struct Configuration: Sendable {
        /// The JACK client name; port names are `CLIENT:in_N`.
        public var clientName: String
        /// The server to use, or nil for the default server.
        public var serverName: String?
        /// The number of inputs; nil follows the server's physical capture port count.
        public var channelCount: Int?
        /// How inputs are connected after activation.
        public var connections: Connections
        /// Seconds of audio each deferred consumer's ring holds before it drops.
        public var deferredRingSeconds: Double
        /// Deliver exactly this many frames, then stop delivering (``CaptureHost/isComplete``
        /// turns true). Nil delivers until ``CaptureHost/stop()``.
        public var frameLimit: Int?

        /// Creates a configuration; every parameter has a sensible default.
        public init(clientName: String = "jackhost", serverName: String? = nil, channelCount: Int? = nil,
                    connections: Connections = .physicalCapture, deferredRingSeconds: Double = 2.0,
                    frameLimit: Int? = nil) {
            self.frameLimit = frameLimit
            self.clientName = clientName
            self.serverName = serverName
            self.channelCount = channelCount
            self.connections = connections
            self.deferredRingSeconds = deferredRingSeconds
        }
    }

    /// The configuration the host was created with.
    public let configuration: Configuration
    /// The session as read when the host started.
    public private(set) var session: AudioSessionInfo?
    /// The format consumers were prepared with.
    public private(set) var format: StreamFormat?
    /// Full names of the host's input ports, in order.
    public private(set) var inputPortNames: [String] = []
    /// Connections that failed after activation, each with its reason.
    public private(set) var connectionFailures: [JackError] = []
    /// Called on the host's monitor thread for every session event (after consumers are told).
    public var onEvent: (@Sendable (AudioSessionEvent) -> Void)?

    private var realtimeConsumers: [any RealtimeAudioConsumer] = []
    private var deferredConsumers: [(consumer: any DeferredAudioConsumer, ringSeconds: Double?)] = []
    private var client: JackClient?
    private var engine: CaptureEngine?
    private var runners: [DeferredConsumerRunner] = []
    private var monitor: Thread?
    private let monitorStop = Atomic<Bool>(false)
    private let monitorDone = DispatchSemaphore(value: 0)
    private let lostFlag = Atomic<Bool>(false)

    /// Creates a host; nothing touches JACK until ``start()``.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Adds a consumer that runs inside the process callback. Call before ``start()``.
    public func add(realtime consumer: some RealtimeAudioConsumer) {
        realtimeConsumers.append(consumer)
    }

    /// Adds a consumer fed on its own worker thread through its own ring. Call before ``start()``.
    /// - Parameter ringSeconds: Audio the ring holds; nil uses the configuration's default.
    public func add(deferred consumer: some DeferredAudioConsumer, ringSeconds: Double? = nil) {
        deferredConsumers.append((consumer, ringSeconds))
    }

    /// Adds a closure tap (a deferred consumer) and returns it.
    @discardableResult
    public func installTap(name: String = "tap", _ block: @escaping (AudioBlock) -> Void) -> DeferredTap {
        let tap = DeferredTap(name: name, block: block)
        add(deferred: tap)
        return tap
    }

    /// Opens the client, prepares consumers, registers and connects ports, and activates.
    ///
    /// Problems found before activation (no server, bad channel count, a pattern that
    /// matches nothing, a consumer that refuses the format) throw before the JACK graph
    /// is touched. Connections that fail after activation do not throw; they are listed in
    /// ``connectionFailures``.
    public func start() throws {
        precondition(client == nil, "CaptureHost.start() called twice")
        let client = try JackClient(name: configuration.clientName, server: configuration.serverName)
        var registered: [JackPort] = []
        var prepared: [any AudioConsumer] = []
        do {
            let session = AudioSessionInfo(client: client)
            let channels = configuration.channelCount ?? session.inputNumberOfChannels
            if configuration.channelCount == nil && channels == 0 {
                throw JackError.noCapturePorts(server: configuration.serverName)
            }
            guard (1...JackError.maximumChannelCount).contains(channels) else {
                throw JackError.invalidChannelCount(channels)
            }
            let sources = try resolveSources(client: client, session: session, channels: channels)
            let format = StreamFormat(sampleRate: session.sampleRate, channelCount: channels)
            for consumer in realtimeConsumers as [any AudioConsumer] + deferredConsumers.map({ $0.consumer }) {
                do {
                    try consumer.prepare(format: format)
                } catch {
                    throw CaptureHostError.consumerRejectedFormat(consumer: consumer.consumerName,
                                                                  reason: String(describing: error))
                }
                prepared.append(consumer)
            }
            for index in 1...channels {
                let port = try client.registerAudioInput(named: "in_\(index)")
                registered.append(port)
                client.setProperty(on: port, key: JackClient.prettyNameKey, value: "Input \(index)")
                client.setProperty(on: port, key: JackClient.orderKey, value: String(index), type: JackClient.integerType)
            }
            // Poll at a quarter period, clamped to 0.5 ms ... 5 ms.
            let period = Double(session.bufferFrames) / max(session.sampleRate, 1)
            let poll = UInt32(min(max(period / 4, 0.0005), 0.005) * 1_000_000)
            let runners = deferredConsumers.map { entry in
                let seconds = entry.ringSeconds ?? configuration.deferredRingSeconds
                let frames = max(Int(seconds * session.sampleRate), 8 * max(session.bufferFrames, 1024))
                return DeferredConsumerRunner(consumer: entry.consumer, channelCount: channels,
                                              ringFrames: frames, pollMicroseconds: poll)
            }
            let engine = CaptureEngine(client: client, ports: registered, realtime: realtimeConsumers, deferred: runners,
                                       frameLimit: configuration.frameLimit ?? .max)
            engine.installCallbacks()
            runners.forEach { $0.startWorker() }
            self.client = client
            self.engine = engine
            self.runners = runners
            self.session = session
            self.format = format
            self.inputPortNames = registered.map { client.fullName(of: $0) }
            do {
                try client.activate()
            } catch {
                runners.forEach { $0.stopWorker() }
                throw error
            }
            connectionFailures = []
            for (index, source) in sources.enumerated() where index < inputPortNames.count {
                do { try client.connect(source, to: inputPortNames[index]) } catch { connectionFailures.append(error) }
            }
            startMonitor()
        } catch {
            prepared.forEach { $0.finish() }
            registered.forEach { client.unregister($0) }
            client.close()
            self.client = nil
            self.engine = nil
            self.runners = []
            throw error
        }
    }

    /// Finds the output ports that feed the inputs, before anything is registered.
    private func resolveSources(client: JackClient, session: AudioSessionInfo, channels: Int) throws(JackError) -> [String] {
        switch configuration.connections {
        case .none:
            return []
        case .physicalCapture:
            return Array(session.capturePorts.prefix(channels))
        case .patterns(let patterns):
            var sources: [String] = []
            for pattern in patterns {
                let matches: [String]
                if client.portExists(pattern) {
                    matches = [pattern]
                } else {
                    matches = client.audioOutputPortNames(matching: pattern)
                }
                if matches.isEmpty { throw JackError.patternMatchedNothing(pattern: pattern) }
                sources.append(contentsOf: matches)
            }
            return sources
        }
    }

    /// Stops delivery, drains every deferred consumer's ring, calls `finish()` on every
    /// consumer, and closes the client. Safe to call more than once.
    public func stop() {
        guard let client else { return }
        stopMonitor()
        if !lostFlag.load(ordering: .acquiring) { client.deactivate() }
        runners.forEach { $0.stopWorker() }
        realtimeConsumers.forEach { $0.finish() }
        deferredConsumers.forEach { $0.consumer.finish() }
        client.close()
        self.client = nil
    }

    /// Whether ``Configuration/frameLimit`` frames have been delivered.
    public var isComplete: Bool { engine?.limitReached.load(ordering: .acquiring) ?? false }

    /// Whether the server went away while the host was running.
    public var isServerLost: Bool { lostFlag.load(ordering: .acquiring) }

    /// Counters since ``start()``.
    public var statistics: CaptureStatistics {
        guard let engine else { return CaptureStatistics() }
        return CaptureStatistics(
            cycles: engine.cycles.load(ordering: .relaxed),
            capturedFrames: engine.capturedFrames.load(ordering: .relaxed),
            xruns: engine.xruns.load(ordering: .relaxed),
            connectionFailures: connectionFailures.count,
            consumers: runners.map {
                .init(name: $0.consumer.consumerName,
                      deliveredFrames: $0.deliveredFrames.load(ordering: .relaxed),
                      droppedFrames: $0.droppedFrames.load(ordering: .relaxed))
            })
    }

    /// The client the host runs on, for queries such as connections. Nil when stopped.
    public var jackClient: JackClient? { client }

    // MARK: Monitor (ordinary thread)

    /// Watches the engine's flags and turns them into events for consumers, off the real-time thread.
    private func startMonitor() {
        guard let engine else { return }
        monitorStop.store(false, ordering: .relaxed)
        let consumers = UncheckedSendable(realtimeConsumers as [any AudioConsumer] + deferredConsumers.map { $0.consumer })
        let thread = Thread { [self] in
            var lastXruns = 0
            var lastBufferSize = engine.bufferSize.load(ordering: .relaxed)
            var lastRate = engine.sampleRate.load(ordering: .relaxed)
            func emit(_ event: AudioSessionEvent) {
                consumers.value.forEach { $0.handle(event) }
                self.onEvent?(event)
            }
            while !monitorStop.load(ordering: .acquiring) {
                if engine.serverLost.load(ordering: .acquiring) && !lostFlag.load(ordering: .relaxed) {
                    lostFlag.store(true, ordering: .releasing)
                    emit(.serverLost)
                }
                let xruns = engine.xruns.load(ordering: .relaxed)
                if xruns != lastXruns { lastXruns = xruns; emit(.xrun(total: xruns)) }
                let size = engine.bufferSize.load(ordering: .relaxed)
                if size != lastBufferSize { lastBufferSize = size; emit(.bufferSizeChanged(frames: size)) }
                let rate = engine.sampleRate.load(ordering: .relaxed)
                if rate != lastRate { lastRate = rate; emit(.sampleRateChanged(Double(rate))) }
                usleep(20_000)
            }
            monitorDone.signal()
        }
        thread.name = "jackhost-monitor"
        monitor = thread
        thread.start()
    }

    private func stopMonitor() {
        guard monitor != nil else { return }
        monitorStop.store(true, ordering: .releasing)
        monitorDone.wait()
        monitor = nil
    }
}

/// Errors from the host that are not JACK's.
public enum CaptureHostError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A consumer's `prepare(format:)` threw.
    case consumerRejectedFormat(consumer: String, reason: String)

    /// One line that names the problem.
    public var description: String {
        switch self {
        case .consumerRejectedFormat(let consumer, let reason):
            return "consumer \"\(consumer)\" refused the stream format: \(reason)"
        }
    }
}

/// Counters a host keeps; every lost frame and xrun shows up here.
public struct CaptureStatistics: Sendable, Equatable {
    /// Per deferred consumer: what reached it and what its full ring dropped.
    public struct Consumer: Sendable, Equatable {
        /// The consumer's name.
        public var name: String
        /// Frames delivered to `consume`.
        public var deliveredFrames: Int
        /// Frames lost because the consumer's ring was full.
        public var droppedFrames: Int
    }
    /// Process cycles run.
    public var cycles = 0
    /// Frames captured by the process callback.
    public var capturedFrames = 0
    /// Xruns the server reported.
    public var xruns = 0
    /// Connections that failed.
    public var connectionFailures = 0
    /// Deferred consumers' counters, in the order they were added.
    public var consumers: [Consumer] = []
}

/// Carries a value across a thread hand-off whose ordering the host guarantees
/// itself (thread start and semaphore waits), where the compiler cannot see it.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
