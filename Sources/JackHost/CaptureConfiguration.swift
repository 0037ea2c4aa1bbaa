extension CaptureHost {
    /// How the host's inputs are wired after activation.
    public enum Connections: Sendable, Equatable {
        /// Physical capture port i feeds `in_i` (the default).
        case physicalCapture
        /// Output ports matching these patterns, in order, feed `in_1`, `in_2`, …
        /// A pattern is an exact port name or a JACK (POSIX extended) regular expression.
        case patterns([String])
        /// The audio output ports of the JACK clients with these names (``JackStream``: under
        /// PipeWire, an RTP stream's SDP session name), stream after stream and each in port
        /// order, feed `in_1`, `in_2`, … Each input's pretty-name is then its stream's name and
        /// channel (`Stage Left FL`), and without a ``Configuration/channelCount`` there is one
        /// input per port found.
        case streams([String])
        /// Leave the inputs unconnected, for patching by hand.
        case none
    }

    /// Everything a host needs to know before it starts.
    public struct Configuration: Sendable {
        /// The JACK client name; port names are `CLIENT:in_N`.
        public var clientName: String
        /// The server to use, or nil for the default server.
        public var serverName: String?
        /// The number of inputs; nil follows the server's physical capture port count (with
        /// ``Connections/streams(_:)``, the streams' port count at start).
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
        /// Ask JACK every cycle whether transport rolls (`jack_transport_query`), for
        /// ``AudioTimestamp/transportRolling``. When false that field is always false and the
        /// cycle makes no transport query: a take that needs no transport pays nothing for it.
        public var readsTransport: Bool
        /// Register a JACK MIDI input, `CLIENT:control`, whose events the process callback copies
        /// into ``CaptureHost/controlEvents`` (MIDI Machine Control, notes and controllers for a
        /// controller to act on); the callback only copies, it decides nothing.
        public var controlInput: Bool = false
        /// Seconds ``CaptureHost/stop(drainLimit:abandonWhen:)`` and a server loss wait for
        /// deferred consumers to drain their rings; what is still queued then is given up and
        /// counted in ``CaptureStatistics/Consumer/abandonedFrames``.
        public var drainLimit: Double
        /// Deliver exactly this many frames, then stop delivering (``CaptureHost/isComplete``
        /// turns true). Nil delivers until ``CaptureHost/stop(drainLimit:abandonWhen:)``.
        public var frameLimit: Int?
        /// Deliver this many seconds of audio, then stop, like ``frameLimit``; the seconds become
        /// frames (`(seconds * rate).rounded()`) at the sample rate of the first connection.
        /// Ignored when ``frameLimit`` is set.
        public var durationLimit: Double?

        /// Creates a configuration; every parameter has a sensible default.
        public init(
            clientName: String = "jackhost", serverName: String? = nil, channelCount: Int? = nil,
            connections: Connections = .physicalCapture, deferredRingSeconds: Double = 2.0,
            frameLimit: Int? = nil, durationLimit: Double? = nil, reconnect: Bool = false,
            restoreTimeout: Double = 10, measureCallbackTime: Bool = false, drainLimit: Double = 5,
            readsTransport: Bool = true
        ) {
            self.readsTransport = readsTransport
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
