import XCTest

@testable import JackHost

final class CallbackTimerTests: XCTestCase {
    func testTenthsOfAMicrosecondBelowOneMillisecond() {
        let timer = CallbackTimer()
        // 98 callbacks of 2.3 µs, one of 3.1 µs, one of 1.5 ms: p50 2.3, p99 3.1, max 1500.
        for _ in 0..<98 { timer.record(nanoseconds: 2_345) }
        timer.record(nanoseconds: 3_199)
        timer.record(nanoseconds: 1_500_400)
        let summary = timer.summary
        XCTAssertEqual(summary.count, 100)
        XCTAssertEqual(summary.p50, 2.3, accuracy: 1e-9)
        XCTAssertEqual(summary.p99, 3.1, accuracy: 1e-9)
        XCTAssertEqual(summary.max, 1500.4, accuracy: 1e-9)
        XCTAssertEqual(summary.description, "callback_us count=100 p50=2.3 p99=3.1 max=1500.4")
    }

    func testWholeMicrosecondsAboveOneMillisecondAndOverflowKeepsTheMaximum() {
        XCTAssertEqual(CallbackTimer.lowerBound(ofBucket: CallbackTimer.bucket(999_999)), 999.9, accuracy: 1e-9)
        XCTAssertEqual(CallbackTimer.lowerBound(ofBucket: CallbackTimer.bucket(1_000_000)), 1000, accuracy: 1e-9)
        XCTAssertEqual(CallbackTimer.lowerBound(ofBucket: CallbackTimer.bucket(7_654_321)), 7654, accuracy: 1e-9)
        let timer = CallbackTimer()
        timer.record(nanoseconds: 90_000_000_000)  // 90 s: the last bucket, the maximum exact
        XCTAssertEqual(timer.summary.p99, 20_999, accuracy: 1e-9)
        XCTAssertEqual(timer.summary.max, 90_000_000, accuracy: 1e-9)
    }

    func testNoCallbacksGiveZeros() {
        XCTAssertEqual(CallbackTimer().summary, CallbackTimeSummary(count: 0, p50: 0, p99: 0, max: 0))
    }
}
