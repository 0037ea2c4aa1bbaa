/// Builds live sessions the same way for the first start and for every rebuild after a
/// server loss or route change: channel count, consumers prepared for the format, rings
/// sized for the period, ports registered, engine installed, client activated.
struct SessionFactory: @unchecked Sendable {
    // @unchecked: the registry and ledger are thread-safe classes; the timer is written only
    // by the real-time thread of the one live session and read after it closed.
    var configuration: CaptureHost.Configuration
    /// The inputs' pretty-names in order, where the wiring names them (streams); an input
    /// without one is "Input N".
    var inputNames: [String] = []
    let consumers: ConsumerRegistry
    let ledger: CaptureLedger
    let timer: CallbackTimer?
    let controlEvents: MIDIControlQueue?

    /// The number of inputs for a session: the configured count, or the server's capture ports.
    func channelCount(for session: AudioSessionInfo) throws(JackError) -> Int {
        let channels = configuration.channelCount ?? session.inputNumberOfChannels
        if configuration.channelCount == nil && channels == 0 {
            throw JackError.noCapturePorts(server: configuration.serverName)
        }
        guard (1...JackError.maximumChannelCount).contains(channels) else {
            throw JackError.invalidChannelCount(channels)
        }
        return channels
    }

    /// Opens a client with the configured name on the configured server.
    func openClient() throws(JackError) -> JackClient {
        try JackClient(name: configuration.clientName, server: configuration.serverName)
    }

    /// Opens a session on `client` with `format`. Consumers must already be prepared for it.
    ///
    /// - Parameter expectedFrameTime: For a rebuild on the same server (a route change), the
    ///   frame time the previous session expected next, so the gap between them is counted.
    func openSession(
        on client: JackClient, session: AudioSessionInfo, format: StreamFormat,
        expectedFrameTime: UInt32? = nil
    ) throws -> LiveSession {
        let frameLimit = ledger.remainingFrames {
            if let frames = configuration.frameLimit { return frames }
            return configuration.durationLimit.map { Int(($0 * session.sampleRate).rounded()) }
        }
        let live = try LiveSession.open(
            client: client, session: session, format: format, inputNames: inputNames, consumers: consumers,
            runners: makeRunners(session: session, channels: format.channelCount),
            frameLimit: frameLimit, expectedFrameTime: expectedFrameTime, timer: timer,
            readsTransport: configuration.readsTransport, controlEvents: controlEvents)
        ledger.publish(live.view)
        return live
    }

    /// One runner per deferred consumer that can still take blocks, its ring sized for this
    /// session: the seconds asked for, in frames, and enough block slots for that many periods
    /// (so a 64-frame period gets the whole 2.5 s, not 1024 blocks' worth).
    func makeRunners(session: AudioSessionInfo, channels: Int) -> [DeferredConsumerRunner] {
        // Poll once a period, clamped to 1 ms ... 10 ms: the rings hold at least half a second,
        // so a period's latency costs nothing, and each poll is a wake-up the machine pays for.
        let period = Double(session.bufferSize) / max(session.sampleRate, 1)
        let poll = UInt32(min(max(period, 0.001), 0.010) * 1_000_000)
        return consumers.responsiveDeferred.map { index, entry in
            let seconds = entry.ringSeconds ?? (entry.maximumBuffer == nil ? configuration.deferredRingSeconds : 0.5)
            let frames = max(Int(seconds * session.sampleRate), 8 * max(session.bufferSize, 1024))
            return DeferredConsumerRunner(
                consumer: entry.consumer, index: index, channelCount: channels, ringFrames: frames,
                minimumPeriod: DeferredConsumerRunner.smallestPeriod, pollMicroseconds: poll,
                elasticFrames: entry.maximumBuffer.map { $0.frames(channels: channels, sampleRate: session.sampleRate) },
                holdBackFrames: Int((entry.holdBackSeconds * session.sampleRate).rounded(.up)))
        }
    }
}
