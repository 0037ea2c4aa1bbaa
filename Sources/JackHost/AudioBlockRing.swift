import CSampleKernels
import Synchronization

/// What the ring records about one block besides its samples.
struct AudioBlockHeader: BitwiseCopyable {
    /// The block's first frame, as a free-running position in the sample ring.
    var startFrame: Int
    /// Frames in the block.
    var frameCount: Int
    /// When the block was captured.
    var timestamp: AudioTimestamp
    /// Frames dropped between the previous block and this one.
    var droppedFramesBefore: Int
}

/// A lock-free single-producer/single-consumer ring of non-interleaved audio blocks.
///
/// Samples live in one planar buffer per channel, so a block that does not
/// straddle the end of the ring is delivered to the reader without a copy.
/// Block headers (timestamp, drop count) travel in a separate ``SPSCRing``,
/// written after the samples with release ordering, so a reader that sees a
/// header also sees its samples.
///
/// The writer runs in JACK's process callback and never blocks, allocates or
/// makes a system call: when either the samples or the headers do not fit,
/// ``write(_:timestamp:droppedFramesBefore:)`` returns false and the caller
/// counts the frames as dropped.
public final class AudioBlockRing: @unchecked Sendable {
    // @unchecked: writer-side fields (`writerPosition`, `writerCachedReleased`) only on the writer's thread, reader-side ones (scratch, `readerChannels`) only on the reader's; samples are published by the header ring's release/acquire and `releasedFrames`.
    //
    // Layout, in declaration order: the writer's line (what `write` reads every cycle), then,
    // past a line of padding, what the reader writes. The writer checks for room against its
    // own copy of the reader's position and loads `releasedFrames` again only when that copy
    // says the block does not fit, so a cycle with room touches no line the reader stores to
    // (Benchmarks/FINDINGS.md, F11).
    /// Channels per block.
    public let channelCount: Int
    /// Frames each channel buffer holds: the minimum asked for, rounded up to a multiple of
    /// 1024 frames (or of the minimum itself, when smaller). Not to a power of two: every frame
    /// of the ring is resident for the whole session, and rounding 2.5 s up to 2^17 frames cost
    /// 2.7 MiB at 64 channels. A multiple of 1024 keeps blocks of any power-of-two period up to
    /// 1024 from straddling the end, which would cost the reader a copy.
    public let capacityFrames: Int
    /// One contiguous allocation: channel `c` starts at `c * capacityFrames`.
    private let samples: UnsafeMutablePointer<Float>
    private let headerWriter: SPSCRing<AudioBlockHeader>.Writer
    /// Frames the writer has placed (writer only).
    private var writerPosition = 0
    /// `releasedFrames` as the writer last loaded it (writer only).
    private var writerCachedReleased = 0
    private let beforeReader = CacheLinePadding()
    /// Frames the reader has released, published for the writer's space check.
    private let releasedFrames = Atomic<Int>(0)
    private let headerReader: SPSCRing<AudioBlockHeader>.Reader
    /// Reader-side channel pointers and a scratch copy for blocks that wrap.
    private let readerChannels: UnsafeMutablePointer<UnsafePointer<Float>>
    private var wrapScratch: UnsafeMutablePointer<Float>
    private var wrapScratchFrames: Int

    /// Blocks of at least this many frames are copied in with streaming stores (see `write`).
    static var streamingFrames: Int { 256 }

    /// Creates a ring for `channelCount` channels holding at least `minimumFrames` frames
    /// (see ``capacityFrames``),
    /// and at most `maximumBlocks` blocks in flight. All memory is allocated and touched here,
    /// so the real-time writer never takes a page fault on fresh memory.
    public init(channelCount: Int, minimumFrames: Int, maximumBlocks: Int = 1024) {
        precondition(channelCount > 0 && minimumFrames > 0)
        self.channelCount = channelCount
        let granule = min(1024, minimumFrames)
        let frames = (minimumFrames + granule - 1) / granule * granule
        capacityFrames = frames
        samples = .allocate(capacity: channelCount * frames)
        samples.initialize(repeating: 0, count: channelCount * frames)
        let headers = SPSCRing<AudioBlockHeader>.makeRing(capacity: maximumBlocks)
        headerWriter = headers.writer
        headerReader = headers.reader
        readerChannels = .allocate(capacity: channelCount)
        readerChannels.initialize(repeating: UnsafePointer(samples), count: channelCount)
        wrapScratchFrames = 0
        wrapScratch = .allocate(capacity: 1)
    }

    deinit {
        samples.deallocate()
        readerChannels.deallocate()
        wrapScratch.deallocate()
    }

    // MARK: Writer (real-time thread)

    /// **Real-time safe.** Copies a block in; returns false, writing nothing, when it does not fit.
    ///
    /// The block must have exactly ``channelCount`` channels.
    public func write(_ block: AudioBufferListView, timestamp: AudioTimestamp, droppedFramesBefore: Int) -> Bool {
        let frames = block.frameCount
        guard hasRoom(for: frames), headerWriter.hasRoom else { return false }
        let offset = writerPosition % capacityFrames
        let firstPart = min(frames, capacityFrames - offset)
        // The ring is far larger than the caches, so plain stores into it miss: a
        // read-for-ownership per 64 bytes, in the real-time thread. Measured (BENCHMARKS.md,
        // F8): for long runs per channel, streaming stores, which skip that read, win; for
        // short ones (a 64-frame period is 256 bytes a channel) plain stores win. A prefetch of
        // the next block's region, once used here, did not pay (F8, issue 25): it is gone.
        let streaming = frames >= AudioBlockRing.streamingFrames
        for channel in 0..<channelCount {
            let source = block.channelPointers[channel]
            let destination = samples + channel * capacityFrames
            AudioBlockRing.copy(destination + offset, from: source, count: firstPart, streaming: streaming)
            if firstPart < frames {
                AudioBlockRing.copy(destination, from: source + firstPart, count: frames - firstPart, streaming: streaming)
            }
        }
        if streaming {
            jh_store_fence()  // the samples before the header's release store
        }
        let header = AudioBlockHeader(
            startFrame: writerPosition, frameCount: frames,
            timestamp: timestamp, droppedFramesBefore: droppedFramesBefore)
        writerPosition &+= frames
        _ = headerWriter.push(header)
        return true
    }

    /// **Real-time safe.** Whether `frames` more fit: from the cached released position while it
    /// shows room, else from the reader's position loaded again (acquiring: the reader is done
    /// with those frames).
    @inline(__always)
    private func hasRoom(for frames: Int) -> Bool {
        if frames <= capacityFrames - (writerPosition &- writerCachedReleased) { return true }
        writerCachedReleased = releasedFrames.load(ordering: .acquiring)
        return frames <= capacityFrames - (writerPosition &- writerCachedReleased)
    }

    /// **Real-time safe.** One channel's run into the ring, with streaming or plain stores.
    @inline(__always)
    private static func copy(
        _ destination: UnsafeMutablePointer<Float>, from source: UnsafePointer<Float>,
        count: Int, streaming: Bool
    ) {
        if streaming {
            jh_copy_floats_streaming(destination, source, count)
        } else {
            destination.update(from: source, count: count)
        }
    }

    // MARK: Reader (worker thread)

    /// Hands the oldest block to `body` and then releases its space; returns false when empty.
    ///
    /// The view is valid only inside `body`. Blocks that straddle the ring's end are
    /// copied into scratch memory first; all others are delivered without a copy.
    public func readNext(_ body: (AudioBlock) -> Void) -> Bool {
        guard let header = headerReader.peek() else { return false }
        let offset = header.startFrame % capacityFrames
        let frames = header.frameCount
        if offset + frames <= capacityFrames {
            for channel in 0..<channelCount {
                readerChannels[channel] = UnsafePointer(samples + channel * capacityFrames + offset)
            }
        } else {
            ensureWrapScratch(frames: frames)
            let firstPart = capacityFrames - offset
            for channel in 0..<channelCount {
                let source = samples + channel * capacityFrames
                let destination = wrapScratch + channel * frames
                destination.update(from: source + offset, count: firstPart)
                (destination + firstPart).update(from: source, count: frames - firstPart)
                readerChannels[channel] = UnsafePointer(destination)
            }
        }
        let view = AudioBufferListView(channels: readerChannels, channelCount: channelCount, frameCount: frames)
        body(AudioBlock(buffers: view, timestamp: header.timestamp, droppedFramesBefore: header.droppedFramesBefore))
        _ = headerReader.pop()
        releasedFrames.store(header.startFrame &+ frames, ordering: .releasing)
        return true
    }

    /// Blocks waiting to be read.
    public var pendingBlocks: Int { headerReader.availableElements }

    private func ensureWrapScratch(frames: Int) {
        guard frames > wrapScratchFrames else { return }
        wrapScratch.deallocate()
        wrapScratch = .allocate(capacity: frames * channelCount)
        wrapScratchFrames = frames
    }
}
