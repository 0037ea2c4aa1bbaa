import Foundation
import XCTest

@testable import JackHost

final class AudioBlockRingTests: XCTestCase {
    /// Writes `frames` frames whose values encode channel and absolute frame index.
    private static func write(_ ring: AudioBlockRing, start: Int, frames: Int, sequence: UInt64, dropped: Int = 0) -> Bool {
        let channels = (0..<ring.channelCount).map { c in (0..<frames).map { Float(c * 1_000_000 + start + $0) } }
        return channels.withUnsafeBufferPointers { pointers in
            let view = AudioBufferListView(channels: pointers.baseAddress!, channelCount: ring.channelCount, frameCount: frames)
            let stamp = AudioTimestamp(frameTime: UInt32(start), microseconds: 0, sequence: sequence, xrunSincePreviousCycle: false)
            return ring.write(view, timestamp: stamp, droppedFramesBefore: dropped)
        }
    }

    func testBlocksSurviveWraparoundBitExact() {
        let ring = AudioBlockRing(channelCount: 3, minimumFrames: 100)  // exactly 100 frames (under 1024)
        XCTAssertEqual(ring.capacityFrames, 100)
        var written = 0, read = 0
        for sequence in 0..<200 {
            let frames = 48 + sequence % 7  // block sizes that do not divide the capacity
            XCTAssertTrue(Self.write(ring, start: written, frames: frames, sequence: UInt64(sequence)))
            written += frames
            XCTAssertTrue(
                ring.readNext { block in
                    XCTAssertEqual(block.timestamp.sequence, UInt64(sequence))
                    XCTAssertEqual(block.frameCount, frames)
                    for c in 0..<3 {
                        for i in 0..<frames where block.buffers[c][i] != Float(c * 1_000_000 + read + i) {
                            XCTFail("channel \(c) frame \(read + i) wrong")
                            return
                        }
                    }
                })
            read += frames
        }
        XCTAssertFalse(ring.readNext { _ in XCTFail("ring should be empty") })
    }

    func testFullRingRefusesAndReportsDropsInNextBlock() {
        let ring = AudioBlockRing(channelCount: 1, minimumFrames: 64)
        XCTAssertTrue(Self.write(ring, start: 0, frames: 32, sequence: 0))
        XCTAssertTrue(Self.write(ring, start: 32, frames: 32, sequence: 1))
        XCTAssertFalse(Self.write(ring, start: 64, frames: 32, sequence: 2), "a full ring must refuse")
        XCTAssertTrue(ring.readNext { XCTAssertEqual($0.buffers[0][0], 0) })
        XCTAssertTrue(Self.write(ring, start: 96, frames: 32, sequence: 3, dropped: 32))
        XCTAssertTrue(ring.readNext { XCTAssertEqual($0.buffers[0][0], 32) })
        XCTAssertTrue(
            ring.readNext { block in
                XCTAssertEqual(block.droppedFramesBefore, 32)
                XCTAssertEqual(block.buffers[0][0], 96)
                XCTAssertEqual(block.timestamp.sequence, 3)
            })
    }

    func testHeaderCapacityLimitsBlocksInFlight() {
        let ring = AudioBlockRing(channelCount: 1, minimumFrames: 1024, maximumBlocks: 2)
        XCTAssertTrue(Self.write(ring, start: 0, frames: 1, sequence: 0))
        XCTAssertTrue(Self.write(ring, start: 1, frames: 1, sequence: 1))
        XCTAssertFalse(Self.write(ring, start: 2, frames: 1, sequence: 2))
        XCTAssertEqual(ring.pendingBlocks, 2)
        // The writer's cached copies of the reader's positions say full until it loads them again.
        XCTAssertTrue(ring.readNext { XCTAssertEqual($0.timestamp.sequence, 0) })
        XCTAssertTrue(Self.write(ring, start: 2, frames: 1, sequence: 2), "a released slot is seen")
        XCTAssertFalse(Self.write(ring, start: 3, frames: 1, sequence: 3))
        XCTAssertEqual([1, 2].map { want in ring.readNext { XCTAssertEqual($0.timestamp.sequence, UInt64(want)) } }, [true, true])
        XCTAssertFalse(ring.readNext { _ in XCTFail("empty") })
    }

    /// Across threads, with both copy paths: plain stores (64 frames) and streaming stores
    /// with a store fence (256 frames and more), including a size that wraps unevenly.
    func testConcurrentWriterAndReaderDeliverEveryFrameOnce() {
        for frames in [64, 256, 1024, 300] {
            let ring = AudioBlockRing(channelCount: 2, minimumFrames: 4 * frames)
            let blocks = 3_000_000 / frames
            let done = DispatchSemaphore(value: 0)
            let writer = Thread {
                var sequence = 0
                while sequence < blocks {
                    if Self.write(ring, start: sequence * frames, frames: frames, sequence: UInt64(sequence)) { sequence += 1 }
                }
                done.signal()
            }
            writer.start()
            var next = 0, errors = 0
            while next < blocks * frames {
                _ = ring.readNext { block in
                    for c in 0..<2 {
                        for i in 0..<block.frameCount where block.buffers[c][i] != Float(c * 1_000_000 + next + i) { errors += 1 }
                    }
                    next += block.frameCount
                }
            }
            done.wait()
            XCTAssertEqual(errors, 0, "\(frames)-frame blocks")
            XCTAssertEqual(next, blocks * frames)
        }
    }

    func testStreamingAndPlainCopiesBothSurviveWraparoundBitExact() {
        // Blocks of 256 frames and more go in with streaming stores, shorter ones with plain
        // stores; mix both across many wraps of an odd-sized ring.
        let ring = AudioBlockRing(channelCount: 5, minimumFrames: 1000)
        XCTAssertEqual(ring.capacityFrames, 1000)
        var written = 0, read = 0, mismatches = 0
        for sequence in 0..<300 {
            let frames = [64, 300, 17, 256, 511, 3][sequence % 6]
            XCTAssertTrue(Self.write(ring, start: written, frames: frames, sequence: UInt64(sequence)))
            written += frames
            XCTAssertTrue(
                ring.readNext { block in
                    for c in 0..<5 {
                        for i in 0..<frames where block.buffers[c][i] != Float(c * 1_000_000 + read + i) { mismatches += 1 }
                    }
                })
            read += frames
        }
        XCTAssertEqual(mismatches, 0)
        XCTAssertEqual(read, written)
    }

    func testCapacityIsTheMinimumRoundedUpTo1024FramesNotToAPowerOfTwo() {
        // 2.5 s at 48 kHz: 120000 frames -> 118 x 1024 (a power of two would be 131072).
        XCTAssertEqual(AudioBlockRing(channelCount: 1, minimumFrames: 120_000).capacityFrames, 120_832)
        XCTAssertEqual(AudioBlockRing(channelCount: 1, minimumFrames: 96_000).capacityFrames, 96_256)
        XCTAssertEqual(AudioBlockRing(channelCount: 1, minimumFrames: 8192).capacityFrames, 8192)
        XCTAssertEqual(AudioBlockRing(channelCount: 1, minimumFrames: 700).capacityFrames, 700)
    }
}
