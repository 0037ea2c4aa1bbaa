import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// Blocks as a consumer asks for them: fixed sizes, channel subsets, sample rates (libsoxr).
final class BlockShapeTests: XCTestCase {
    /// Keeps a copy of everything it is given.
    final class Collector: DeferredAudioConsumer {
        var format: StreamFormat?
        var samples: [[Float]] = []
        var blockSizes: [Int] = []
        var sequences: [UInt64] = []
        var drops: [Int] = []
        var finished = false
        func prepare(format: StreamFormat) throws {
            self.format = format
            samples = Array(repeating: [], count: format.channelCount)
        }
        func consume(_ block: AudioBlock) {
            blockSizes.append(block.frameCount)
            sequences.append(block.timestamp.sequence)
            drops.append(block.droppedFramesBefore)
            for channel in 0..<block.channelCount { samples[channel] += Array(block.buffers[channel]) }
        }
        func finish() { finished = true }
    }

    /// Feeds `channels` (one array per channel) in `period`-frame blocks.
    private func feed(
        _ consumer: ShapedDeferredConsumer, _ channels: [[Float]], rate: Double = 48000, period: Int = 256, dropBefore: [Int: Int] = [:]
    ) throws {
        try consumer.prepare(format: StreamFormat(sampleRate: rate, channelCount: channels.count))
        let frames = channels[0].count
        var start = 0
        var cycle = 0
        while start < frames {
            let count = min(period, frames - start)
            let slices = channels.map { Array($0[start..<start + count]) }
            slices.withUnsafeBufferPointers { pointers in
                consumer.consume(
                    AudioBlock(
                        buffers: AudioBufferListView(channels: pointers.baseAddress!, channelCount: channels.count, frameCount: count),
                        timestamp: AudioTimestamp(frameTime: UInt32(start), microseconds: 0, sequence: UInt64(cycle), xrunSincePreviousCycle: false),
                        droppedFramesBefore: dropBefore[cycle] ?? 0))
            }
            start += count
            cycle += 1
        }
        consumer.finish()
    }

    private func ramp(_ frames: Int, channel: Int) -> [Float] { (0..<frames).map { Float($0 * 10 + channel) } }

    func testFixedSizeBlocksCarryEveryFrameInOrder() throws {
        let collector = Collector()
        let shaped = ShapedDeferredConsumer(collector, shape: BlockShape(frames: 1000))
        try feed(shaped, [ramp(10_240, channel: 0), ramp(10_240, channel: 1)])
        XCTAssertEqual(collector.blockSizes.dropLast(), Array(repeating: 1000, count: 10))
        XCTAssertEqual(collector.blockSizes.last, 240, "the last block of a run is shorter")
        XCTAssertEqual(collector.sequences, (0..<11).map(UInt64.init))
        XCTAssertEqual(collector.samples, [ramp(10_240, channel: 0), ramp(10_240, channel: 1)], "every frame once, in order")
        XCTAssertTrue(collector.finished)
        XCTAssertEqual(collector.format, StreamFormat(sampleRate: 48000, channelCount: 2))
    }

    func testAChannelSubsetInTheOrderAsked() throws {
        let collector = Collector()
        let shaped = ShapedDeferredConsumer(collector, shape: BlockShape(channels: [2, 0]))
        try feed(shaped, (0..<3).map { ramp(1000, channel: $0) })
        XCTAssertEqual(collector.format?.channelCount, 2)
        XCTAssertEqual(collector.samples, [ramp(1000, channel: 2), ramp(1000, channel: 0)])
        XCTAssertEqual(collector.blockSizes, [256, 256, 256, 232], "without a size, blocks pass as they come")
    }

    func testAChannelTheStreamDoesNotHaveIsRefusedAtPrepare() {
        let shaped = ShapedDeferredConsumer(Collector(), shape: BlockShape(channels: [0, 4]))
        XCTAssertThrowsError(try shaped.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))) { error in
            XCTAssertEqual(String(describing: error), "channel 5 was asked for, but the stream has 2 channels")
        }
    }

    /// 1 s of a 1 kHz sine at 48 kHz, converted to 16 kHz in 512-frame blocks by libsoxr: the
    /// length, the frequency and the level survive.
    func testResamplingKeepsLengthFrequencyAndLevel() throws {
        let collector = Collector()
        let shaped = ShapedDeferredConsumer(collector, shape: BlockShape(frames: 512, sampleRate: 16000))
        let sine = (0..<48000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        try feed(shaped, [sine])
        XCTAssertEqual(collector.format, StreamFormat(sampleRate: 16000, channelCount: 1))
        let out = collector.samples[0]
        XCTAssertEqual(out.count, 16000, accuracy: 2, "a third of the frames, the filter's tail flushed at finish")
        XCTAssertTrue(collector.blockSizes.dropLast().allSatisfy { $0 == 512 })
        // Away from the edges (the filter's delay and tail), the level and frequency.
        let middle = Array(out[2000..<14000])
        let rms = sqrt(middle.map { Double($0 * $0) }.reduce(0, +) / Double(middle.count))
        XCTAssertEqual(rms, 0.5 / sqrt(2), accuracy: 0.002)
        let crossings = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertEqual(Double(crossings) / (Double(middle.count) / 16000), 1000, accuracy: 2)
    }

    func testDropsAreCarriedAtTheOutputRate() throws {
        let collector = Collector()
        let shaped = ShapedDeferredConsumer(collector, shape: BlockShape(frames: 256, sampleRate: 16000))
        try feed(shaped, [[Float](repeating: 0, count: 48000)], dropBefore: [10: 480])
        XCTAssertEqual(collector.drops.reduce(0, +), 160, "480 frames at 48 kHz are 160 at 16 kHz")
    }

    func testChannelListsParseAsUsersWriteThem() {
        XCTAssertEqual(BlockShape.channels(parsing: "1-2"), [0, 1])
        XCTAssertEqual(BlockShape.channels(parsing: "1,3,5-6"), [0, 2, 4, 5])
        XCTAssertEqual(BlockShape.channels(parsing: "4,1"), [3, 0])
        for bad in ["0", "2-1", "1,1", "", "a", "1-", "1025", "1--2"] {
            XCTAssertNil(BlockShape.channels(parsing: bad), bad)
        }
        XCTAssertEqual(BlockShape(frames: 1024, channels: [0, 1], sampleRate: 16000).description, "block-frames=1024 channels=1,2 sample-rate=16000")
    }

    /// The real-time subset: pointers only.
    func testTheRealtimeSubsetPassesPointersOnly() throws {
        final class Probe: RealtimeAudioConsumer {
            var first: [Float] = []
            var format: StreamFormat?
            func prepare(format: StreamFormat) throws { self.format = format }
            func process(_ block: AudioBlock) { first = Array(block.buffers[0]) }
            func finish() {}
        }
        let probe = Probe()
        let subset = ChannelSubsetConsumer(probe, channels: [1])
        try subset.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        XCTAssertEqual(probe.format?.channelCount, 1)
        let channels = [ramp(64, channel: 0), ramp(64, channel: 1)]
        channels.withUnsafeBufferPointers { pointers in
            subset.process(
                AudioBlock(
                    buffers: AudioBufferListView(channels: pointers.baseAddress!, channelCount: 2, frameCount: 64),
                    timestamp: AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)))
        }
        XCTAssertEqual(probe.first, ramp(64, channel: 1))
    }
}

extension Array where Element == [Float] {
    /// Calls `body` with stable pointers to copies of each inner array's storage.
    fileprivate func withUnsafeBufferPointers<R>(_ body: (UnsafeBufferPointer<UnsafePointer<Float>>) -> R) -> R {
        let copies = map { inner -> UnsafeMutablePointer<Float> in
            let copy = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(inner.count, 1))
            copy.initialize(from: inner, count: inner.count)
            return copy
        }
        defer { copies.forEach { $0.deallocate() } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer(body)
    }
}
