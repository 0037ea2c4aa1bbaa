import Dispatch
import FoundationEssentials
import Glibc
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
        /// After losing the server, reconnect with backoff (0.1 s doubling to 2 s) and restore
        /// ports and connections; when false, ``CaptureHost/isServerLost`` turns true instead.
        public var reconnect: Bool
        /// How long, after a reconnect, to keep retrying connections whose source has not reappeared.
        public var restoreTimeout: Double
        /// Time every process callback into ``CaptureHost/callbackTimer``.
        public var measureCallbackTime: Bool
        /// Seconds ``CaptureHost/stop(drainLimit:abandonWhen:)`` and a server loss wait for
        /// deferred consumers to drain their rings; what is still queued then is given up and
        /// counted in ``CaptureStatistics/Consumer/abandonedFrames``.
        public var drainLimit: Double
        /// Deliver exactly this many frames, then stop delivering (``CaptureHost/isComplete``
        /// turns true). Nil delivers until ``CaptureHost/stop()``.
        public var frameLimit: Int?
        /// Deliver this many seconds of audio, then stop, like ``frameLimit``; the seconds become
        /// frames (`(seconds * rate).rounded()`) at the sample rate of the first connection.
        /// Ignored when ``frameLimit`` is set.
        public var durationLimit: Double?

        /// Creates a configuration; every parameter has a sensible default.
        public init(clientName: String = "jackhost", serverName: String? = nil, channelCount: Int? = nil,
                    connections: Connections = .physicalCapture, deferredRingSeconds: Double = 2.0,
                    frameLimit: Int? = nil, durationLimit: Double? = nil, reconnect: Bool = false,
                    restoreTimeout: Double = 10, measureCallbackTime: Bool = false, drainLimit: Double = 5) {
            self.durationLimit = durationLimit
            self.drainLimit = drainLimit
            self.measureCallbackTime = measureCallbackTime
            self.reconnect = reconnect
            self.restoreTimeout = restoreTimeout
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
    /// The session as read when the host last (re)connected; kept after ``stop()``.
    public var session: AudioSessionInfo? { lock.withLock { current?.session ?? lastSession } }
    /// The format consumers are prepared with.
    public var format: StreamFormat? { lock.withLock { current?.format ?? lastFormat } }
    /// Full names of the host's input ports, in order.
    public var inputPortNames: [String] { lock.withLock { current?.portNames ?? [] } }
    /// Connections that failed, each with its reason (initial wiring and restores after a reconnect).
    public var connectionFailures: [JackError] { lock.withLock { failures } }
    /// How the channel count and the sources found at ``start()`` fit together.
    public var wiring: InputWiring { lock.withLock { startWiring } }
    /// Called on the host's monitor thread for every session event (after consumers are told).
    public var onEvent: (@Sendable (AudioSessionEvent) -> Void)?

    private var realtimeConsumers: [any RealtimeAudioConsumer] = []
    private var deferredConsumers: [(consumer: any DeferredAudioConsumer, ringSeconds: Double?)] = []
    private var allConsumers: [any AudioConsumer] {
        realtimeConsumers as [any AudioConsumer] + deferredConsumers.map { $0.consumer }
    }

    /// Guards `current`, `failures`, the retired counters and `lastFormat`.
    private let lock = Lock()
    private var current: LiveSession?
    private var failures: [JackError] = []
    private var startWiring = InputWiring()
    private var lastFormat: StreamFormat?
    private var lastSession: AudioSessionInfo?
    private var retired = CaptureStatistics()
    /// The frame limit in force: ``Configuration/frameLimit``, or ``Configuration/durationLimit``
    /// in frames once the first connection told the sample rate; nil for no limit.
    private var resolvedFrameLimit: Int?
    /// Per deferred consumer, by its index in `deferredConsumers` (names need not be unique).
    private var retiredConsumers: [CaptureStatistics.Consumer] = []
    /// Indices of deferred consumers whose worker never came back from `consume` when a drain
    /// was abandoned: they get no more blocks, no `prepare` and no `finish` (it would race the call).
    private var unresponsiveConsumers: Set<Int> = []
    private var started = false
    /// Whether the monitor thread runs (touched only by start/stop, which callers serialise).
    private var monitorRunning = false
    private let monitorStop = Atomic<Bool>(false)
    private let monitorDone = DispatchSemaphore(value: 0)
    private let lostFlag = Atomic<Bool>(false)
    private let reconnections = Atomic<Int>(0)
    /// Each input's sources at the last check, restored after a reconnect (monitor thread).
    private var knownConnections: [[String]] = []
    /// Connections still to restore after a reconnect, retried until they appear (monitor thread).
    /// Sources that vanished while running (a netjack slave's driver restarting, a client
    /// quitting) wait with no deadline and are reconnected when they come back.
    private var pendingRestores: [(source: String, destination: String, deadline: Date)] = []
    /// Connections lost in the last two seconds whose source still existed (monitor thread).
    private var recentlyDisconnected: [(source: String, destination: String, until: Date)] = []

    /// Callback durations, when ``Configuration/measureCallbackTime`` is set; read after ``stop()``.
    public let callbackTimer: CallbackTimer?

    /// Creates a host; nothing touches JACK until ``start()``.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        callbackTimer = configuration.measureCallbackTime ? CallbackTimer() : nil
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
        precondition(!started, "CaptureHost.start() called twice")
        let client = try JackClient(name: configuration.clientName, server: configuration.serverName)
        var prepared: [any AudioConsumer] = []
        do {
            let session = AudioSessionInfo(client: client)
            let channels = try channelCount(for: session)
            let sources = try resolveSources(client: client, session: session, channels: channels)
            let format = StreamFormat(sampleRate: session.sampleRate, channelCount: channels)
            for consumer in allConsumers {
                try prepare(consumer, format: format)
                prepared.append(consumer)
            }
            let live = try LiveSession.open(client: client, session: session, format: format, host: self)
            lock.withLock {
                current = live
                lastFormat = format
                lastSession = session
            }
            let wired = InputWiring(sources: sources, inputs: live.portNames, connections: configuration.connections)
            lock.withLock { startWiring = wired }
            connect(sources.enumerated().filter { $0.offset < channels }.map { ($0.element, live.portNames[$0.offset]) },
                    using: live)
            knownConnections = live.snapshotConnections()
            started = true
            startMonitor()
        } catch {
            prepared.forEach { $0.finish() }
            client.close()
            throw error
        }
    }

    private func channelCount(for session: AudioSessionInfo) throws(JackError) -> Int {
        let channels = configuration.channelCount ?? session.inputNumberOfChannels
        if configuration.channelCount == nil && channels == 0 {
            throw JackError.noCapturePorts(server: configuration.serverName)
        }
        guard (1...JackError.maximumChannelCount).contains(channels) else {
            throw JackError.invalidChannelCount(channels)
        }
        return channels
    }

    private func prepare(_ consumer: any AudioConsumer, format: StreamFormat) throws {
        do {
            try consumer.prepare(format: format)
        } catch {
            throw CaptureHostError.consumerRejectedFormat(consumer: consumer.consumerName, reason: String(describing: error))
        }
    }

    /// Builds the per-session deferred runners (rings sized for this session's format).
    fileprivate func makeRunners(session: AudioSessionInfo, channels: Int) -> [DeferredConsumerRunner] {
        // Poll at a quarter period, clamped to 0.5 ms ... 5 ms.
        let period = Double(session.bufferFrames) / max(session.sampleRate, 1)
        let poll = UInt32(min(max(period / 4, 0.0005), 0.005) * 1_000_000)
        let skipped = lock.withLock { unresponsiveConsumers }
        return deferredConsumers.enumerated().filter { !skipped.contains($0.offset) }.map { index, entry in
            let seconds = entry.ringSeconds ?? configuration.deferredRingSeconds
            let frames = max(Int(seconds * session.sampleRate), 8 * max(session.bufferFrames, 1024))
            return DeferredConsumerRunner(consumer: entry.consumer, index: index, channelCount: channels,
                                          ringFrames: frames, pollMicroseconds: poll)
        }
    }

    fileprivate var realtimeConsumerList: [any RealtimeAudioConsumer] { realtimeConsumers }

    /// Frames still to deliver under the frame or duration limit (`Int.max` without one).
    /// `session` resolves a duration limit into frames on the first connection.
    fileprivate func remainingFrameLimit(session: AudioSessionInfo? = nil) -> Int {
        lock.withLock {
            if resolvedFrameLimit == nil {
                if let frames = configuration.frameLimit {
                    resolvedFrameLimit = frames
                } else if let seconds = configuration.durationLimit, let session {
                    resolvedFrameLimit = Int((seconds * session.sampleRate).rounded())
                }
            }
            guard let limit = resolvedFrameLimit else { return .max }
            return max(0, limit - retired.capturedFrames)
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
                    matches = try client.audioOutputPortNames(matching: pattern)
                }
                if matches.isEmpty { throw JackError.patternMatchedNothing(pattern: pattern) }
                sources.append(contentsOf: matches)
            }
            return sources
        }
    }

    /// Connects pairs, recording each failure by name.
    private func connect(_ pairs: [(String, String)], using live: LiveSession) {
        for (source, destination) in pairs {
            do { try live.client.connect(source, to: destination) } catch { lock.withLock { failures.append(error) } }
        }
    }

    /// Stops delivery, drains every deferred consumer's ring, calls `finish()` on every
    /// consumer, and closes the client. Safe to call more than once.
    ///
    /// - Parameters:
    ///   - drainLimit: Seconds to let deferred consumers work through what is queued; nil uses
    ///     ``Configuration/drainLimit``. What is left then is given up and counted in
    ///     ``CaptureStatistics/Consumer/abandonedFrames``; a consumer that does not return from
    ///     `consume` within a further quarter second is left behind, marked
    ///     ``CaptureStatistics/Consumer/isUnresponsive``, and not finished.
    ///   - abandonWhen: Polled while draining; returning true gives up at once (for example,
    ///     a second Ctrl-C).
    public func stop(drainLimit: Double? = nil, abandonWhen: () -> Bool = { false }) {
        guard started else { return }
        started = false
        stopMonitor()
        for pending in pendingRestores {
            lock.withLock { failures.append(.noSuchPort(pending.source)) }
        }
        pendingRestores = []
        if let live = lock.withLock({ current }) {
            retire(live, serverAlive: !live.engine.serverLost.load(ordering: .acquiring),
                   drainLimit: drainLimit ?? configuration.drainLimit, abandonWhen: abandonWhen)
        }
        finishResponsiveConsumers()
    }

    /// Calls `finish()` on every consumer except those left inside `consume`.
    private func finishResponsiveConsumers() {
        let skipped = lock.withLock { unresponsiveConsumers }
        realtimeConsumers.forEach { $0.finish() }
        for (index, entry) in deferredConsumers.enumerated() where !skipped.contains(index) { entry.consumer.finish() }
    }

    /// Ends a live session: deactivates (if the server is still there), drains the workers
    /// within the drain limit, folds its counters into the totals, and closes the client.
    private func retire(_ live: LiveSession, serverAlive: Bool, drainLimit: Double? = nil,
                        abandonWhen: () -> Bool = { false }) {
        if serverAlive {
            live.engine.deliveryStopped.store(true, ordering: .releasing)
            live.client.deactivate()
        }
        live.runners.forEach { $0.requestStop() }
        let seconds = min(max(drainLimit ?? configuration.drainLimit, 0), 86_400)
        let deadline = DispatchTime.now() + .milliseconds(Int(seconds * 1000))
        var unresponsive: [Int] = []
        for runner in live.runners where !runner.awaitWorker(until: deadline, abandonWhen: abandonWhen) {
            unresponsive.append(runner.index)
        }
        let stats = live.statistics(unresponsive: Set(unresponsive))
        lock.withLock {
            retired.cycles += stats.cycles
            retired.capturedFrames += stats.capturedFrames
            retired.xruns += stats.xruns
            retired.timelineGaps += stats.timelineGaps
            retired.timelineGapFrames += stats.timelineGapFrames
            retiredConsumers = CaptureStatistics.Consumer.folded(retiredConsumers, with: stats.consumers,
                                                                 names: deferredConsumers.map { $0.consumer.consumerName })
            unresponsiveConsumers.formUnion(unresponsive)
            current = nil
        }
        live.client.close(serverAlive: serverAlive)
    }

    /// Whether the ``Configuration/frameLimit`` or ``Configuration/durationLimit`` has been delivered.
    public var isComplete: Bool {
        guard configuration.frameLimit != nil || configuration.durationLimit != nil else { return false }
        return lock.withLock { current?.engine.limitReached.load(ordering: .acquiring) ?? false }
            || remainingFrameLimit() == 0
    }

    /// Whether the server went away and the host gave up on it (no reconnect configured).
    public var isServerLost: Bool { lostFlag.load(ordering: .acquiring) }

    /// How many times the host reconnected after losing the server.
    public var reconnectCount: Int { reconnections.load(ordering: .relaxed) }

    /// Counters since ``start()``, summed over every reconnection.
    public var statistics: CaptureStatistics {
        lock.withLock {
            var total = retired
            total.connectionFailures = failures.count
            let live = current?.statistics()
            if let live {
                total.cycles += live.cycles
                total.capturedFrames += live.capturedFrames
                total.xruns += live.xruns
                total.timelineGaps += live.timelineGaps
                total.timelineGapFrames += live.timelineGapFrames
            }
            total.consumers = CaptureStatistics.Consumer.folded(retiredConsumers, with: live?.consumers ?? [],
                                                                names: deferredConsumers.map { $0.consumer.consumerName })
            return total
        }
    }

    /// The client the host runs on, for queries such as connections. Nil when stopped or disconnected.
    public var jackClient: JackClient? { lock.withLock { current?.client } }

    // MARK: Monitor and supervisor (ordinary thread)

    /// Watches the engine's flags and turns them into events, tracks connections, and
    /// handles server loss: it closes the dead client, drains and tells consumers, and
    /// (with ``Configuration/reconnect``) reconnects with backoff.
    private func startMonitor() {
        monitorStop.store(false, ordering: .relaxed)
        monitorRunning = true
        WorkerThread.start(name: "jackhost-monitor") { [self] in
            var lastXruns = 0
            var lastBufferSize = 0
            var lastRate = 0
            var watched: ObjectIdentifier?
            var tick = 0
            while !monitorStop.load(ordering: .acquiring) {
                guard let live = lock.withLock({ current }) else { break }
                let engine = live.engine
                if watched != ObjectIdentifier(engine) {
                    watched = ObjectIdentifier(engine)
                    lastXruns = 0
                    lastBufferSize = engine.bufferSize.load(ordering: .relaxed)
                    lastRate = engine.sampleRate.load(ordering: .relaxed)
                }
                if engine.serverLost.load(ordering: .acquiring) {
                    if !handleServerLoss(live) { break }
                    continue
                }
                let xruns = engine.xruns.load(ordering: .relaxed)
                if xruns != lastXruns {
                    lastXruns = xruns
                    emit(.xrun(total: statistics.xruns))
                }
                let size = engine.bufferSize.load(ordering: .relaxed)
                if size != lastBufferSize { lastBufferSize = size; emit(.bufferSizeChanged(frames: size)) }
                let rate = engine.sampleRate.load(ordering: .relaxed)
                if rate != lastRate { lastRate = rate; emit(.sampleRateChanged(Double(rate))) }
                // Also every half second: jack2 sends no connection callback when a source
                // client unregisters its ports before it deactivates (the close order jackhost
                // itself uses), so the flag alone would miss that the source went away.
                tick &+= 1
                if engine.connectionsChanged.exchange(false, ordering: .acquiring) || tick % 25 == 0 {
                    trackConnections(live)
                }
                // Also re-count now and then: a registration callback can arrive before the
                // port list reflects the change, and the flag is then already consumed.
                if engine.portsChanged.exchange(false, ordering: .acquiring) || tick % 25 == 0,
                   configuration.channelCount == nil, followRouteChange(live) {
                    continue
                }
                classifyRecentDisconnects(live)
                retryPendingRestores(live)
                usleep(20_000)
            }
            monitorDone.signal()
        }
    }

    private func emit(_ event: AudioSessionEvent) {
        allConsumers.forEach { $0.handle(event) }
        onEvent?(event)
    }

    /// Returns false when the monitor should exit (no reconnect, or stop requested).
    private func handleServerLoss(_ live: LiveSession) -> Bool {
        let restore = knownConnections
        retire(live, serverAlive: false)
        // Workers are drained: consumers see the event with no block in flight.
        emit(.serverLost)
        guard configuration.reconnect else {
            lostFlag.store(true, ordering: .releasing)
            return false
        }
        var delay = 0.1
        while !monitorStop.load(ordering: .acquiring) {
            if let client = try? JackClient(name: configuration.clientName, server: configuration.serverName) {
                if reopen(client: client, restoring: restore) { return true }
            }
            var waited = 0.0
            while waited < delay && !monitorStop.load(ordering: .acquiring) { usleep(20_000); waited += 0.02 }
            delay = min(delay * 2, 2.0)
        }
        return false
    }

    /// Rebuilds the session on a fresh client after a server loss.
    private func reopen(client: JackClient, restoring restore: [[String]], announce: Bool = true) -> Bool {
        let session = AudioSessionInfo(client: client)
        guard let channels = try? channelCount(for: session) else {
            client.close()
            return false
        }
        let format = StreamFormat(sampleRate: session.sampleRate, channelCount: channels)
        let previous = lock.withLock { lastFormat }
        if previous != format {
            // A different rate or channel count: consumers start over with the new format
            // (the recorder rotates to a new file), like a route change on iOS.
            finishResponsiveConsumers()
            let skipped = lock.withLock { unresponsiveConsumers }
            let responsive = realtimeConsumers as [any AudioConsumer]
                + deferredConsumers.enumerated().filter { !skipped.contains($0.offset) }.map { $0.element.consumer }
            do {
                for consumer in responsive { try prepare(consumer, format: format) }
            } catch {
                lock.withLock { failures.append(.serverLost(reason: "after reconnecting: \(error)")) }
                client.close()
                lostFlag.store(true, ordering: .releasing)
                monitorStop.store(true, ordering: .releasing)
                return false
            }
            if previous?.channelCount != channels { emit(.routeChanged(channelCount: channels)) }
        }
        guard let live = try? LiveSession.open(client: client, session: session, format: format, host: self) else {
            client.close()
            return false
        }
        lock.withLock {
            current = live
            lastFormat = format
            lastSession = session
        }
        let deadline = Date().addingTimeInterval(configuration.restoreTimeout)
        pendingRestores = []
        for (index, sources) in restore.enumerated() where index < live.portNames.count {
            for source in sources { pendingRestores.append((source, live.portNames[index], deadline)) }
        }
        // Inputs that are new after a route change follow the automatic wiring.
        if configuration.connections == .physicalCapture && live.portNames.count > restore.count {
            for index in restore.count..<min(live.portNames.count, session.capturePorts.count) {
                pendingRestores.append((session.capturePorts[index], live.portNames[index], deadline))
            }
        }
        retryPendingRestores(live)
        if announce {
            reconnections.add(1, ordering: .relaxed)
            emit(.serverRestored)
        }
        return true
    }

    /// Re-reads connections. A connection that disappeared because its source port vanished
    /// (rather than because someone disconnected it) is kept, to be restored when the port returns.
    ///
    /// A client that quits first deactivates (its connections go while its ports still exist)
    /// and then closes (its ports go). So a lost connection is watched for two seconds: if its
    /// source vanishes meanwhile, it is restored when the source returns.
    private func trackConnections(_ live: LiveSession) {
        let now = live.snapshotConnections()
        for (index, previous) in knownConnections.enumerated() where index < now.count {
            for source in previous where !now[index].contains(source) {
                recentlyDisconnected.append((source, live.portNames[index], Date().addingTimeInterval(2)))
            }
        }
        knownConnections = now
    }

    /// Moves lost connections whose source vanished into the restore list; forgets the rest after the grace period.
    private func classifyRecentDisconnects(_ live: LiveSession) {
        guard !recentlyDisconnected.isEmpty else { return }
        let now = Date()
        recentlyDisconnected = recentlyDisconnected.filter { entry in
            if !live.client.portExists(entry.source) {
                pendingRestores.append((entry.source, entry.destination, .distantFuture))
                return false
            }
            return now < entry.until
        }
    }

    /// In automatic channel mode, follows a change in the number of physical capture ports
    /// while the server keeps running: rebuilds the session with the new count. Returns true
    /// when it rebuilt (or gave up), so the monitor re-reads the current session.
    private func followRouteChange(_ live: LiveSession) -> Bool {
        guard configuration.channelCount == nil else { return false }
        let count = live.client.physicalCapturePorts().count
        // Zero ports is a driver restarting (netjack slave without master): wait for them.
        guard count > 0, count != live.format.channelCount else { return false }
        var restore = live.snapshotConnections()
        for pending in pendingRestores {
            if let index = live.portNames.firstIndex(of: pending.destination) { restore[index].append(pending.source) }
        }
        retire(live, serverAlive: true)
        while !monitorStop.load(ordering: .acquiring) {
            if let client = try? JackClient(name: configuration.clientName, server: configuration.serverName),
               reopen(client: client, restoring: restore, announce: false) {
                return true
            }
            usleep(100_000)
        }
        return true
    }

    /// Makes the restores whose source exists by now; reports those that never appeared.
    ///
    /// A source port exists before its client is activated, and jack2 refuses to connect a port
    /// of an inactive client: a refused connection is tried again on the next poll, for at most
    /// ``Configuration/restoreTimeout`` more, instead of being given up at the first refusal.
    private func retryPendingRestores(_ live: LiveSession) {
        guard !pendingRestores.isEmpty else { return }
        let now = Date()
        var kept: [(source: String, destination: String, deadline: Date)] = []
        for restore in pendingRestores {
            if live.client.portExists(restore.source) {
                do {
                    try live.client.connect(restore.source, to: restore.destination)
                } catch {
                    if now > restore.deadline {
                        lock.withLock { failures.append(error) }
                    } else {
                        let retryUntil = min(restore.deadline, now.addingTimeInterval(configuration.restoreTimeout))
                        kept.append((restore.source, restore.destination, retryUntil))
                    }
                }
                continue
            }
            if now > restore.deadline {
                lock.withLock { failures.append(.noSuchPort(restore.source)) }
                continue
            }
            kept.append(restore)
        }
        pendingRestores = kept
        knownConnections = live.snapshotConnections()
    }

    private func stopMonitor() {
        guard monitorRunning else { return }
        monitorStop.store(true, ordering: .releasing)
        monitorDone.wait()
        monitorRunning = false
    }
}

/// One connection to a server: client, ports, engine and deferred runners. A reconnect
/// after server loss builds a new one; consumers carry over.
private final class LiveSession: @unchecked Sendable {
    let client: JackClient
    let session: AudioSessionInfo
    let format: StreamFormat
    let engine: CaptureEngine
    let runners: [DeferredConsumerRunner]
    let portNames: [String]

    private init(client: JackClient, session: AudioSessionInfo, format: StreamFormat, engine: CaptureEngine,
                 runners: [DeferredConsumerRunner], portNames: [String]) {
        self.client = client
        self.session = session
        self.format = format
        self.engine = engine
        self.runners = runners
        self.portNames = portNames
    }

    /// Registers `in_1` … `in_N` with metadata, builds the engine, starts workers and activates.
    static func open(client: JackClient, session: AudioSessionInfo, format: StreamFormat,
                     host: CaptureHost) throws -> LiveSession {
        var registered: [JackPort] = []
        do {
            for index in 1...format.channelCount {
                let port = try client.registerAudioInput(named: "in_\(index)")
                registered.append(port)
                client.setProperty(on: port, key: JackClient.prettyNameKey, value: "Input \(index)")
                client.setProperty(on: port, key: JackClient.orderKey, value: String(index), type: JackClient.integerType)
            }
            let runners = host.makeRunners(session: session, channels: format.channelCount)
            let engine = CaptureEngine(client: client, ports: registered, realtime: host.realtimeConsumerList,
                                       deferred: runners, frameLimit: host.remainingFrameLimit(session: session),
                                       timer: host.callbackTimer)
            engine.installCallbacks()
            runners.forEach { $0.startWorker() }
            do {
                try client.activate()
            } catch {
                runners.forEach { $0.stopWorker() }  // nothing was delivered yet: nothing to wait for
                throw error
            }
            return LiveSession(client: client, session: session, format: format, engine: engine, runners: runners,
                               portNames: registered.map { client.fullName(of: $0) })
        } catch {
            registered.forEach { client.unregister($0) }
            throw error
        }
    }

    /// The sources connected to each input right now.
    func snapshotConnections() -> [[String]] {
        portNames.map { client.connections(ofPortNamed: $0) }
    }

    func statistics(unresponsive: Set<Int> = []) -> CaptureStatistics {
        CaptureStatistics(
            cycles: engine.cycles.load(ordering: .relaxed),
            capturedFrames: engine.capturedFrames.load(ordering: .relaxed),
            xruns: engine.xruns.load(ordering: .relaxed),
            timelineGaps: engine.timelineGaps.load(ordering: .relaxed),
            timelineGapFrames: engine.timelineGapFrames.load(ordering: .relaxed),
            connectionFailures: 0,
            consumers: runners.map {
                .init(name: $0.consumer.consumerName, index: $0.index,
                      deliveredFrames: $0.deliveredFrames.load(ordering: .relaxed),
                      droppedFrames: $0.droppedFrames.load(ordering: .relaxed),
                      abandonedFrames: $0.abandonedFrames.load(ordering: .relaxed),
                      isUnresponsive: unresponsive.contains($0.index))
            })
    }
}

/// How a host's inputs and the sources it found fit together at start: a mismatch between
/// `--channels` and what the patterns (or the physical ports) gave is worth a warning.
public struct InputWiring: Sendable, Equatable {
    /// Sources that matched but found no input (more sources than channels).
    public var unusedSources: [String] = []
    /// Inputs that got no source (more channels than sources); empty when wiring is ``CaptureHost/Connections/none``.
    public var silentInputs: [String] = []

    /// Nothing left over on either side.
    public init() {}

    /// Pairs `sources` with `inputs` in order.
    init(sources: [String], inputs: [String], connections: CaptureHost.Connections) {
        guard connections != .none else { return }
        unusedSources = Array(sources.dropFirst(inputs.count))
        silentInputs = Array(inputs.dropFirst(sources.count))
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
    /// Per deferred consumer: what reached it, what its full ring dropped, and what was
    /// given up at the end.
    public struct Consumer: Sendable, Equatable {
        /// The consumer's name (not necessarily unique: two instances of a plugin share one).
        public var name: String
        /// The consumer's position among the deferred consumers, in the order they were added.
        public var index: Int
        /// Frames delivered to `consume`.
        public var deliveredFrames: Int
        /// Frames lost because the consumer's ring was full.
        public var droppedFrames: Int
        /// Frames still queued when a drain passed its limit, given up instead of delivered.
        public var abandonedFrames: Int = 0
        /// Whether the consumer was still inside `consume` when its drain was given up; it was
        /// not finished and gets nothing more.
        public var isUnresponsive = false

        /// Creates a consumer's counters.
        public init(name: String, index: Int, deliveredFrames: Int = 0, droppedFrames: Int = 0,
                    abandonedFrames: Int = 0, isUnresponsive: Bool = false) {
            self.name = name
            self.index = index
            self.deliveredFrames = deliveredFrames
            self.droppedFrames = droppedFrames
            self.abandonedFrames = abandonedFrames
            self.isUnresponsive = isUnresponsive
        }

        /// Frames this consumer never saw: dropped while running plus abandoned at the end.
        public var lostFrames: Int { droppedFrames + abandonedFrames }

        /// Sums two sets of counters by consumer index, one entry per name in `names`.
        static func folded(_ retired: [Consumer], with live: [Consumer], names: [String]) -> [Consumer] {
            names.enumerated().map { index, name in
                var total = Consumer(name: name, index: index)
                for part in retired + live where part.index == index {
                    total.deliveredFrames += part.deliveredFrames
                    total.droppedFrames += part.droppedFrames
                    total.abandonedFrames += part.abandonedFrames
                    total.isUnresponsive = total.isUnresponsive || part.isUnresponsive
                }
                return total
            }
        }
    }
    /// Process cycles run.
    public var cycles = 0
    /// Frames captured by the process callback.
    public var capturedFrames = 0
    /// Xruns the server reported.
    public var xruns = 0
    /// Jumps in frame time between cycles: the server skipped this client, reported or not.
    public var timelineGaps = 0
    /// Frames in those jumps: audio that never reached jackhost.
    public var timelineGapFrames = 0
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
