import Synchronization

/// An in-memory queue of audio blocks that grows on demand up to a bound: the elastic stage
/// between a deferred consumer's small real-time ring and a consumer that may stall (a disk
/// that blocks for seconds, a network share).
///
/// Ordinary threads only: a transfer thread copies blocks out of the ring into the queue
/// (allocating is allowed there), and the consumer's thread takes them out. Blocks' memory is
/// recycled through a free list, so a steady take allocates only while the queue grows.
final class ElasticQueue: @unchecked Sendable {
    // @unchecked: `blocks`, `free` and `queued` are touched only inside `lock`; a block taken
    // out belongs to the taking thread until it is recycled.

    /// One block's samples, channel after channel, and what travelled with it.
    final class Block {
        private(set) var samples: UnsafeMutablePointer<Float>
        private(set) var capacity: Int
        let channelPointers: UnsafeMutablePointer<UnsafePointer<Float>>
        let channelCount: Int
        var frameCount = 0
        var timestamp = AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)
        var droppedFramesBefore = 0

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
    private var queued = 0
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
        let slot = lock.withLock { free.popLast() } ?? Block(channelCount: channelCount, frames: block.frameCount)
        slot.fill(from: block, droppedFramesBefore: droppedFramesBefore)
        let now = lock.withLock {
            blocks.append(slot)
            queued += slot.frameCount
            return queued
        }
        bufferedFrames.store(now, ordering: .relaxed)
        var peak = peakFrames.load(ordering: .relaxed)
        while now > peak {
            let (exchanged, original) = peakFrames.compareExchange(expected: peak, desired: now, ordering: .relaxed)
            if exchanged { break }
            peak = original
        }
    }

    /// The oldest block, or nil; hand it back with ``recycle(_:)`` after use.
    func takeOldest() -> Block? {
        lock.withLock {
            guard head < blocks.count else { return nil }
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

    /// Returns a block's memory for reuse. The free list keeps at most ``freeListLimit``
    /// blocks, so the memory a long stall took is given back once the queue has drained.
    func recycle(_ block: Block) {
        lock.withLock { if free.count < Self.freeListLimit { free.append(block) } }
    }

    /// Blocks kept for reuse: enough for steady work (the queue is nearly empty then).
    static let freeListLimit = 256

    /// Empties the queue and returns the frames that were waiting.
    func discardAll() -> Int {
        lock.withLock {
            let frames = queued
            free.append(contentsOf: blocks[head...].prefix(max(0, Self.freeListLimit - free.count)))
            blocks.removeAll()
            head = 0
            queued = 0
            bufferedFrames.store(0, ordering: .relaxed)
            return frames
        }
    }
}
