import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// A real-time consumer that records into memory allocated in `prepare`: no allocation per cycle.
final class RecordingRealtimeConsumer: RealtimeAudioConsumer, @unchecked Sendable {
    let capacityFrames: Int
    private(set) var storage: [UnsafeMutablePointer<Float>] = []
    private var channelBases: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var channelCount = 0
    let framesWritten = Atomic<Int>(0)
    let blocks = Atomic<Int>(0)
    let blocksWithXrunFlag = Atomic<Int>(0)

    init(capacityFrames: Int) { self.capacityFrames = capacityFrames }

    func prepare(format: StreamFormat) throws {
        channelCount = format.channelCount
        storage = (0..<channelCount).map { _ in
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacityFrames)
            buffer.initialize(repeating: 0, count: capacityFrames)
            return buffer
        }
        channelBases = .allocate(capacity: channelCount)
        for c in 0..<channelCount { channelBases![c] = storage[c] }
    }

    func process(_ block: AudioBlock) {
        let written = framesWritten.load(ordering: .relaxed)
        let count = min(block.frameCount, capacityFrames - written)
        if count > 0 {
            for c in 0..<channelCount {
                (channelBases![c] + written).update(from: block.buffers.channelPointers[c], count: count)
            }
        }
        if block.timestamp.xrunSincePreviousCycle { blocksWithXrunFlag.add(1, ordering: .relaxed) }
        framesWritten.store(written + count, ordering: .releasing)
        blocks.add(1, ordering: .relaxed)
    }

    func finish() {}

    /// A copy of what was recorded.
    func channels() -> [[Float]] {
        let frames = framesWritten.load(ordering: .acquiring)
        return storage.map { Array(UnsafeBufferPointer(start: $0, count: frames)) }
    }

    deinit {
        storage.forEach { $0.deallocate() }
        channelBases?.deallocate()
    }
}

/// A deferred consumer that appends every block to arrays, optionally sleeping to fall behind.
final class RecordingDeferredConsumer: DeferredAudioConsumer, @unchecked Sendable {
    let consumerName: String
    let delayPerBlock: useconds_t
    /// Extra delay per block, adjustable while running.
    let extraDelay = Atomic<UInt32>(0)
    var channels: [[Float]] = []
    var droppedReported = 0
    var blocks = 0
    var preparedFormat: StreamFormat?
    var finished = false
    var lastSequence: UInt64?
    var sequenceGaps = 0

    init(name: String, delayPerBlock: useconds_t = 0) {
        consumerName = name
        self.delayPerBlock = delayPerBlock
    }

    func prepare(format: StreamFormat) throws {
        preparedFormat = format
        channels = Array(repeating: [], count: format.channelCount)
    }

    func consume(_ block: AudioBlock) {
        for c in 0..<block.channelCount { channels[c].append(contentsOf: block.buffers[c]) }
        droppedReported += block.droppedFramesBefore
        if let last = lastSequence, block.timestamp.sequence != last + 1, block.droppedFramesBefore == 0 {
            sequenceGaps += 1
        }
        lastSequence = block.timestamp.sequence
        blocks += 1
        let delay = delayPerBlock + extraDelay.load(ordering: .relaxed)
        if delay > 0 { usleep(delay) }
    }

    func finish() { finished = true }
}
