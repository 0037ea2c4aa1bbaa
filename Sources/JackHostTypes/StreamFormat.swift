/// The layout of the audio a consumer receives, in the spirit of Core Audio's
/// `AudioStreamBasicDescription`.
///
/// JackHost always delivers the canonical layout: 32-bit native-endian floats,
/// **non-interleaved**, one buffer per channel. In a non-interleaved layout
/// ``bytesPerFrame`` describes *one channel's* buffer (4 bytes), not a frame of
/// all channels. Multiplying it by ``channelCount`` — as many Core Audio
/// examples do — gives the size of an interleaved frame and overflows buffers.
public struct StreamFormat: Sendable, Equatable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Double
    /// The number of channels, one buffer each.
    public var channelCount: Int
    /// Always false for JackHost's canonical layout.
    public var isInterleaved: Bool { false }
    /// Always true: samples are 32-bit IEEE floats in [-1, 1] nominal range.
    public var isFloat: Bool { true }
    /// Bits in one sample of one channel.
    public var bitsPerChannel: Int { 32 }
    /// Bytes in one frame **of one channel's buffer** (non-interleaved), so 4.
    public var bytesPerFrame: Int { MemoryLayout<Float>.size }
    /// Frames in one packet; 1 for linear PCM.
    public var framesPerPacket: Int { 1 }
    /// Bytes in one packet of one channel's buffer, equal to ``bytesPerFrame``.
    public var bytesPerPacket: Int { bytesPerFrame * framesPerPacket }

    /// Creates a canonical format.
    public init(sampleRate: Double, channelCount: Int) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// The number of bytes one channel's buffer needs for `frames` frames.
    public func bytesPerChannelBuffer(frames: Int) -> Int { frames * bytesPerFrame }

    /// The number of bytes all channel buffers together need for `frames` frames.
    public func totalBytes(frames: Int) -> Int { frames * bytesPerFrame * channelCount }

    /// For example "48000 Hz, 4 ch, Float32, non-interleaved".
    public var description: String {
        let rate = sampleRate == sampleRate.rounded() ? String(Int(sampleRate)) : String(sampleRate)
        return "\(rate) Hz, \(channelCount) ch, Float32, non-interleaved"
    }
}
