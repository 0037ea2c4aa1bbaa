import Glibc

/// Levels of one channel, as a snapshot the display side reads.
public struct ChannelLevels: Sendable, Equatable {
    /// Highest absolute sample since the previous snapshot (linear, 1.0 = full scale).
    public var peak: Float
    /// Root-mean-square level since the previous snapshot (linear).
    public var rms: Float
    /// Highest absolute sample since the meter started.
    public var overallPeak: Float
    /// RMS over everything since the meter started.
    public var overallRMS: Float
    /// Samples at or beyond full scale (|x| >= 1.0) since the meter started.
    public var clips: Int

    /// Converts a linear level to dBFS; silence is -infinity.
    public static func dBFS(_ linear: Float) -> Float {
        linear > 0 ? 20 * log10(linear) : -.infinity
    }
}
