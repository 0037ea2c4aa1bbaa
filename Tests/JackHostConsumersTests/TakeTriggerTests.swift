import Glibc
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// The pieces of triggered and time-stamped takes, without a server.
final class TakeTriggerTests: XCTestCase {
    func testPreRollKeepsTheNewestFramesInOrder() {
        let buffer = PreRollBuffer(capacityFrames: 5, bytesPerFrame: 4)
        var values: [UInt32] = Array(0..<8)
        values.withUnsafeBytes { buffer.append($0.baseAddress!, frames: 3) }  // 0 1 2
        values.withUnsafeBytes { buffer.append($0.baseAddress! + 12, frames: 5) }  // 3...7 pushes out 0 1 2
        XCTAssertEqual(buffer.frameCount, 5)
        var drained: [UInt32] = []
        buffer.drain { bytes, count in drained += UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt32.self), count: count) }
        XCTAssertEqual(drained, [3, 4, 5, 6, 7])
        XCTAssertEqual(buffer.frameCount, 0)
        values = Array(100..<120)
        values.withUnsafeBytes { buffer.append($0.baseAddress!, frames: 20) }  // larger than the capacity at once
        drained = []
        buffer.drain { bytes, count in drained += UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt32.self), count: count) }
        XCTAssertEqual(drained, [115, 116, 117, 118, 119])
    }

    func testLevelGateStartsOnTheFirstLoudFrameAndStopsAfterTheHold() {
        let gate = TriggerGate(trigger: .level(thresholdDBFS: -40, holdSeconds: 0.001), sampleRate: 4000)  // hold: 4 frames
        let samples: [Float] = [0, 0.001, 0.02, 0.5, 0, 0, 0, 0.009, 0, 0.3]
        let peak = { (i: Int) in abs(samples[i]) }
        XCTAssertEqual(gate.nextChange(from: 0, frames: samples.count, transportRolling: false, freewheeling: false, peak: peak), 2)
        gate.setRecording(true)
        // Quiet from frame 4: frames 4, 5, 6, 7 (0.009 < 0.01) make the hold; the take ends after frame 7.
        XCTAssertEqual(gate.nextChange(from: 2, frames: samples.count, transportRolling: false, freewheeling: false, peak: peak), 8)
        gate.setRecording(false)
        XCTAssertEqual(gate.nextChange(from: 8, frames: samples.count, transportRolling: false, freewheeling: false, peak: peak), 9)
        XCTAssertEqual(TriggerGate.amplitude(dBFS: -40), 0.01, accuracy: 1e-12)
    }

    /// `--trigger -20dBFS --release -40dBFS`: between the two levels a take neither starts nor
    /// stops; it starts above the first and stops after the hold below the second.
    func testALevelTriggerWithHysteresisStartsAboveOneLevelAndStopsBelowTheOther() {
        let gate = TriggerGate(
            trigger: .level(thresholdDBFS: -20, holdSeconds: 0.003), sampleRate: 1000, shape: LevelShape(releaseDBFS: -40))  // hold: 3 frames
        // 0.05 is -26 dBFS (between), 0.2 is -14 (above), 0.001 is -60 (below).
        let samples: [Float] = [0.05, 0.05, 0.2, 0.05, 0.05, 0.05, 0.05, 0.001, 0.05, 0.001, 0.001, 0.001, 0.05, 0.05]
        let peak = { (i: Int) in samples[i] }
        let next = { (from: Int) in gate.nextChange(from: from, frames: samples.count, transportRolling: false, freewheeling: false, peak: peak) }
        XCTAssertEqual(next(0), 2, "between the levels does not start a take")
        gate.setRecording(true)
        XCTAssertEqual(next(2), 12, "between the levels keeps it; three frames below the release stop it")
        gate.setRecording(false)
        XCTAssertNil(next(12), "between the levels does not start the next one")
    }

    /// `--min-take`: a burst that falls quiet for the hold before the minimum leaves no take; a
    /// longer one opens once it has lasted the minimum (the recorder's pre-roll holds the rest).
    /// `--max-take` ends a take while it is still loud, counted from its first loud frame.
    func testMinimumAndMaximumTakes() {
        let gate = TriggerGate(
            trigger: .level(thresholdDBFS: -20, holdSeconds: 0.002), sampleRate: 1000,
            shape: LevelShape(minTakeSeconds: 0.005, maxTakeSeconds: 0.008))  // hold 2, min 5, max 8 frames
        let samples: [Float] = [0.5, 0.5, 0, 0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
        let peak = { (i: Int) in samples[i] }
        let next = { (from: Int) in gate.nextChange(from: from, frames: samples.count, transportRolling: false, freewheeling: false, peak: peak) }
        // Frames 0-1 loud, 2-3 quiet (the hold): a cough, no take. From frame 5 the sound (with a
        // one-frame gap, shorter than the hold) reaches five frames at frame 9.
        XCTAssertEqual(next(0), 10, "opened after frame 9, not at the cough")
        gate.setRecording(true)
        XCTAssertEqual(next(10), 13, "eight frames from its first loud frame (5): ends after frame 12, still loud")
        gate.setRecording(false)
        XCTAssertNil(next(13), "the next candidate (frames 13-14) has not lasted five frames yet")
    }

    func testTransportFreewheelAndRequestGatesChangeAtTheBlock() {
        let never = { (_: Int) -> Float in 0 }
        let transport = TriggerGate(trigger: .transport, sampleRate: 48000)
        XCTAssertNil(transport.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never))
        XCTAssertEqual(transport.nextChange(from: 0, frames: 64, transportRolling: true, freewheeling: false, peak: never), 0)
        transport.setRecording(true)
        XCTAssertNil(transport.nextChange(from: 0, frames: 64, transportRolling: true, freewheeling: false, peak: never))
        XCTAssertEqual(transport.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never), 0)

        let freewheel = TriggerGate(trigger: .freewheel, sampleRate: 48000)
        XCTAssertEqual(freewheel.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: true, peak: never), 0)

        let request = TriggerGate(trigger: .request, sampleRate: 48000)
        XCTAssertNil(request.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never))
        request.requestStop(at: 0)
        XCTAssertNil(request.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never), "no take to stop")
        request.requestStart(at: 0)
        XCTAssertEqual(request.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never), 0)
        request.setRecording(true)
        XCTAssertNil(request.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never))
        request.requestStop(at: 0)
        XCTAssertEqual(request.nextChange(from: 0, frames: 64, transportRolling: false, freewheeling: false, peak: never), 0)
    }

    /// The last explicit command wins over an automatic trigger until the next take: a start
    /// opens a take in silence and the level's hold does not close it; a stop closes a take
    /// while the level is loud, and the trigger opens the next one only after it has released.
    func testExplicitCommandsHoldALevelTriggerUntilTheNextTake() {
        let gate = TriggerGate(trigger: .level(thresholdDBFS: -40, holdSeconds: 0.001), sampleRate: 4000)  // hold: 4 frames
        let quiet = { (_: Int) -> Float in 0 }, loud = { (_: Int) -> Float in 0.5 }
        func change(_ peak: (Int) -> Float) -> Int? {
            gate.nextChange(from: 0, frames: 16, transportRolling: false, freewheeling: false, peak: peak)
        }
        XCTAssertNil(change(quiet))
        gate.requestStart(at: 0)
        XCTAssertEqual(change(quiet), 0, "an explicit start opens a take in silence")
        gate.setRecording(true)
        XCTAssertNil(change(quiet), "and the hold does not close it")
        XCTAssertNil(change(quiet))
        gate.requestStop(at: 0)
        XCTAssertEqual(change(quiet), 0, "an explicit stop closes it")
        gate.setRecording(false)
        // Held closed: loud blocks open nothing until the level has been quiet for the hold.
        XCTAssertNil(change(loud), "a stop wins over a loud input")
        XCTAssertNil(change(loud))
        XCTAssertNil(change(quiet), "released: quiet for the hold")
        XCTAssertEqual(change(loud), 0, "the trigger's next take")
        gate.setRecording(true)
        // A stop in the middle of an automatic take, then a start while still loud.
        gate.requestStop(at: 0)
        XCTAssertEqual(change(loud), 0)
        gate.setRecording(false)
        XCTAssertNil(change(loud))
        gate.requestStart(at: 0)
        XCTAssertEqual(change(loud), 0, "an explicit start wins over the hold-closed")
        gate.setRecording(true)
        XCTAssertNil(change(quiet), "held open again")
    }

    func testExplicitStopHoldsTransportClosedUntilItStops() {
        let never = { (_: Int) -> Float in 0 }
        let gate = TriggerGate(trigger: .transport, sampleRate: 48000)
        func change(rolling: Bool) -> Int? { gate.nextChange(from: 0, frames: 64, transportRolling: rolling, freewheeling: false, peak: never) }
        XCTAssertEqual(change(rolling: true), 0)
        gate.setRecording(true)
        gate.requestStop(at: 0)
        XCTAssertEqual(change(rolling: true), 0, "stopped while transport rolls")
        gate.setRecording(false)
        XCTAssertNil(change(rolling: true), "and stays stopped while it rolls")
        XCTAssertNil(change(rolling: false), "released: transport stopped")
        XCTAssertEqual(change(rolling: true), 0, "the next roll is the next take")
    }

    /// A request acts at the cycle that was being captured when it came, not at whatever block
    /// the writer reaches next: a writer 2 s behind real time starts and stops the take where
    /// they were asked for. Before, a SIGUSR1 under load started the take seconds early (its
    /// pre-roll reached back into the silence before the inputs were connected).
    func testRequestsActAtTheCycleCapturedWhenTheyCame() {
        let never = { (_: Int) -> Float in 0 }
        let gate = TriggerGate(trigger: .request, sampleRate: 48000)
        // 1024-frame blocks (21,334 us); the request came during the cycle that starts at 10 s.
        func change(atCycle microseconds: UInt64) -> Int? {
            gate.nextChange(
                from: 0, frames: 1024, transportRolling: false, freewheeling: false,
                time: .init(cycleStart: microseconds, cycleEnd: microseconds + 21_334), peak: never)
        }
        gate.requestStart(at: 10_000_000 + 5_000)
        XCTAssertNil(change(atCycle: 8_000_000), "a block from 2 s before the request")
        XCTAssertNil(change(atCycle: 10_000_000 - 21_334), "the cycle just before")
        XCTAssertEqual(change(atCycle: 10_000_000), 0, "the cycle that held the request")
        gate.setRecording(true)
        gate.requestStop(at: 12_000_000)
        XCTAssertNil(change(atCycle: 10_021_334))
        XCTAssertNil(change(atCycle: 11_900_000))
        XCTAssertEqual(change(atCycle: 11_990_000), 0, "the cycle that held the stop")
        gate.setRecording(false)
        // A stop asked for while idle (no take) means nothing, even once a start follows.
        gate.requestStop(at: 13_000_000)
        XCTAssertNil(change(atCycle: 13_000_000))
        gate.requestStart(at: 14_000_000)
        XCTAssertEqual(change(atCycle: 14_000_000), 0)
        gate.setRecording(true)
        XCTAssertNil(change(atCycle: 14_021_334), "the old stop does not end the new take")
    }

    func testTimelineCountsSamplesFromTheCycleTimeAndFindsBoundaries() {
        setenv("TZ", "UTC", 1)
        tzset()
        defer {
            unsetenv("TZ")
            tzset()
        }
        // A cycle that started 0.5 s before "now" = 14:59:59.75 UTC on some day.
        let day = 20_000.0 * 86400
        let now = day + 14 * 3600 + 59 * 60 + 59.75 + 0.5
        let stamp = AudioTimestamp(frameTime: UInt32.max - 99, microseconds: 1_000_000, sequence: 0, xrunSincePreviousCycle: false)
        var timeline = TakeTimeline(anchor: stamp, sampleRate: 48000, realtimeNow: now, jackNow: 1_500_000)
        XCTAssertEqual(timeline.anchorTimeReference, Int64((14 * 3600 + 59 * 60 + 59.75) * 48000))
        let anchor = timeline.anchorPosition
        // The frame counter wraps; positions do not.
        XCTAssertEqual(timeline.position(ofFrameTime: 100, earliest: 0), anchor + 200)
        let boundary = timeline.nextBoundary(atOrAfter: anchor + 1, splitFrames: 3600 * 48000)
        XCTAssertEqual(timeline.timeReference(at: boundary), 15 * 3600 * 48000, "15:00:00")
        XCTAssertEqual(boundary - anchor, 12000, "a quarter second after the anchor")
        XCTAssertEqual(timeline.wallClock(at: boundary), day + 15 * 3600, accuracy: 1e-6)
        // Past midnight the BWF time reference starts again from 0: 00:00:01 the next day.
        XCTAssertEqual(timeline.bextTimeReference(at: anchor + 12000 + Int64(9 * 3600 + 1) * 48000), 48000)
        XCTAssertEqual(timeline.frameTime(at: anchor + 200), 100)
    }

    func testRequestsWithTheirOwnFrameActAtThatFrameOrWhereTheWriterIs() {
        let never = { (_: Int) -> Float in 0 }
        let gate = TriggerGate(trigger: .request, sampleRate: 48000)
        // 256-frame blocks; block N starts at frame time 1000 + 256 N.
        func change(block: Int, from offset: Int = 0) -> Int? {
            let frameTime = UInt32(1000 + 256 * block)
            let start = UInt64(1_000_000 + 5_333 * block)
            return gate.nextChange(
                from: offset, frames: 256, transportRolling: false, freewheeling: false,
                time: .init(cycleStart: start, cycleEnd: start + 5_334, frameTime: frameTime), peak: never)
        }
        // A start at frame time 1000 + 256 * 2 + 17 (block 2, offset 17), asked for later (stamp).
        gate.requestStart(at: 2_000_000, frame: 1000 + 512 + 17)
        XCTAssertNil(change(block: 1), "the block before the frame")
        XCTAssertEqual(change(block: 2), 17, "at its own frame, not at the block's start")
        gate.setRecording(true)
        // A stop in the same block, after the start.
        gate.requestStop(at: 2_000_100, frame: 1000 + 512 + 200)
        XCTAssertEqual(change(block: 2, from: 17), 200)
        gate.setRecording(false)
        XCTAssertEqual(gate.lateRequests, 0)
        // A start whose frame the writer has passed: it acts where the writer is, and is counted.
        gate.requestStart(at: 3_000_000, frame: 1000 + 256 * 3 + 5)
        XCTAssertEqual(change(block: 4), 0)
        XCTAssertEqual(gate.lateRequests, 1)
        XCTAssertEqual(gate.lastLateness, 251)
    }

    /// A start and then a stop stamped in the same microsecond (two MIDI events handled in one
    /// pass, or two calls on a fast machine), both seen by the worker at once: the order they
    /// were asked in decides, so the stop ends the take the start opened. A stop asked for
    /// first, in the same microsecond, still means nothing.
    func testAStartAndAStopInTheSameMicrosecondKeepTheirOrder() {
        let never = { (_: Int) -> Float in 0 }
        let gate = TriggerGate(trigger: .request, sampleRate: 48000)
        func change(block: Int, from offset: Int = 0) -> Int? {
            let start = UInt64(1_000_000 + 5_333 * block)
            return gate.nextChange(
                from: offset, frames: 256, transportRolling: false, freewheeling: false,
                time: .init(cycleStart: start, cycleEnd: start + 5_334, frameTime: UInt32(1000 + 256 * block)), peak: never)
        }
        gate.requestStart(at: 2_000_000, frame: 1000 + 256 + 5)
        gate.requestStop(at: 2_000_000, frame: 1000 + 256 * 2 + 10)
        XCTAssertNil(change(block: 0))
        XCTAssertEqual(change(block: 1), 5)
        gate.setRecording(true)
        XCTAssertNil(change(block: 1, from: 5))
        XCTAssertEqual(change(block: 2), 10, "the stop asked for after the start, in the same microsecond")
        gate.setRecording(false)

        gate.requestStop(at: 3_000_000, frame: 1000 + 256 * 3 + 20)
        gate.requestStart(at: 3_000_000, frame: 1000 + 256 * 3 + 5)
        XCTAssertEqual(change(block: 3), 5)
        gate.setRecording(true)
        XCTAssertNil(change(block: 3, from: 5), "a stop asked for before the start means nothing")
        XCTAssertNil(change(block: 4))
    }

    func testMarkerRequestsWithTheirOwnFrameAreReachedByTheBlockThatHoldsIt() {
        let requests = MarkerRequests()
        requests.add(label: "cue", source: "MIDI note 60", frame: 5000)
        XCTAssertTrue(requests.take(reachedBy: 1, cycleEnd: 2, block: 4000, frames: 1000).isEmpty, "frames 4000-4999")
        let taken = requests.take(reachedBy: 1, cycleEnd: 2, block: 4900, frames: 256)
        XCTAssertEqual(taken.count, 1)
        XCTAssertEqual(taken.first?.offset(inBlockAt: 4900, frames: 256), 100)
        XCTAssertEqual(taken.first?.offset(inBlockAt: 5100, frames: 256), 0, "passed: at the block's start")
    }
}
