import JackHostTesting
import XCTest

/// The checker itself, without JACK: it accepts an exact take and catches every loss,
/// including one of exactly 65,536 frames, which the old 16-bit sequence could not show.
final class SequenceCheckTests: XCTestCase {
    private func take(frames: Range<Int>, channels: Int = 2, removing removed: Range<Int>? = nil) -> [[Float]] {
        (0..<channels).map { c in
            frames.filter { removed?.contains($0) != true }.map { TestSignal.sequenceValue(channel: c, frame: $0) }
        }
    }

    func testAnExactTakePassesAcrossManyWraps() {
        let report = SequenceCheck.verify(take(frames: 60_000..<400_000, channels: 3))
        XCTAssertNil(report.firstMismatch, "\(report)")
        XCTAssertEqual(report.firstFrame, 60_000)
    }

    func testALossOfExactlyOneWrapIsCaught() {
        for lost in [1, 4096, 65_536, 2 * 65_536] {
            let report = SequenceCheck.verify(take(frames: 10_000..<400_000, removing: 100_000..<(100_000 + lost)))
            XCTAssertNotNil(report.firstMismatch, "a loss of \(lost) frames must show")
        }
        let gaps = SequenceCheck.verifyGapsFilledWithSilence(take(frames: 10_000..<300_000, removing: 100_000..<165_536))
        XCTAssertEqual(gaps.jumps, [65_536])
    }
}
