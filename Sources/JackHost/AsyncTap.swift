import Synchronization

/// A block copied out of the ring so that it can travel through Swift concurrency.
public struct CapturedBlock: Sendable {
    /// The samples, one array per channel.
    public let channels: [[Float]]
    /// When the first frame was captured.
    public let timestamp: AudioTimestamp
    /// Frames lost before this block, by the host's ring or by the stream's own buffer.
    public let droppedFramesBefore: Int

    /// Frames in the block.
    public var frameCount: Int { channels.first?.count ?? 0 }
}

/// Feeds an `AsyncStream` from a deferred consumer's worker thread.
final class AsyncTapConsumer: DeferredAudioConsumer, @unchecked Sendable {
    // @unchecked: `pendingDroppedFrames` is touched only by the tap's worker thread; the continuation is thread-safe.
    let consumerName: String
    private let continuation: AsyncStream<CapturedBlock>.Continuation
    /// Blocks the stream's buffer refused since the last accepted one (worker thread only).
    private var pendingDroppedFrames = 0

    init(name: String, continuation: AsyncStream<CapturedBlock>.Continuation) {
        consumerName = name
        self.continuation = continuation
    }

    func prepare(format: StreamFormat) throws {}

    func consume(_ block: AudioBlock) {
        let channels = (0..<block.channelCount).map { Array(block.buffers[$0]) }
        let captured = CapturedBlock(
            channels: channels, timestamp: block.timestamp,
            droppedFramesBefore: block.droppedFramesBefore + pendingDroppedFrames)
        switch continuation.yield(captured) {
        case .enqueued: pendingDroppedFrames = 0
        case .dropped: pendingDroppedFrames += block.frameCount + block.droppedFramesBefore
        case .terminated: break
        @unknown default: break
        }
    }

    func finish() { continuation.finish() }
}

extension CaptureHost {
    /// The deferred tap as an `AsyncSequence` of blocks, for Swift concurrency. Call before ``start()``.
    ///
    /// ```swift
    /// let blocks = host.blocks()
    /// try host.start()
    /// for await block in blocks { print(block.timestamp.sequence, block.channels[0].max() ?? 0) }
    /// ```
    ///
    /// Each block is copied into arrays on the tap's worker thread. When the consumer of the
    /// sequence falls more than `bufferingBlocks` behind, the oldest waiting blocks are kept
    /// and new ones are dropped, and the next delivered block's ``CapturedBlock/droppedFramesBefore``
    /// says how many frames were lost. The sequence ends when the host stops.
    public func blocks(name: String = "async-tap", bufferingBlocks: Int = 256) -> AsyncStream<CapturedBlock> {
        let (stream, continuation) = AsyncStream<CapturedBlock>.makeStream(bufferingPolicy: .bufferingOldest(bufferingBlocks))
        add(deferred: AsyncTapConsumer(name: name, continuation: continuation))
        return stream
    }
}
