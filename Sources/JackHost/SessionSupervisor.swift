import CPosix
import Dispatch
import Glibc
import Synchronization

/// The host's supervisor: one ordinary thread that owns the live session and watches it.
///
/// Every 20 ms it turns the engine's flags (set by JACK's callbacks, which may do nothing
/// else) into ``AudioSessionEvent``s, keeps the wiring with a ``ConnectionKeeper``, follows a
/// change in the number of capture ports, and on server loss closes the dead session and,
/// if asked to, reconnects with backoff (0.1 s doubling to 2 s). On stop it closes the
/// session itself, so the session has one owner and one thread from start to end.
final class SessionSupervisor: @unchecked Sendable {
    // @unchecked: `keeper` and the loop's locals are touched only by the supervisor's thread;
    // everything shared is an atomic, a Mutex, or the thread-safe ledger and registry.

    private let factory: SessionFactory
    private var keeper: ConnectionKeeper
    /// Called after consumers are told, for every event; set from any thread.
    let eventHandler = Mutex<(@Sendable (AudioSessionEvent) -> Void)?>(nil)
    /// The server went away and the host gave up on it.
    let serverLost = Atomic<Bool>(false)
    /// Reconnections after a loss.
    let reconnections = Atomic<Int>(0)

    private let stopRequested = Atomic<Bool>(false)
    private let abandonRequested = Atomic<Bool>(false)
    /// Seconds the closing drain may take, as a Double's bit pattern (set with the stop request).
    private let drainLimitBits = Atomic<UInt64>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// The supervisor's pthread, so that a stop asked for from an event handler does not wait on itself.
    private let threadID = Atomic<UInt>(0)

    init(factory: SessionFactory, keeper: ConnectionKeeper) {
        self.factory = factory
        self.keeper = keeper
    }

    /// Hands the live session to a new supervisor thread, which owns it from now on.
    func start(_ session: consuming LiveSession) {
        let handoff = Handoff(session)
        WorkerThread.start(name: "jackhost-supervisor") { [self] in
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            if let live = handoff.session.take() { supervise(live) }
            finished.signal()
        }
    }

    /// Whether the calling thread is the supervisor's (an event handler is running).
    var isCurrentThread: Bool {
        threadID.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Asks the supervisor to close the session, draining for at most `drainLimit` seconds.
    func requestStop(drainLimit: Double) {
        drainLimitBits.store(drainLimit.bitPattern, ordering: .relaxed)
        stopRequested.store(true, ordering: .releasing)
    }

    /// Waits for the supervisor to finish; `abandonWhen` returning true cuts its drain short.
    func waitUntilFinished(abandonWhen: () -> Bool) {
        while finished.wait(timeout: .now() + .milliseconds(10)) == .timedOut {
            if abandonWhen() { abandonRequested.store(true, ordering: .releasing) }
        }
    }

    // MARK: The supervisor's thread

    private final class Handoff: @unchecked Sendable {
        // @unchecked: written before the thread starts, taken once by that thread.
        var session: LiveSession?
        init(_ session: consuming LiveSession) { self.session = .some(session) }
    }

    private var stopping: Bool { stopRequested.load(ordering: .acquiring) }
    private var drainLimit: Double { Double(bitPattern: drainLimitBits.load(ordering: .relaxed)) }
    private var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    private func supervise(_ first: consuming LiveSession) {
        var live = first
        var events = EventWatch(live.view.engine)
        var metadata = PortMetadataPublisher(ports: live.ports, names: live.inputNames)
        var tick = 0
        while true {
            if stopping {
                close(live, serverAlive: !live.view.engine.serverLost.load(ordering: .acquiring))
                factory.ledger.record(keeper.abandonPending())
                return
            }
            let engine = live.view.engine
            if engine.serverLost.load(ordering: .acquiring) {
                let wiring = keeper.wiringToCarry(inputs: live.view.portNames)
                close(live, serverAlive: false)
                tell(.serverLost)
                guard factory.configuration.reconnect, let next = reconnect(carrying: wiring) else {
                    if !stopping { serverLost.store(true, ordering: .releasing) }
                    factory.ledger.record(keeper.abandonPending())
                    return
                }
                live = next
                events = EventWatch(live.view.engine)
                metadata = PortMetadataPublisher(ports: live.ports, names: live.inputNames)
                reconnections.add(1, ordering: .relaxed)
                tell(.serverRestored)
                continue
            }
            for event in events.poll(totalXruns: { factory.ledger.statistics.xruns }) { tell(event) }
            // Also every half second: jack2 sends no connection callback when a source client
            // unregisters its ports before it deactivates (the close order jackhost itself
            // uses), so the flag alone would miss that the source went away.
            tick &+= 1
            if engine.connectionsChanged.exchange(false, ordering: .acquiring) || tick % 25 == 0 {
                keeper.observe(
                    live.client, inputs: live.view.portNames, now: now,
                    unregistrations: engine.portUnregistrations.load(ordering: .relaxed))
            }
            // Also re-count now and then: a registration callback can arrive before the port
            // list reflects the change, and the flag is then already consumed.
            if factory.configuration.channelCount == nil,
                engine.portsChanged.exchange(false, ordering: .acquiring) || tick % 25 == 0,
                let count = routeChangeCount(live)
            {
                guard let next = rebuild(live, channels: count) else {
                    factory.ledger.record(keeper.abandonPending())
                    return
                }
                live = next
                events = EventWatch(live.view.engine)
                metadata = PortMetadataPublisher(ports: live.ports, names: live.inputNames)
                continue
            }
            metadata.publish(on: live.client, now: now)
            let frame = live.view.engine.capturedFrames.load(ordering: .relaxed)
            keeper.settleLost(live.client, now: now, frame: frame)
            factory.ledger.record(keeper.retry(live.client, inputs: live.view.portNames, now: now, frame: frame))
            for change in keeper.takeChanges() { tell(factory.ledger.record(change)) }
            usleep(20_000)
        }
    }

    /// Closes a session and folds its counters into the ledger; consumers left inside
    /// `consume` are marked so that nothing calls them again.
    private func close(_ live: consuming LiveSession, serverAlive: Bool) {
        let statistics = live.close(
            serverAlive: serverAlive, drainLimit: stopping ? drainLimit : factory.configuration.drainLimit,
            abandonWhen: { abandonRequested.load(ordering: .acquiring) })
        for consumer in statistics.consumers where consumer.isUnresponsive {
            factory.consumers.markUnresponsive(deferredIndex: consumer.index)
        }
        factory.ledger.retire(statistics)
    }

    private func tell(_ event: AudioSessionEvent) {
        factory.consumers.tell(event)
        eventHandler.withLock { $0 }?(event)
    }

    /// Waits for the server to come back, with backoff, until it does or a stop is requested.
    private func reconnect(carrying wiring: [[String]]) -> LiveSession? {
        var delay = 0.1
        while !stopping {
            if let client = try? factory.openClient() {
                if let session = reopen(on: client, carrying: wiring) { return session }
            }
            var waited = 0.0
            while waited < delay && !stopping {
                usleep(20_000)
                waited += 0.02
            }
            delay = min(delay * 2, 2.0)
        }
        return nil
    }

    /// Rebuilds the session on a fresh client: consumers start over when the format changed
    /// (the recorder rotates to a new file, like a route change on iOS); wiring is restored.
    private func reopen(on client: JackClient, carrying wiring: [[String]], expectedFrameTime: UInt32? = nil) -> LiveSession? {
        let session = AudioSessionInfo(client: client)
        guard let channels = try? factory.channelCount(for: session) else {
            client.close()
            return nil
        }
        let format = StreamFormat(sampleRate: session.sampleRate, channelCount: channels)
        let previous = factory.ledger.lastView?.format
        if previous != format {
            factory.consumers.finishAll()
            do {
                try factory.consumers.prepareAll(format: format)
            } catch {
                // A consumer refused the new format: stop here rather than record without it.
                factory.ledger.record([.serverLost(reason: "after reconnecting: \(error)")])
                client.close()
                serverLost.store(true, ordering: .releasing)
                stopRequested.store(true, ordering: .releasing)
                return nil
            }
            if previous?.channelCount != channels { tell(.routeChanged(channelCount: channels)) }
        }
        guard
            let live = try? factory.openSession(
                on: client, session: session, format: format,
                expectedFrameTime: expectedFrameTime)
        else { return nil }
        // Inputs that are new after a route change follow the automatic wiring.
        var extra: [(String, String)] = []
        if factory.configuration.connections == .physicalCapture && live.view.portNames.count > wiring.count {
            for index in wiring.count..<min(live.view.portNames.count, session.capturePorts.count) {
                extra.append((session.capturePorts[index], live.view.portNames[index]))
            }
        }
        keeper.planRestore(wiring, inputs: live.view.portNames, extra: extra, now: now)
        factory.ledger.record(keeper.retry(live.client, inputs: live.view.portNames, now: now))
        return live
    }

    /// In automatic channel mode, the new number of physical capture ports when it changed
    /// while the server runs; nil otherwise. Zero ports is a driver restarting (a netjack
    /// slave without its master): wait for them.
    private func routeChangeCount(_ live: borrowing LiveSession) -> Int? {
        let count = live.client.physicalCapturePorts().count
        return count > 0 && count != live.view.format.channelCount ? count : nil
    }

    /// Follows a route change on the same server: closes the session and opens one with the
    /// new count, keeping the wiring and counting the frames between the two as a gap.
    private func rebuild(_ live: consuming LiveSession, channels: Int) -> LiveSession? {
        let wiring = keeper.wiringToCarry(inputs: live.view.portNames)
        let expected = live.view.engine.nextExpectedFrameTime
        close(live, serverAlive: true)
        while !stopping {
            if let client = try? factory.openClient(), let next = reopen(on: client, carrying: wiring, expectedFrameTime: expected) {
                return next
            }
            usleep(100_000)
        }
        return nil
    }
}

/// Turns the engine's counters into events when they change (supervisor's thread only).
private struct EventWatch {
    let engine: CaptureEngine
    var xruns = 0
    var bufferSize: Int
    var sampleRate: Int
    var freewheeling = false

    init(_ engine: CaptureEngine) {
        self.engine = engine
        freewheeling = engine.freewheeling.load(ordering: .relaxed)
        bufferSize = engine.bufferSize.load(ordering: .relaxed)
        sampleRate = engine.sampleRate.load(ordering: .relaxed)
    }

    mutating func poll(totalXruns: () -> Int) -> [AudioSessionEvent] {
        var events: [AudioSessionEvent] = []
        let nowXruns = engine.xruns.load(ordering: .relaxed)
        if nowXruns != xruns {
            xruns = nowXruns
            events.append(.xrun(total: totalXruns()))
        }
        let size = engine.bufferSize.load(ordering: .relaxed)
        if size != bufferSize {
            bufferSize = size
            events.append(.bufferSizeChanged(frames: size))
        }
        let rate = engine.sampleRate.load(ordering: .relaxed)
        if rate != sampleRate {
            sampleRate = rate
            events.append(.sampleRateChanged(Double(rate)))
        }
        let wheeling = engine.freewheeling.load(ordering: .relaxed)
        if wheeling != freewheeling {
            freewheeling = wheeling
            events.append(.freewheelChanged(wheeling))
        }
        return events
    }
}
