import XCTest

@testable import JackHost

/// The consumer contract holds whatever happens around it, and counters are kept per consumer.
final class ConsumerContractTests: XCTestCase {
    final class Counting: DeferredAudioConsumer, @unchecked Sendable {
        let consumerName: String
        var prepares = 0, finishes = 0, refuseFrom = Int.max
        init(_ name: String) { consumerName = name }
        func prepare(format: StreamFormat) throws {
            prepares += 1
            if prepares >= refuseFrom { throw CaptureHostError.consumerRejectedFormat(consumer: consumerName, reason: "no") }
        }
        func consume(_ block: AudioBlock) {}
        func finish() { finishes += 1 }
    }

    /// A failed re-prepare (after a reconnect with a new format) used to finish consumers twice,
    /// or finish one whose prepare had just refused.
    func testARefusedReprepareNeverCausesADoubleFinish() {
        let registry = ConsumerRegistry()
        let first = Counting("first"), refusing = Counting("refusing"), last = Counting("last")
        refusing.refuseFrom = 2
        for consumer in [first, refusing, last] { registry.add(deferred: consumer, ringSeconds: nil) }
        XCTAssertNoThrow(try registry.prepareAll(format: StreamFormat(sampleRate: 48000, channelCount: 2)))
        registry.finishAll()  // format change: finish ...
        XCTAssertThrowsError(try registry.prepareAll(format: StreamFormat(sampleRate: 44100, channelCount: 3)))  // ... refused
        registry.finishAll()  // the host stops
        XCTAssertEqual(
            [first.finishes, refusing.finishes, last.finishes], [2, 1, 1],
            "each finish answers one accepted prepare; the refusing one is not finished again")
        XCTAssertEqual([first.prepares, refusing.prepares, last.prepares], [2, 2, 1], "nothing after the refusal is prepared")
    }

    func testAnUnresponsiveConsumerIsNeverCalledAgain() {
        let registry = ConsumerRegistry()
        let stuck = Counting("stuck"), fine = Counting("fine")
        registry.add(deferred: stuck, ringSeconds: nil)
        registry.add(deferred: fine, ringSeconds: nil)
        XCTAssertNoThrow(try registry.prepareAll(format: StreamFormat(sampleRate: 48000, channelCount: 1)))
        registry.markUnresponsive(deferredIndex: 0)
        registry.finishAll()
        XCTAssertEqual([stuck.finishes, fine.finishes], [0, 1])
        XCTAssertEqual(registry.responsiveDeferred.map(\.index), [1])
    }

    /// Two instances of one plugin share a name; their counters must not merge.
    func testStatisticsAreKeptPerConsumerNotPerName() {
        var first = CaptureStatistics(consumerNames: ["plugin", "plugin"])
        var session = CaptureStatistics()
        session.capturedFrames = 1000
        session.consumers = [
            .init(name: "plugin", index: 0, deliveredFrames: 1000),
            .init(name: "plugin", index: 1, deliveredFrames: 400, droppedFrames: 600),
        ]
        first = first.adding(session).adding(session)
        XCTAssertEqual(first.capturedFrames, 2000)
        XCTAssertEqual(first.consumers.map(\.droppedFrames), [0, 1200])
        XCTAssertEqual(first.consumers.map(\.deliveredFrames), [2000, 800])
        XCTAssertEqual(first.mostFramesLostByOneConsumer, 1200)
    }

    /// At a 64-frame period a "2.5 s" ring used to hold 1024 blocks, 1.37 s.
    func testRingDepthIsTheSecondsAskedForAtAnyPeriod() {
        for period in [16, 32, 64, 256] {
            let frames = 120_000  // 2.5 s at 48 kHz
            let runner = DeferredConsumerRunner(consumer: Counting("r"), index: 0, channelCount: 1, ringFrames: frames, pollMicroseconds: 1000)
            var written = 0
            let samples = [Float](repeating: 0, count: period)
            samples.withUnsafeBufferPointer { buffer in
                var base = buffer.baseAddress!
                withUnsafePointer(to: &base) { pointer in
                    let view = AudioBufferListView(channels: pointer, channelCount: 1, frameCount: period)
                    while runner.ring.write(
                        view, timestamp: .init(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false),
                        droppedFramesBefore: 0)
                    {
                        written += period
                    }
                }
            }
            XCTAssertGreaterThanOrEqual(written, frames - period, "period \(period): the ring held \(written) frames")
        }
    }
}
