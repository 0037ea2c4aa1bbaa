import Foundation
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// The alarms' state machines window by window, and the watch fed directly: dead air raised
/// after exactly its windows of silence and cleared after its windows of sound; clipping raised
/// at its count within a minute and cleared after a clean one; an inter-sample peak (a sine at a
/// quarter of the rate, sampled off its crests) seen as true peak, not sample peak.
final class AlarmWatchTests: XCTestCase {
    func testSilenceTrackerRaisesAfterItsWindowsAndClearsAfterItsSound() {
        var tracker = SilenceTracker(AlarmRules.Silence(levelDBFS: -50, after: 1, clearAfter: 0.3))
        let quiet: Float = 0.001  // -60 dBFS
        let loud: Float = 0.1
        for _ in 0..<9 { XCTAssertNil(tracker.window(peak: quiet)) }
        XCTAssertEqual(tracker.window(peak: quiet), true, "the tenth quiet window of 100 ms")
        XCTAssertNil(tracker.window(peak: quiet), "raised once")
        XCTAssertNil(tracker.window(peak: loud))
        XCTAssertNil(tracker.window(peak: quiet), "a blip of sound does not clear it")
        XCTAssertNil(tracker.window(peak: loud))
        XCTAssertNil(tracker.window(peak: loud))
        XCTAssertEqual(tracker.window(peak: loud), false, "three loud windows in a row")
    }

    func testClipTrackerCountsWithinAMinuteAndClearsAfterACleanOne() {
        var tracker = ClipTracker(count: 3)
        XCTAssertNil(tracker.window(over: true))
        for _ in 0..<100 { XCTAssertNil(tracker.window(over: false)) }
        XCTAssertNil(tracker.window(over: true))
        XCTAssertEqual(tracker.window(over: true), true, "three overs within 600 windows")
        for _ in 0..<498 { XCTAssertNil(tracker.window(over: false)) }
        XCTAssertEqual(tracker.inLastMinute, 2, "the first over has left the minute")
        for _ in 0..<101 { XCTAssertNil(tracker.window(over: false)) }
        XCTAssertEqual(tracker.window(over: false), false, "a minute (600 windows) without an over")
    }

    /// A sine at 12 kHz (a quarter of 48 kHz) phased 45 degrees: every sample sits at 0.707 of
    /// the crest, so sample peak is -3 dB under the true peak. With the crest at -0.5 dBFS, the
    /// samples read -3.5 dBFS (no clip) while the true peak is over -1 dBTP (clip).
    func testTruePeakSeesTheInterSamplePeak() throws {
        let watch = AlarmWatch(rules: AlarmRules(clipCount: 2))
        try watch.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let crest = pow(10, -0.5 / 20)
        var frame = 0
        for _ in 0..<(48000 / 256) {
            let samples = (0..<256).map { Float(crest * sin(2 * Double.pi * 12000 * Double(frame + $0) / 48000 + Double.pi / 4)) }
            XCTAssertLessThan(samples.map(abs).max() ?? 1, Float(pow(10, -3.4 / 20)), "every sample 3 dB under the crest")
            withBlock([samples]) { watch.consume($0) }
            frame += 256
        }
        let events = watch.takeEvents()
        XCTAssertEqual(events.map(\.kind), [.clip], "\(events)")
        XCTAssertEqual(events.first?.raised, true)
        XCTAssertEqual(events.first?.position, 2 * 4800, "raised at the end of the second window")
        XCTAssertEqual(watch.active.map(\.source), ["in_1"])
    }

    func testProgrammesAreWatchedInsteadOfInputs() throws {
        let watch = AlarmWatch(
            rules: AlarmRules(silence: .init(levelDBFS: -50, after: 1, clearAfter: 1)), programmes: [try LoudnessProgramme(parsing: "1-2")])
        try watch.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 3))
        // Input 3 is silent and not watched; input 2 carries sound, so the programme is not silent.
        for _ in 0..<(2 * 48000 / 256) {
            withBlock([[Float](repeating: 0, count: 256), [Float](repeating: 0.1, count: 256), [Float](repeating: 0, count: 256)]) {
                watch.consume($0)
            }
        }
        XCTAssertEqual(watch.takeEvents(), [])
        for _ in 0..<(2 * 48000 / 256) { withBlock(Array(repeating: [Float](repeating: 0, count: 256), count: 3)) { watch.consume($0) } }
        XCTAssertEqual(watch.takeEvents().map(\.source), ["1-2"])
    }
}
