import JackHostTypes

/// One block already converted to an ``AudioEncoding``.
///
/// Not `Sendable`: like ``AudioBlock``, it borrows memory for one call.
public struct EncodedBlock {
    /// The converted samples; valid only during the call that receives the block.
    public let bytes: UnsafeRawBufferPointer
    /// Frames in the block.
    public let frameCount: Int
    /// Channels in the block.
    public let channelCount: Int
    /// The encoding of `bytes`.
    public let encoding: AudioEncoding
    /// When the block was captured.
    public let timestamp: AudioTimestamp
    /// Frames dropped before this block (the source ring was full).
    public let droppedFramesBefore: Int

    /// Bytes per interleaved frame (all channels).
    public var bytesPerFrame: Int { channelCount * encoding.bytesPerSample }
}
