import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// Counting past 2^32 frames (about 25 hours at 48 kHz), where JACK's own 32-bit frame time
/// wraps: rendered in freewheel with 8192-frame periods, and exact to the frame.
final class LongTakeCountingTests: XCTestCase {
    /// A deferred consumer that only counts: the take writes nothing to disk.
    final class FrameCounter: DeferredAudioConsumer, @unchecked Sendable {
        let frames = Atomic<Int>(0)
        let dropsReported = Atomic<Int>(0)
        func prepare(format: StreamFormat) throws {}
        func consume(_ block: AudioBlock) {
            frames.add(block.frameCount, ordering: .relaxed)
            dropsReported.add(block.droppedFramesBefore, ordering: .relaxed)
        }
        func finish() {}
    }

    final class RealtimeCounter: RealtimeAudioConsumer, @unchecked Sendable {
        let frames = Atomic<Int>(0)
        func prepare(format: StreamFormat) throws {}
        func process(_ block: AudioBlock) { frames.add(block.frameCount, ordering: .relaxed) }
        func finish() {}
    }

    func testCountsStayExactPastTwoToTheThirtyTwoFrames() throws {
        let limit = (1 << 32) + 48_000 + 123  // a little past the wrap, and not a multiple of the period
        try JACKFixture.withServer(captureChannels: 2, bufferSize: 8192) { server in
            let deferred = FrameCounter()
            let realtime = RealtimeCounter()
            let host = CaptureHost(configuration: .init(serverName: server.name, frameLimit: limit))
            host.add(deferred: deferred)
            host.add(realtime: realtime)
            try host.start()
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            let started = Date()
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["y"], environment: environment).status, 0)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 240) { host.isComplete }, "captured \(host.statistics.capturedFrames)")
            let seconds = Date().timeIntervalSince(started)
            _ = try? JACKFixture.run("jack_freewheel", ["n"], environment: environment)
            host.stop(drainLimit: 30)
            let stats = host.statistics
            XCTAssertEqual(stats.capturedFrames, limit)
            XCTAssertEqual(realtime.frames.load(ordering: .relaxed), limit, "the real-time consumer saw every frame")
            XCTAssertEqual(deferred.frames.load(ordering: .relaxed), limit, "the deferred consumer saw every frame")
            XCTAssertEqual(stats.consumers.first?.droppedFrames, 0)
            XCTAssertEqual(deferred.dropsReported.load(ordering: .relaxed), 0)
            XCTAssertEqual(stats.timelineGapFrames, 0, "JACK's frame time wrapped at 2^32 without a false gap")
            reliabilityFigures(
                "past 2^32 frames in freewheel (8192-frame periods)",
                "\(limit) frames captured, delivered to both kinds exactly, 0 dropped, 0 false gaps at the frame-time wrap; \(seconds.formatted(places: 0)) s"
            )
        }
    }
}
