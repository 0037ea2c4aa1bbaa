/// What the JACK server reports about capture: the analog of `AVAudioSession`'s
/// `sampleRate`, `ioBufferDuration`, `inputNumberOfChannels` and `inputLatency`.
public struct AudioSessionInfo: Sendable, Equatable, Codable {
    /// The server's sample rate in Hz.
    public var sampleRate: Double
    /// The buffer size: frames per process cycle (JACK's word, `jack_get_buffer_size`; jackd's
    /// `-p`, "frames per period"). Encoded as `bufferFrames`, the published key of `info --json`.
    public var bufferSize: Int
    /// The buffer size as a duration in seconds, `bufferSize / sampleRate`: `AVAudioSession`'s name.
    public var ioBufferDuration: Double
    /// The number of physical audio capture ports the server reports.
    public var inputNumberOfChannels: Int
    /// The largest capture latency of the physical capture ports, in frames.
    public var inputLatencyFrames: Int
    /// The full names of the physical capture ports, in order.
    public var capturePorts: [String]

    private enum CodingKeys: String, CodingKey {
        case sampleRate, ioBufferDuration, inputNumberOfChannels, inputLatencyFrames, capturePorts
        case bufferSize = "bufferFrames"
    }

    /// The capture latency in seconds.
    public var inputLatency: Double { sampleRate > 0 ? Double(inputLatencyFrames) / sampleRate : 0 }

    /// Creates session information from explicit values (tests, the plugin test driver).
    public init(
        sampleRate: Double, bufferSize: Int, inputNumberOfChannels: Int,
        inputLatencyFrames: Int = 0, capturePorts: [String] = []
    ) {
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize
        self.ioBufferDuration = sampleRate > 0 ? Double(bufferSize) / sampleRate : 0
        self.inputNumberOfChannels = inputNumberOfChannels
        self.inputLatencyFrames = inputLatencyFrames
        self.capturePorts = capturePorts
    }

    /// Reads the session from an open client.
    public init(client: JackClient) {
        let ports = client.physicalCapturePorts()
        let latency = ports.compactMap { client.captureLatencyRange(ofPortNamed: $0)?.upperBound }.max() ?? 0
        self.init(
            sampleRate: Double(client.sampleRate), bufferSize: client.bufferSize,
            inputNumberOfChannels: ports.count, inputLatencyFrames: latency, capturePorts: ports)
    }

    /// Opens a short-lived client named `jackhost-info` (or `clientName`), reads the session and closes it.
    public static func query(server: String?, clientName: String = "jackhost-info") throws(JackError) -> AudioSessionInfo {
        let client = try JackClient(name: clientName, server: server)
        defer { client.close() }
        return AudioSessionInfo(client: client)
    }
}
