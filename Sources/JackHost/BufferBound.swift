/// How much an elastic buffer may hold: a size in memory or a length of audio.
public enum BufferBound: Sendable, Equatable {
    /// Bytes of Float32 samples, all channels together.
    case bytes(Int)
    /// Seconds of audio, at the session's rate and channel count.
    case seconds(Double)

    /// The bound in frames for a session's format.
    public func frames(channels: Int, sampleRate: Double) -> Int {
        switch self {
        case .bytes(let bytes): return max(1, bytes / (MemoryLayout<Float>.size * max(channels, 1)))
        case .seconds(let seconds): return max(1, Int(min(seconds * sampleRate, Double(Int.max / 2))))
        }
    }
}
