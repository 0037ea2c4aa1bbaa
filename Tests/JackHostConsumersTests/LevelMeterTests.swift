import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

final class LevelMeterTests: XCTestCase {
    func testMeasureMatchesScalarFormulaIncludingTails() {
        for count in [0, 1, 7, 8, 9, 63, 64, 67] {
            let samples = (0..<count).map { Float(sin(Double($0) * 0.37)) * 1.2 }
            let result = samples.withUnsafeBufferPointer { LevelMeter.measure($0) }
            XCTAssertEqual(result.peak, samples.map { abs($0) }.max() ?? 0, "count \(count)")
            XCTAssertEqual(result.sumSquares, samples.reduce(0) { $0 + Double($1 * $1) }, accuracy: 1e-3)
            XCTAssertEqual(result.clips, samples.filter { abs($0) >= 1 }.count, "count \(count)")
        }
    }

    func testMeasureIsIdenticalWithBothKernelSets() throws {
        // Random bit patterns (NaN, infinities, denormals included) and audio-like values, at
        // lengths that exercise the vector body and the tail.
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        for count in [0, 5, 8, 64, 67, 256, 1000] {
            let samples: [Float] = (0..<count).map { index in
                let bits = next()
                return index % 3 == 0
                    ? Float(bitPattern: UInt32(truncatingIfNeeded: bits))
                    : Float(Int32(truncatingIfNeeded: bits >> 32)) / 1_500_000_000
            }
            let portable = samples.withUnsafeBufferPointer { LevelMeter.measure($0, using: .portable) }
            XCTAssertEqual(portable.clips, samples.filter { abs($0) >= 1 }.count, "count \(count)")
            guard SampleConversion.isSupported(.avx2) else { continue }
            let avx2 = samples.withUnsafeBufferPointer { LevelMeter.measure($0, using: .avx2) }
            XCTAssertEqual(avx2.peak.bitPattern, portable.peak.bitPattern, "peak, count \(count)")
            XCTAssertEqual(avx2.sumSquares.bitPattern, portable.sumSquares.bitPattern, "sum of squares, count \(count)")
            XCTAssertEqual(avx2.clips, portable.clips, "clips, count \(count)")
        }
        // A NaN after the peak in the same lane must not make the lane forget its peak.
        var lanes = [Float](repeating: 0, count: 24)
        lanes[0] = 0.9
        lanes[8] = .nan
        lanes[16] = 0.1
        for kernels in SampleConversion.Kernels.allCases where SampleConversion.isSupported(kernels) {
            let result = lanes.withUnsafeBufferPointer { LevelMeter.measure($0, using: kernels) }
            XCTAssertEqual(result.peak, 0.9, "\(kernels)")
        }
        try XCTSkipUnless(SampleConversion.isSupported(.avx2), "this CPU has no AVX2: only the portable meter was tested")
    }

    func testMetersWithEitherKernelSetReportIdenticalLevels() throws {
        try XCTSkipUnless(SampleConversion.isSupported(.avx2), "this CPU has no AVX2: one kernel set only")
        let portable = LevelMeter(kernels: .portable), avx2 = LevelMeter(kernels: .avx2)
        for meter in [portable, avx2] { try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 3)) }
        var state: UInt32 = 12345
        for frames in [64, 61, 1024, 3] {
            let channels: [[Float]] = (0..<3).map { _ in
                (0..<frames).map { _ in
                    state = state &* 1_664_525 &+ 1_013_904_223
                    return Float(Int32(bitPattern: state)) / 1.9e9
                }
            }
            withBlock(channels) { block in
                portable.process(block)
                avx2.process(block)
            }
        }
        XCTAssertEqual(portable.takeSnapshot(), avx2.takeSnapshot())
    }

    func testSineLevelsAndClips() throws {
        let meter = LevelMeter()
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let sine = (0..<4800).map { 0.5 * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let clipped = (0..<4800).map { $0 % 100 == 0 ? Float(1.0) : 0 }
        withBlock([sine, clipped]) { meter.process($0) }
        let snapshot = meter.takeSnapshot()
        XCTAssertEqual(LevelMeter.dB(snapshot[0].peak), -6.0206, accuracy: 0.001)
        XCTAssertEqual(LevelMeter.dB(snapshot[0].rms), -9.0309, accuracy: 0.01)
        XCTAssertEqual(snapshot[1].clips, 48)
        withBlock([[0, 0], [0, 0]]) { meter.process($0) }
        let next = meter.takeSnapshot()[0]
        XCTAssertEqual(next.peak, 0, "a snapshot starts a new window from the next cycle")
        XCTAssertEqual(next.rms, 0, "the window's RMS covers only the frames since the last snapshot")
        XCTAssertEqual(LevelMeter.dB(meter.totals()[0].overallPeak), -6.0206, accuracy: 0.001, "totals persist")
        let summary = MeterDisplay.summary(levels: meter.totals(), counters: .init(droppedFrames: 5, xruns: 2))
        XCTAssertTrue(summary.contains("in_1"))
        XCTAssertTrue(summary.contains("-6.02"))
        XCTAssertTrue(summary.hasPrefix("channel  peak_dBFS  rms_dBFS  clips  dropped  skipped  xruns"))
    }

    /// A paused meter measures nothing and keeps what it had; resumed after a snapshot, its
    /// window holds only what came after.
    func testAPausedMeterMeasuresNothingUntilResumed() throws {
        let meter = LevelMeter(paused: true)
        XCTAssertTrue(meter.isPaused)
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        withBlock([[Float](repeating: 0.5, count: 64)]) { meter.process($0) }
        XCTAssertEqual(meter.takeSnapshot()[0].peak, 0, "paused from the start: nothing measured")
        meter.resume()
        withBlock([[Float](repeating: 0.25, count: 64)]) { meter.process($0) }
        let resumed = meter.takeSnapshot()[0]
        XCTAssertEqual(resumed.peak, 0.25)
        XCTAssertEqual(resumed.rms, 0.25, accuracy: 1e-6)
        meter.pause()
        withBlock([[Float](repeating: 0.9, count: 64)]) { meter.process($0) }
        let paused = meter.takeSnapshot()[0]
        XCTAssertLessThan(paused.peak, 0.9, "paused again: the 0.9 block is not measured")
        XCTAssertEqual(paused.rms, 0, "and no frames entered the window")
        XCTAssertEqual(meter.totals()[0].overallPeak, 0.25, "and the totals are as they were")
    }
}
