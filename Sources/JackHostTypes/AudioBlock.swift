/// When a block of audio was captured.
public struct AudioTimestamp: Sendable, Equatable, BitwiseCopyable {
    /// JACK's frame time at the start of the cycle (`jack_get_cycle_times`); wraps at 2^32.
    public var frameTime: UInt32
    /// JACK's microsecond clock at the start of the cycle.
    public var microseconds: UInt64
    /// The cycle's sequence number, counting from 0 at activation.
    public var sequence: UInt64
    /// True when the server reported an xrun since the previous cycle, or its frame time
    /// jumped (cycles skipped for this client) since the previous cycle.
    public var xrunSincePreviousCycle: Bool
    /// True when JACK transport was rolling in this cycle (`jack_transport_query`). Always
    /// false when the host does not read transport (its configuration's `readsTransport`).
    public var transportRolling: Bool
    /// True when the server was freewheeling in this cycle.
    public var freewheeling: Bool

    /// Creates a timestamp.
    public init(
        frameTime: UInt32, microseconds: UInt64, sequence: UInt64, xrunSincePreviousCycle: Bool,
        transportRolling: Bool = false, freewheeling: Bool = false
    ) {
        self.frameTime = frameTime
        self.microseconds = microseconds
        self.sequence = sequence
        self.xrunSincePreviousCycle = xrunSincePreviousCycle
        self.transportRolling = transportRolling
        self.freewheeling = freewheeling
    }
}

/// A zero-copy view of one block of non-interleaved Float32 audio: the
/// equivalent of an `AudioBufferList` with one `AudioBuffer` per channel.
///
/// The view does not own its memory. Inside a real-time consumer it points at
/// JACK's port buffers, which are only valid during the process callback; in a
/// deferred consumer it points into the consumer's ring until `consume` returns.
/// **Never keep the view, or a pointer from it, after the call returns**, and
/// never write through it: other JACK clients may read the same buffers.
///
/// Deliberately not `Sendable`: a view is borrowed for one call on one thread, and the
/// compiler then refuses to hand it to another thread or task. (`~Escapable` would also stop
/// it being stored; in Swift 6.3 that needs the experimental `Lifetimes` feature, which a
/// library others build against should not require.)
public struct AudioBufferListView {
    /// The number of frames in every channel buffer.
    public let frameCount: Int
    /// The number of channel buffers.
    public let channelCount: Int
    @usableFromInline let channelBases: UnsafePointer<UnsafePointer<Float>>

    /// Wraps `channelCount` channel pointers, each with `frameCount` samples.
    public init(channels: UnsafePointer<UnsafePointer<Float>>, channelCount: Int, frameCount: Int) {
        self.channelBases = channels
        self.channelCount = channelCount
        self.frameCount = frameCount
    }

    /// The samples of one channel (0-based).
    @inlinable
    public subscript(channel: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: channelBases[channel], count: frameCount)
    }

    /// The raw channel pointers, for handing to C or SIMD kernels.
    @inlinable
    public var channelPointers: UnsafeBufferPointer<UnsafePointer<Float>> {
        UnsafeBufferPointer(start: channelBases, count: channelCount)
    }
}

/// One block delivered to a consumer: the audio, when it was captured, and what was lost before it.
///
/// Not `Sendable`, like its ``AudioBufferListView``: copy the samples out to keep them.
public struct AudioBlock {
    /// The audio, non-interleaved.
    public let buffers: AudioBufferListView
    /// When the first frame was captured.
    public let timestamp: AudioTimestamp
    /// Frames this consumer lost (its ring was full) between the previous block and this one.
    /// Always 0 for real-time consumers. A recorder writes this much silence to keep the timeline.
    public let droppedFramesBefore: Int

    /// Creates a block.
    public init(buffers: AudioBufferListView, timestamp: AudioTimestamp, droppedFramesBefore: Int = 0) {
        self.buffers = buffers
        self.timestamp = timestamp
        self.droppedFramesBefore = droppedFramesBefore
    }

    /// Frames in the block.
    @inlinable public var frameCount: Int { buffers.frameCount }
    /// Channels in the block.
    @inlinable public var channelCount: Int { buffers.channelCount }
}
