import JackHostTypes

// ============================================================================
// REAL-TIME CODE. `process` runs inside JACK's process callback: it fills a
// pointer array allocated in `prepare` and hands a view over it on. No
// allocation, no lock, no system call.
// ============================================================================

/// Hands a real-time consumer a subset of the channels, in the order asked (the only part of
/// a ``BlockShape`` a real-time consumer can take: no copy, pointers only).
public final class ChannelSubsetConsumer: RealtimeAudioConsumer {
    /// The consumer that receives the subset.
    public let inner: any RealtimeAudioConsumer
    /// The channels to keep, 0-based.
    public let channels: [Int]
    private var pointers: UnsafeMutablePointer<UnsafePointer<Float>>
    /// `channels` again, as plain memory: the real-time path touches no array (no retain).
    private let indices: UnsafeMutablePointer<Int>
    private let count: Int

    /// Wraps `inner` so it sees only `channels` (0-based, in this order).
    public init(_ inner: any RealtimeAudioConsumer, channels: [Int]) {
        self.inner = inner
        self.channels = channels
        count = channels.count
        pointers = .allocate(capacity: max(channels.count, 1))
        indices = .allocate(capacity: max(channels.count, 1))
        for (index, channel) in channels.enumerated() { indices[index] = channel }
    }

    deinit {
        pointers.deallocate()
        indices.deallocate()
    }

    /// The wrapped consumer's name.
    public var consumerName: String { inner.consumerName }

    /// Checks the channels against the stream and prepares the wrapped consumer with the subset's format.
    public func prepare(format: StreamFormat) throws {
        if let beyond = channels.first(where: { $0 >= format.channelCount }) {
            throw BlockShapeError(
                "channel \(beyond + 1) was asked for, but the stream has \(format.channelCount) channel\(format.channelCount == 1 ? "" : "s")")
        }
        try inner.prepare(format: StreamFormat(sampleRate: format.sampleRate, channelCount: count))
    }

    /// **Real-time thread.** The subset's pointers, then the wrapped consumer.
    public func process(_ block: AudioBlock) {
        let all = block.buffers.channelPointers
        for index in 0..<count { pointers[index] = all[indices[index]] }
        inner.process(
            AudioBlock(
                buffers: AudioBufferListView(channels: pointers, channelCount: count, frameCount: block.frameCount),
                timestamp: block.timestamp, droppedFramesBefore: block.droppedFramesBefore))
    }

    /// Finishes the wrapped consumer.
    public func finish() { inner.finish() }

    /// Passes events on.
    public func handle(_ event: AudioSessionEvent) { inner.handle(event) }
}
