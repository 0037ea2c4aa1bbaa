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
}
