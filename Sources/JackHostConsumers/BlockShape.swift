/// Blocks as a consumer wants them, rather than as JACK delivers them: a fixed number of
/// frames, a subset of the channels, and a sample rate — the analog of
/// `AVAudioEngine.installTap(onBus:bufferSize:format:)`.
///
/// ```swift
/// // 1024-frame blocks of in_1 and in_2 at 16 kHz, whatever JACK's period and rate:
/// let shape = BlockShape(frames: 1024, channels: [0, 1], sampleRate: 16000)
/// host.add(deferred: ShapedDeferredConsumer(myConsumer, shape: shape))
/// ```
///
/// What each costs, on the consumer's own worker thread (never the real-time one): a channel
/// subset is free (pointers only); fixed-size blocks copy each sample once; a sample rate runs
/// libsoxr's high-quality resampler per channel (see docs/PLUGINS.md for measured figures).
/// Real-time consumers can take a channel subset only (``ChannelSubsetConsumer``): rebuffering
/// and resampling need a worker.
public struct BlockShape: Sendable, Equatable, CustomStringConvertible {
    /// Frames in every block but the last of a run; nil for whatever arrives.
    public var frames: Int?
    /// The channels to keep, 0-based, in the order given; nil for all.
    public var channels: [Int]?
    /// The rate to convert to, in Hz; nil for the server's rate.
    public var sampleRate: Double?

    /// A shape; every part is optional.
    public init(frames: Int? = nil, channels: [Int]? = nil, sampleRate: Double? = nil) {
        self.frames = frames
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// Whether the shape changes anything.
    public var isIdentity: Bool { frames == nil && channels == nil && sampleRate == nil }

    /// Whether a real-time consumer can take it (a channel subset only).
    public var isRealtimeCapable: Bool { frames == nil && sampleRate == nil }

    /// The largest block `frames` may ask for: 10 s at 192 kHz.
    public static let maximumFrames = 1_920_000
    /// The rates a consumer may ask for.
    public static let sampleRates: ClosedRange<Double> = 1000...768_000

    /// `block-frames=1024 channels=1-2 sample-rate=16000` (1-based channels, as users write them).
    public var description: String {
        var parts: [String] = []
        if let frames { parts.append("block-frames=\(frames)") }
        if let channels { parts.append("channels=\(channels.map { String($0 + 1) }.joined(separator: ","))") }
        if let sampleRate { parts.append("sample-rate=\(sampleRate == sampleRate.rounded() ? String(Int(sampleRate)) : String(sampleRate))") }
        return parts.isEmpty ? "as delivered" : parts.joined(separator: " ")
    }

    /// Parses a channel list as users write it, 1-based: `2`, `1-4`, `1,3,5-6`. Returns
    /// 0-based indices, or nil with no reason when the text is not such a list.
    public static func channels(parsing text: String) -> [Int]? {
        var result: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count),
                let low = Int(bounds[0]), let high = Int(bounds[bounds.count - 1]),
                (1...1024).contains(low), (low...1024).contains(high)
            else { return nil }
            result += (low...high).map { $0 - 1 }
        }
        return result.isEmpty || Set(result).count != result.count ? nil : result
    }
}
