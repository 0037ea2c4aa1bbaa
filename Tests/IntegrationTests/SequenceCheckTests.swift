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

    /// A take whose frame numbers are `numbers`, in that order.
    private func take(numbers: [Int], channels: Int = 2) -> [[Float]] {
        (0..<channels).map { c in numbers.map { TestSignal.sequenceValue(channel: c, frame: $0) } }
    }

    func testAsynchronousBreaksMustBeReportedAsSkipsOrXruns() {
        let skipped = "jackhost: the server's clock skipped this client 1 time(s), 256 frames in all (frame time jumped)"
        let xrun = "jackhost: xruns: 1, dropped frames: 0"
        let jump = take(numbers: Array(1000..<5000) + Array(5256..<9000))
        XCTAssertNil(SequenceCheck.verifyBesideServerSkips(jump, jackhostStderr: skipped).failure)
        XCTAssertNotNil(SequenceCheck.verifyBesideServerSkips(jump, jackhostStderr: "").failure, "an unreported jump fails")
        XCTAssertNil(SequenceCheck.verifyBesideServerSkips(jump, jackhostStderr: xrun).failure, "a late cycle, counted as an xrun")
        let repeated = take(numbers: Array(1000..<5000) + Array(4744..<9000))
        XCTAssertNotNil(SequenceCheck.verifyBesideServerSkips(repeated, jackhostStderr: skipped).failure, "a repeat is no skip")
        XCTAssertNil(SequenceCheck.verifyBesideServerSkips(repeated, jackhostStderr: xrun).failure)
        let twice = take(numbers: Array(1000..<5000) + Array(4744..<7000) + Array(6744..<9000))
        XCTAssertNotNil(SequenceCheck.verifyBesideServerSkips(twice, jackhostStderr: xrun).failure, "one xrun covers one break")
        var silent = take(numbers: Array(1000..<9000))
        for c in silent.indices { silent[c].replaceSubrange(4000..<4256, with: repeatElement(0, count: 256)) }
        XCTAssertNotNil(
            SequenceCheck.verifyBesideServerSkips(silent, jackhostStderr: skipped + "\n" + xrun).failure, "silence is jackhost's own")
    }

    func testJunctionsMatchAnIndependentTakeByContent() {
        // netjack2 handed a period twice and tore one; both recorders saw it, from different starts.
        let graph = Array(0..<20_000) + Array(19_744..<30_000) + Array(30_128..<50_000)
        let independent = SequenceJunctions(take(numbers: Array(graph[100...])), skippingLeadIn: true)
        var ours = take(numbers: Array(graph[3000..<45_000]))
        // The take starts before its ports are connected, and they are connected one by one.
        for c in ours.indices { ours[c].insert(contentsOf: repeatElement(0, count: 700), at: 0) }
        ours[1].replaceSubrange(700..<956, with: repeatElement(0, count: 256))
        let junctions = SequenceJunctions(ours, skippingLeadIn: true)
        XCTAssertEqual(junctions.leadIn, 956)
        XCTAssertEqual(junctions.junctions.count, 2, "the sequence's own zeros are no break: \(junctions.junctions)")
        XCTAssertNil(junctions.coverageProblem(by: independent))
        XCTAssertEqual(junctions.junctions(missingFrom: independent), [])
        // A block jackhost repeated, dropped, or wrote as silence is in no one else's take.
        for own in [
            Array(graph[3000..<10_000]) + Array(graph[9744..<45_000]), Array(graph[3000..<10_000]) + Array(graph[10_256..<45_000]),
        ] {
            let defect = SequenceJunctions(take(numbers: own), skippingLeadIn: true)
            XCTAssertEqual(defect.junctions(missingFrom: independent).count, 1)
        }
        var silenced = take(numbers: Array(graph[3000..<45_000]))
        for c in silenced.indices { silenced[c].replaceSubrange(5000..<5256, with: repeatElement(0, count: 256)) }
        let silence = SequenceJunctions(silenced, skippingLeadIn: true)
        XCTAssertEqual(silence.silentFrames, 256)
        XCTAssertEqual(silence.junctions(missingFrom: independent).count, 1)
        // A channel that goes silent (its frames still decode, to numbers that jump about).
        var lost = take(numbers: Array(graph[3000..<45_000]))
        lost[1].replaceSubrange(8000..<8256, with: repeatElement(0, count: 256))
        XCTAssertEqual(SequenceJunctions(lost, skippingLeadIn: true).junctions(missingFrom: independent).count, 1)
        // Channels out of step by one frame, from some point on (with two channels the pair still
        // decodes, as frame numbers 31 * 65,536 away, so it shows as jumps no one else saw).
        var skewed = take(numbers: Array(graph[3000..<45_000]))
        skewed[1].remove(at: 6000)
        skewed[1].append(0)
        XCTAssertFalse(SequenceJunctions(skewed, skippingLeadIn: true).junctions(missingFrom: independent).isEmpty)
    }
}
