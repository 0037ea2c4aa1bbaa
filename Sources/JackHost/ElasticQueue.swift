import CPosix
import Dispatch
import Synchronization

/// An in-memory queue of audio blocks that grows on demand up to a bound: the elastic stage
/// between a deferred consumer's small real-time ring and a consumer that may stall (a disk
/// that blocks for seconds, a network share).
///
/// Ordinary threads only: a transfer thread copies blocks out of the ring into the queue
/// (allocating is allowed there), and the consumer's thread takes them out, sleeping until a
/// block arrives. Blocks' memory is recycled through a free list capped in bytes, so a steady
/// take allocates only while the queue grows, and what a long stall took is given back to the
/// kernel once the queue has drained.
final class ElasticQueue: @unchecked Sendable {
    // @unchecked: `blocks`, `free`, `freeBytes`, `releasedBytes` and `queued` are touched only
    // inside `lock`; a block taken out belongs to the taking thread until it is recycled.

    /// One block's samples, channel after channel, and what travelled with it.
    final class Block {
        private(set) var samples: UnsafeMutablePointer<Float>
        private(set) var capacity: Int
        let channelPointers: UnsafeMutablePointer<UnsafePointer<Float>>
        let channelCount: Int
        var frameCount = 0
        var timestamp = AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)
        var droppedFramesBefore = 0

        /// The bytes this block's samples take.
        var byteCount: Int { capacity * channelCount * MemoryLayout<Float>.stride }

        init(channelCount: Int, frames: Int) {
            self.channelCount = channelCount
            capacity = max(frames, 1)
            samples = .allocate(capacity: capacity * channelCount)
            channelPointers = .allocate(capacity: max(channelCount, 1))
        }

        deinit {
            samples.deallocate()
            channelPointers.deallocate()
        }

        /// Copies a block in, growing the storage if it is larger than any before.
        func fill(from block: AudioBlock, droppedFramesBefore dropped: Int) {
            if block.frameCount > capacity {
                samples.deallocate()
                capacity = block.frameCount
                samples = .allocate(capacity: capacity * channelCount)
            }
            frameCount = block.frameCount
            timestamp = block.timestamp
            droppedFramesBefore = dropped
            for channel in 0..<min(channelCount, block.channelCount) {
                let destination = samples + channel * capacity
                destination.update(from: block.buffers[channel].baseAddress!, count: frameCount)
                channelPointers[channel] = UnsafePointer(destination)
            }
        }

        /// The block as consumers see it; valid until the block is recycled.
        var audioBlock: AudioBlock {
            AudioBlock(
                buffers: AudioBufferListView(channels: channelPointers, channelCount: channelCount, frameCount: frameCount),
                timestamp: timestamp, droppedFramesBefore: droppedFramesBefore)
        }
    }

    /// The most frames the queue holds.
    let limitFrames: Int
    let channelCount: Int
    private let lock = Lock()
    private var blocks: [Block] = []
    private var head = 0
    private var free: [Block] = []
    private var freeBytes = 0
    /// Bytes of blocks dropped from the free list since memory was last given back.
    private var releasedBytes = 0
    private var queued = 0
    /// Set by a consumer about to sleep in ``takeOldest(waitingUpTo:)``; the appender that
    /// clears it posts `arrival`. A flag, so the transfer thread posts only when someone sleeps.
    private let consumerWaiting = Atomic<Bool>(false)
    private let arrival = DispatchSemaphore(value: 0)
    /// Frames waiting now, for meters.
    let bufferedFrames = Atomic<Int>(0)
    /// The most frames that ever waited at once.
    let peakFrames = Atomic<Int>(0)

    init(channelCount: Int, limitFrames: Int) {
        self.channelCount = channelCount
        self.limitFrames = max(limitFrames, 1)
    }

    /// Whether `frames` more fit under the bound, or under `softLimit` when that is lower.
    func hasRoom(for frames: Int, softLimit: Int = .max) -> Bool {
        lock.withLock { queued + frames <= min(limitFrames, softLimit) }
    }

    /// Copies `block` in (the caller checked ``hasRoom(for:)``).
    func append(_ block: AudioBlock, droppedFramesBefore: Int) {
        let reused: Block? = lock.withLock {
            guard let block = free.popLast() else { return nil }
            freeBytes -= block.byteCount
            return block
        }
        let slot = reused ?? Block(channelCount: channelCount, frames: block.frameCount)
        slot.fill(from: block, droppedFramesBefore: droppedFramesBefore)
        let now = lock.withLock {
            blocks.append(slot)
            queued += slot.frameCount
            return queued
        }
        wakeConsumer()
        bufferedFrames.store(now, ordering: .relaxed)
        var peak = peakFrames.load(ordering: .relaxed)
        while now > peak {
            let (exchanged, original) = peakFrames.compareExchange(expected: peak, desired: now, ordering: .relaxed)
            if exchanged { break }
            peak = original
        }
    }

    /// The oldest block, or nil; hand it back with ``recycle(_:)`` after use. With `leaving`, only
    /// when at least that many frames stay queued after it.
    func takeOldest(leaving kept: Int = 0) -> Block? {
        lock.withLock {
            guard head < blocks.count, queued - blocks[head].frameCount >= kept else { return nil }
            let block = blocks[head]
            head += 1
            queued -= block.frameCount
            if head > 1024 && head * 2 > blocks.count {
                blocks.removeFirst(head)
                head = 0
            }
            bufferedFrames.store(queued, ordering: .relaxed)
            return block
        }
    }

    /// Wakes a consumer sleeping in ``takeOldest(waitingUpTo:)``: called for every block appended,
    /// and by whoever changes what the consumer should do next (the end of the transfer, a stop).
    func wakeConsumer() {
        if consumerWaiting.exchange(false, ordering: .sequentiallyConsistent) { arrival.signal() }
    }

    /// The oldest block (leaving `kept` frames queued after it), waiting up to `timeout` for one
    /// to arrive; nil when none came.
    func takeOldest(leaving kept: Int = 0, waitingUpTo timeout: DispatchTimeInterval) -> Block? {
        if let block = takeOldest(leaving: kept) { return block }
        consumerWaiting.store(true, ordering: .sequentiallyConsistent)
        // Look again after raising the flag: a block appended before it was raised posts nothing.
        if let block = takeOldest(leaving: kept) { return block }
        _ = arrival.wait(timeout: .now() + timeout)
        consumerWaiting.store(false, ordering: .relaxed)
        return takeOldest(leaving: kept)
    }

    /// Returns a block's memory for reuse. The free list keeps at most ``freeListByteLimit``
    /// bytes (and at least ``freeListMinimumBlocks`` blocks); beyond that the block is freed,
    /// and once the queue is empty again the freed memory is given back to the kernel, so a
    /// long stall's memory does not stay resident for the rest of the take.
    func recycle(_ block: Block) {
        let giveBack: Bool = lock.withLock {
            if free.count < Self.freeListMinimumBlocks || freeBytes + block.byteCount <= Self.freeListByteLimit {
                free.append(block)
                freeBytes += block.byteCount
            } else {
                releasedBytes += block.byteCount
            }
            guard queued == 0, releasedBytes >= Self.releaseThresholdBytes else { return false }
            releasedBytes = 0
            return true
        }
        // Outside the lock: walking the arenas takes a while.
        if giveBack { cposix_release_free_memory() }
    }

    /// Bytes the free list holds now (for tests and diagnostics).
    var freeListBytes: Int { lock.withLock { freeBytes } }

    /// Bytes of block memory kept for reuse: enough for steady work, where the queue is nearly
    /// empty (4 MiB is a quarter second of 64 channels at 48 kHz).
    static let freeListByteLimit = 4 << 20
    /// Blocks kept for reuse whatever their size, so steady work at many channels never allocates.
    static let freeListMinimumBlocks = 8
    /// Freed bytes worth giving back to the kernel (malloc_trim walks every arena).
    static let releaseThresholdBytes = 16 << 20

    /// Empties the queue and returns the frames that were waiting.
    func discardAll() -> Int {
        lock.withLock {
            let frames = queued
            for block in blocks[head...] where freeBytes + block.byteCount <= Self.freeListByteLimit {
                free.append(block)
                freeBytes += block.byteCount
            }
            blocks.removeAll()
            head = 0
            queued = 0
            bufferedFrames.store(0, ordering: .relaxed)
            return frames
        }
    }
}
