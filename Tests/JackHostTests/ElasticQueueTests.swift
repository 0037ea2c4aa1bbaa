import Dispatch
import Foundation
import Synchronization
import XCTest

@testable import JackHost

/// The elastic stage's queue on its own: order, the bound, exact accounting of what is given up.
final class ElasticQueueTests: XCTestCase {
    private func withBlock(frames: Int, value: Float, sequence: UInt64, _ body: (AudioBlock) -> Void) {
        let samples = [[Float]](repeating: [Float](repeating: value, count: frames), count: 2)
        samples.withUnsafeBufferPointers { pointers in
            let view = AudioBufferListView(channels: pointers.baseAddress!, channelCount: 2, frameCount: frames)
            body(AudioBlock(buffers: view, timestamp: .init(frameTime: 0, microseconds: 0, sequence: sequence, xrunSincePreviousCycle: false)))
        }
    }

    func testBlocksComeOutInOrderWithTheirDropCountsAndTheBoundHolds() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1000)
        for index in 0..<3 {
            XCTAssertTrue(queue.hasRoom(for: 256))
            withBlock(frames: 256, value: Float(index), sequence: UInt64(index)) { queue.append($0, droppedFramesBefore: index * 10) }
        }
        XCTAssertFalse(queue.hasRoom(for: 256), "768 + 256 frames would pass the 1000-frame bound")
        XCTAssertEqual(queue.bufferedFrames.load(ordering: .relaxed), 768)
        for index in 0..<3 {
            let block = try! XCTUnwrap(queue.takeOldest())
            let audio = block.audioBlock
            XCTAssertEqual(audio.timestamp.sequence, UInt64(index))
            XCTAssertEqual(audio.droppedFramesBefore, index * 10)
            XCTAssertEqual(audio.buffers[1][255], Float(index), "the samples were copied, not borrowed")
            queue.recycle(block)
        }
        XCTAssertNil(queue.takeOldest())
        XCTAssertEqual(queue.peakFrames.load(ordering: .relaxed), 768)
        XCTAssertEqual(queue.bufferedFrames.load(ordering: .relaxed), 0)
    }

    func testHoldingBackLeavesTheNewestFramesQueued() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 20)
        for index in 0..<4 {
            withBlock(frames: 256, value: Float(index), sequence: UInt64(index)) { queue.append($0, droppedFramesBefore: 0) }
        }
        // 1024 frames queued; keeping 600 back lets out the first block only (768 then 512 left).
        let first = try! XCTUnwrap(queue.takeOldest(leaving: 600))
        XCTAssertEqual(first.audioBlock.timestamp.sequence, 0)
        queue.recycle(first)
        XCTAssertNil(queue.takeOldest(leaving: 600), "taking the next would leave 512 < 600")
        XCTAssertNil(queue.takeOldest(leaving: 600, waitingUpTo: .milliseconds(10)))
        // Without the hold-back (the transfer has ended) everything comes out, in order.
        for index in 1..<4 {
            let block = try! XCTUnwrap(queue.takeOldest(leaving: 0))
            XCTAssertEqual(block.audioBlock.timestamp.sequence, UInt64(index))
            queue.recycle(block)
        }
    }

    func testDiscardingCountsExactlyWhatWaited() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 20)
        for index in 0..<5 { withBlock(frames: 100 + index, value: 0, sequence: 0) { queue.append($0, droppedFramesBefore: 0) } }
        XCTAssertEqual(queue.discardAll(), 510)
        XCTAssertNil(queue.takeOldest())
    }

    func testALargerBlockGrowsARecycledSlot() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 20)
        withBlock(frames: 64, value: 1, sequence: 0) { queue.append($0, droppedFramesBefore: 0) }
        queue.recycle(queue.takeOldest()!)
        withBlock(frames: 4096, value: 2, sequence: 1) { queue.append($0, droppedFramesBefore: 0) }
        let block = queue.takeOldest()!
        XCTAssertEqual(block.audioBlock.frameCount, 4096)
        XCTAssertEqual(block.audioBlock.buffers[0][4095], 2)
    }

    /// A long stall fills the queue with many blocks; once drained, only a bounded free list
    /// stays (the 60-minute soak's memory grew while a 256-block list kept 16 MiB per consumer).
    func testTheFreeListIsCappedInBytesAfterABacklogDrains() {
        let frames = 4096  // 32 KiB per block at 2 channels
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 30)
        let blocks = 1000  // 32 MiB waiting
        for index in 0..<blocks { withBlock(frames: frames, value: 0, sequence: UInt64(index)) { queue.append($0, droppedFramesBefore: 0) } }
        while let block = queue.takeOldest() { queue.recycle(block) }
        let blockBytes = frames * 2 * MemoryLayout<Float>.stride
        XCTAssertLessThanOrEqual(queue.freeListBytes, ElasticQueue.freeListByteLimit)
        XCTAssertGreaterThanOrEqual(queue.freeListBytes, ElasticQueue.freeListByteLimit - blockBytes, "steady work still reuses blocks")
        XCTAssertLessThan(queue.freeListBytes, blocks * blockBytes / 4)
    }

    /// Blocks far larger than the byte cap: a few are still kept, so steady work does not allocate.
    func testAFewLargeBlocksAreKeptWhateverTheirSize() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 30)
        let frames = ElasticQueue.freeListByteLimit / 8  // each block alone is the whole cap
        for _ in 0..<20 { withBlock(frames: frames, value: 0, sequence: 0) { queue.append($0, droppedFramesBefore: 0) } }
        while let block = queue.takeOldest() { queue.recycle(block) }
        XCTAssertEqual(queue.freeListBytes, ElasticQueue.freeListMinimumBlocks * frames * 2 * MemoryLayout<Float>.stride)
    }

    /// A consumer sleeping for a block is woken by the append, not by its timeout.
    func testASleepingConsumerWakesWhenABlockArrives() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 20)
        let taken = expectation(description: "block taken")
        let started = DispatchTime.now()
        let waited = Atomic<UInt64>(0)
        Thread.detachNewThread {
            if queue.takeOldest(waitingUpTo: .seconds(30)) != nil {
                waited.store(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds, ordering: .relaxed)
                taken.fulfill()
            }
        }
        usleep(100_000)
        withBlock(frames: 64, value: 1, sequence: 0) { queue.append($0, droppedFramesBefore: 0) }
        wait(for: [taken], timeout: 10)
        XCTAssertLessThan(waited.load(ordering: .relaxed), 5_000_000_000, "woken by the append, long before the 30 s timeout")
    }

    /// With nothing arriving, the wait ends at its timeout with nil.
    func testAWaitWithNothingArrivingTimesOut() {
        let queue = ElasticQueue(channelCount: 2, limitFrames: 1 << 20)
        XCTAssertNil(queue.takeOldest(waitingUpTo: .milliseconds(20)))
    }
}
