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
///
/// The host is a front: a `ConsumerRegistry` keeps the consumers' contract, a
/// `SessionFactory` builds live sessions, a `SessionSupervisor` owns the live session on
/// its own thread (events, server loss, reconnects, route changes, wiring through a
/// `ConnectionKeeper`), and a `CaptureLedger` holds what other threads may read
/// (docs/ARCHITECTURE.md draws them).
public final class CaptureHost: @unchecked Sendable {
    // @unchecked: `supervisor` and `started` are touched only by start() and stop(), which
    // callers serialise (documented on both); everything else is immutable or thread-safe.

    /// The configuration the host was created with.
    public let configuration: Configuration
    /// Callback durations, when ``Configuration/measureCallbackTime`` is set; read after ``stop(drainLimit:abandonWhen:)``.
    public let callbackTimer: CallbackTimer?
    /// The control input's events (``Configuration/controlInput``), or nil without one. Read
    /// them from one thread with ``MIDIControlQueue/drain()``.
    public let controlEvents: MIDIControlQueue?

    private let consumers = ConsumerRegistry()
    private var ledger = CaptureLedger(consumerNames: [])
    private var supervisor: SessionSupervisor?
    private var started = false
    /// Set once ``start()`` has made its initial connections (``waitForInitialWiring(timeout:)``).
    private let initialWiringMade = Atomic<Bool>(false)
    /// The handler set before start, handed to the supervisor when it starts.
    private let pendingHandler = Mutex<(@Sendable (AudioSessionEvent) -> Void)?>(nil)

    /// Creates a host; nothing touches JACK until ``start()``.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        callbackTimer = configuration.measureCallbackTime ? CallbackTimer() : nil
        controlEvents = configuration.controlInput ? MIDIControlQueue() : nil
    }

    // MARK: Consumers (before start)

    /// Adds a consumer that runs inside the process callback. Call before ``start()``.
    public func add(realtime consumer: some RealtimeAudioConsumer) {
        precondition(!started, "add consumers before start()")
        consumers.add(realtime: consumer)
    }

    /// Adds a consumer fed on its own worker thread through its own ring. Call before ``start()``.
    /// - Parameters:
    ///   - consumer: The consumer; its `consume` runs on a worker thread of its own.
    ///   - ringSeconds: Audio the real-time ring holds; nil uses the configuration's default, or
    ///     0.5 s with an elastic buffer (the ring then only absorbs scheduling jitter).
    ///   - maximumBuffer: Adds an elastic stage: a transfer thread moves blocks from the ring
    ///     into an in-memory queue that grows up to this bound, so a consumer that stalls (a
    ///     disk that blocks for seconds) loses nothing until then; beyond it, frames are
    ///     dropped and counted as usual. Nil: no elastic stage.
    ///   - holdBackSeconds: With an elastic stage, the consumer is handed a block only once this
    ///     much newer audio has been captured after it (all of it at the end), so a request
    ///     stamped with a frame that arrives up to this late, from another thread, still finds
    ///     that frame unwritten: the recorder's frame-exact MIDI control. 0: as soon as it comes.
    ///     At most half of `maximumBuffer` is held back, so holding back never drops a frame.
    public func add(
        deferred consumer: some DeferredAudioConsumer, ringSeconds: Double? = nil, maximumBuffer: BufferBound? = nil,
        holdBackSeconds: Double = 0
    ) {
        precondition(!started, "add consumers before start()")
        consumers.add(deferred: consumer, ringSeconds: ringSeconds, maximumBuffer: maximumBuffer, holdBackSeconds: holdBackSeconds)
    }

    /// Adds a closure tap (a deferred consumer) and returns it. The closure runs on the tap's
    /// worker thread, never on the caller's.
    @discardableResult
    public func installTap(name: String = "tap", _ block: @escaping @Sendable (AudioBlock) -> Void) -> DeferredTap {
        let tap = DeferredTap(name: name, block: block)
        add(deferred: tap)
        return tap
    }

    // MARK: Life cycle

    /// Opens the client, prepares consumers, registers and connects ports, and activates.
    ///
    /// Problems found before activation (no server, bad channel count, a pattern that
    /// matches nothing, a consumer that refuses the format) throw before the JACK graph
    /// is touched. Connections that fail after activation do not throw; they are listed in
    /// ``connectionFailures``. Call start() and ``stop(drainLimit:abandonWhen:)`` from one thread at a time.
    public func start() throws {
        precondition(!started, "CaptureHost.start() called twice")
        ledger = CaptureLedger(consumerNames: consumers.deferredNames)
        var factory = SessionFactory(
            configuration: configuration, consumers: consumers, ledger: ledger, timer: callbackTimer, controlEvents: controlEvents)
        let client = try factory.openClient()
        let live: LiveSession
        let sources: [String]
        do {
            let session = AudioSessionInfo(client: client)
            if let streams = try resolveStreams(client: client) {
                // Streams fix the inputs at start: one per port found, named after stream and channel.
                factory.inputNames = streams.names
                if factory.configuration.channelCount == nil { factory.configuration.channelCount = streams.ports.count }
            }
            let channels = try factory.channelCount(for: session)
            sources = try resolveSources(client: client, session: session, channels: channels)
            let format = StreamFormat(sampleRate: session.sampleRate, channelCount: channels)
            try consumers.prepareAll(format: format)
            do {
                live = try factory.openSession(on: client, session: session, format: format)
            } catch {
                consumers.finishAll()
                throw error
            }
        } catch {
            client.close()
            throw error
        }
        let inputs = live.view.portNames
        ledger.wiring = InputWiring(sources: sources, inputs: inputs, connections: configuration.connections)
        for (source, input) in zip(sources, inputs) {
            do { try live.client.connect(source, to: input) } catch { ledger.record([error]) }
        }
        initialWiringMade.store(true, ordering: .releasing)
        var keeper = ConnectionKeeper(restoreTimeout: configuration.restoreTimeout)
        keeper.remember(live.client, inputs: inputs)
        let supervisor = SessionSupervisor(factory: factory, keeper: keeper)
        supervisor.eventHandler.withLock { $0 = pendingHandler.withLock { $0 } }
        self.supervisor = supervisor
        started = true
        supervisor.start(live)
    }

    /// Waits until ``start()`` has made the initial connections, for at most `timeout` seconds.
    ///
    /// Audio reaches deferred consumers as soon as the client is active, while ``start()`` is
    /// still connecting the inputs one by one. A consumer that describes its inputs when the
    /// first block arrives (a recorder naming channel files after their sources, a sidecar
    /// listing connections) waits here first, so it sees the wiring that was asked for rather
    /// than the part of it made so far. Call it from a consumer's thread, never from the one
    /// that calls ``start()``.
    /// - Returns: Whether the initial connections were made in time.
    @discardableResult
    public func waitForInitialWiring(timeout: Double) -> Bool {
        // Millisecond polls: this waits once per segment, for as long as a few jack_connect calls take.
        var polls = Int(max(0, min(timeout, 3600)) * 1000)
        while !initialWiringMade.load(ordering: .acquiring) {
            if polls == 0 { return false }
            polls -= 1
            usleep(1000)
        }
        return true
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
                let matches = client.portExists(pattern) ? [pattern] : try client.audioOutputPortNames(matching: pattern)
                if matches.isEmpty { throw JackError.patternMatchedNothing(pattern: pattern) }
                sources.append(contentsOf: matches)
            }
            return sources
        case .streams:
            return (try resolveStreams(client: client))?.ports ?? []
        }
    }

    /// For ``Connections/streams(_:)``: each named stream's ports in order, and the input name
    /// each gives (`Stage Left FL`); nil for other connections.
    private func resolveStreams(client: JackClient) throws(JackError) -> (ports: [String], names: [String])? {
        guard case .streams(let names) = configuration.connections else { return nil }
        let outputs = try client.audioOutputPortNames()
        var found: (ports: [String], names: [String]) = ([], [])
        for name in names {
            let ports = JackStream.ports(ofStream: name, among: outputs)
            if ports.isEmpty { throw JackError.streamMatchedNothing(name: name) }
            found.ports += ports
            found.names += ports.map { JackStream.inputName(stream: name, port: $0) }
        }
        return found
    }

    /// Stops delivery, lets deferred consumers drain their rings, calls `finish()` on every
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
    ///
    /// Called from an event handler (on the supervisor's own thread), stop() only asks the
    /// supervisor to stop, and returns: the session closes and consumers finish when the
    /// handler returns.
    public func stop(drainLimit: Double? = nil, abandonWhen: () -> Bool = { false }) {
        guard started, let supervisor else { return }
        supervisor.requestStop(drainLimit: drainLimit ?? configuration.drainLimit)
        if supervisor.isCurrentThread { return }
        started = false
        supervisor.waitUntilFinished(abandonWhen: abandonWhen)
        consumers.finishAll()
    }

    // MARK: What other threads may ask

    /// The session as read when the host last (re)connected; kept after ``stop(drainLimit:abandonWhen:)``.
    public var session: AudioSessionInfo? { ledger.lastView?.session }
    /// The format consumers are prepared with.
    public var format: StreamFormat? { ledger.lastView?.format }
    /// Full names of the host's input ports, in order; empty while disconnected.
    public var inputPortNames: [String] { ledger.currentView?.portNames ?? [] }
    /// Connections that failed, each with its reason (initial wiring and restores after a reconnect).
    public var connectionFailures: [JackError] { ledger.connectionFailures }
    /// How the channel count and the sources found at ``start()`` fit together.
    public var wiring: InputWiring { ledger.wiring }
    /// Counters since ``start()``, summed over every reconnection.
    public var statistics: CaptureStatistics { ledger.statistics }

    /// Called on the supervisor's thread for every session event, after consumers are told.
    /// May be set at any time, from any thread.
    public var onEvent: (@Sendable (AudioSessionEvent) -> Void)? {
        get { pendingHandler.withLock { $0 } }
        set {
            pendingHandler.withLock { $0 = newValue }
            supervisor?.eventHandler.withLock { $0 = newValue }
        }
    }

    /// Whether the ``Configuration/frameLimit`` or ``Configuration/durationLimit`` has been delivered.
    public var isComplete: Bool {
        guard configuration.frameLimit != nil || configuration.durationLimit != nil else { return false }
        if ledger.currentView?.engine.limitReached.load(ordering: .acquiring) == true { return true }
        return ledger.remainingFramesAfterRetired() == 0
    }

    /// Whether the server went away and the host gave up on it (no reconnect configured).
    public var isServerLost: Bool { supervisor?.serverLost.load(ordering: .acquiring) ?? false }

    /// How many times the host reconnected after losing the server.
    public var reconnectCount: Int { supervisor?.reconnections.load(ordering: .relaxed) ?? 0 }

    /// The sources connected to one of the host's inputs right now (empty when disconnected).
    public func connections(ofInput name: String) -> [String] {
        ledger.currentView?.client.connections(ofPortNamed: name) ?? []
    }

    /// A port's JACK metadata pretty-name (any port on the server, the host's own included),
    /// or nil when it has none or the host is not connected.
    public func prettyName(ofPort name: String) -> String? {
        ledger.currentView?.client.property(ofPortNamed: name, key: JackClient.prettyNameKey)
    }
}
