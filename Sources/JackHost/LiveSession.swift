import Dispatch
import Glibc

/// One connection to a server: the client, its ports, the engine and the deferred runners.
///
/// Noncopyable, with a consuming ``close(serverAlive:drainLimit:abandonWhen:)``: a session is
/// closed exactly once, by whoever owns it, and cannot be used afterwards. The supervisor's
/// thread owns the live session; a reconnect after a server loss opens a new one, and the
/// consumers carry over. What other threads may read (the session facts and live counters)
/// is published separately as a copyable ``LiveSessionView``.
struct LiveSession: ~Copyable {
    let client: JackClient
    let view: LiveSessionView
    /// The inputs, in order; the supervisor publishes their metadata (``PortMetadataPublisher``).
    let ports: [JackPort]
    /// The inputs' pretty-names where the wiring gave them (``SessionFactory/inputNames``).
    let inputNames: [String]

    private init(client: JackClient, view: LiveSessionView, ports: [JackPort], inputNames: [String]) {
        self.client = client
        self.view = view
        self.ports = ports
        self.inputNames = inputNames
    }

    /// Registers `in_1` … `in_N` with metadata, builds the engine (which the client then owns
    /// as its callbacks' context), starts the workers and activates.
    ///
    /// On failure the client is closed here, before anything it called back into is released.
    static func open(
        client: JackClient, session: AudioSessionInfo, format: StreamFormat, inputNames: [String], consumers: ConsumerRegistry,
        runners: [DeferredConsumerRunner], frameLimit: Int, expectedFrameTime: UInt32?,
        timer: CallbackTimer?, readsTransport: Bool, controlEvents: MIDIControlQueue?
    ) throws -> LiveSession {
        var registered: [JackPort] = []
        do {
            for index in 1...format.channelCount {
                let port = try client.registerAudioInput(named: "in_\(index)")
                registered.append(port)
            }
            PortMetadataPublisher.setAll(ports: registered, names: inputNames, on: client)
            let control = try controlEvents.map { queue throws(JackError) in
                (port: try client.registerMIDIInput(named: "control"), queue: queue)
            }
            let engine = CaptureEngine(
                client: client, ports: registered, realtime: consumers.realtime,
                deferred: runners, frameLimit: frameLimit, expectedFrameTime: expectedFrameTime,
                timer: timer, readsTransport: readsTransport, control: control)
            client.install(engine)
            runners.forEach { $0.startWorker() }
            do {
                try client.activate()
            } catch {
                runners.forEach { $0.stopWorker() }  // nothing was delivered yet: nothing to wait for
                throw error
            }
            let view = LiveSessionView(
                client: client, session: session, format: format, engine: engine, runners: runners,
                portNames: registered.map { client.fullName(of: $0) })
            return LiveSession(client: client, view: view, ports: registered, inputNames: inputNames)
        } catch {
            client.close()
            throw error
        }
    }

    /// The sources connected to each input right now.
    func snapshotConnections() -> [[String]] {
        view.portNames.map { client.connections(ofPortNamed: $0) }
    }

    /// Ends the session: stops delivery and deactivates (if the server is still there), lets
    /// the workers drain within `drainLimit` seconds, and closes the client.
    ///
    /// - Returns: The session's counters, with what was abandoned and who did not return.
    consuming func close(serverAlive: Bool, drainLimit: Double, abandonWhen: () -> Bool) -> CaptureStatistics {
        let engine = view.engine
        if serverAlive {
            engine.deliveryStopped.store(true, ordering: .releasing)
            // A real-time side waiting on a full ring in freewheel must not hold up deactivation.
            view.runners.forEach { $0.releaseBackpressure() }
            client.deactivate()
        }
        view.runners.forEach { $0.requestStop() }
        let seconds = min(max(drainLimit, 0), 86_400)
        let deadline = DispatchTime.now() + .milliseconds(Int(seconds * 1000))
        var unresponsive: Set<Int> = []
        for runner in view.runners where !runner.awaitWorker(until: deadline, abandonWhen: abandonWhen) {
            unresponsive.insert(runner.index)
        }
        let statistics = view.statistics(unresponsive: unresponsive)
        client.close(serverAlive: serverAlive)
        return statistics
    }
}

/// What other threads may read of a live session: its facts and its live counters (atomics).
/// Copyable and safe to keep after the session closes: the counters then stop moving.
struct LiveSessionView: Sendable {
    /// For graph queries only: after the session closes, the client answers them empty.
    let client: JackClient
    let session: AudioSessionInfo
    let format: StreamFormat
    let engine: CaptureEngine
    let runners: [DeferredConsumerRunner]
    let portNames: [String]

    /// The counters so far; `unresponsive` marks consumers left inside `consume`.
    func statistics(unresponsive: Set<Int> = []) -> CaptureStatistics {
        var statistics = CaptureStatistics()
        statistics.cycles = engine.cycles.load(ordering: .relaxed)
        statistics.capturedFrames = engine.capturedFrames.load(ordering: .relaxed)
        statistics.xruns = engine.xruns.load(ordering: .relaxed)
        statistics.timelineGaps = engine.timelineGaps.load(ordering: .relaxed)
        statistics.timelineGapFrames = engine.timelineGapFrames.load(ordering: .relaxed)
        statistics.consumers = runners.map { runner -> CaptureStatistics.Consumer in
            var consumer = CaptureStatistics.Consumer(
                name: runner.consumer.consumerName, index: runner.index,
                deliveredFrames: runner.deliveredFrames.load(ordering: .relaxed),
                droppedFrames: runner.droppedFrames.load(ordering: .relaxed),
                abandonedFrames: runner.abandonedFrames.load(ordering: .relaxed),
                isUnresponsive: unresponsive.contains(runner.index))
            consumer.peakBufferedFrames = runner.elastic?.peakFrames.load(ordering: .relaxed) ?? 0
            consumer.bufferedFrames = runner.elastic?.bufferedFrames.load(ordering: .relaxed) ?? 0
            return consumer
        }
        return statistics
    }
}
