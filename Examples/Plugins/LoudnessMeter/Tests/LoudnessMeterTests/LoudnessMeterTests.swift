import Foundation
import JackHostPluginSDK
import JackHostPluginTesting
import XCTest

@testable import LoudnessMeter

/// The K-weighting filters exactly as ITU-R BS.1770-4 tabulates them for 48 kHz (Tables 1 and 2),
/// independent of the plugin's own coefficient formulas.
enum StandardTable {
    static let shelf = (b: [1.53512485958697, -2.69169618940638, 1.19839281085285], a: [-1.69065929318241, 0.73248077421585])
    static let highPass = (b: [1.0, -2.0, 1.0], a: [-1.99004745483398, 0.99007225036621])

    /// |H(e^jω)|² of one tabulated section.
    static func power(_ section: (b: [Double], a: [Double]), at frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / 48000
        func response(_ c: [Double]) -> (Double, Double) {
            (c[0] + c[1] * cos(w) + c[2] * cos(2 * w), -c[1] * sin(w) - c[2] * sin(2 * w))
        }
        let (nr, ni) = response(section.b)
        let (dr, di) = response([1] + section.a)
        return (nr * nr + ni * ni) / (dr * dr + di * di)
    }

    /// BS.1770's loudness of a steady sine at 48 kHz: -0.691 + 10 log10(A²/2 · |K(f)|²).
    static func sineLoudness(frequency: Double, amplitude: Double) -> Double {
        -0.691 + 10 * log10(amplitude * amplitude / 2 * power(shelf, at: frequency) * power(highPass, at: frequency))
    }
}

final class LoudnessMeterTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loudness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    /// Runs the meter over `channels` and returns its JSON lines.
    private func measure(
        _ channels: [[Float]], sampleRate: Double = 48000, droppedCycles: Set<Int> = [],
        blockFrames: Int = 256
    ) throws -> [[String: Any]] {
        let path = directory.appendingPathComponent("loudness-\(UUID().uuidString).jsonl").path
        let meter = try LoudnessMeter.make(options: ["output": path])
        try PluginTestDriver(sampleRate: sampleRate, blockFrames: blockFrames, droppedCycles: droppedCycles).run(meter, channels: channels)
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    private func readings(_ lines: [[String: Any]], channel: String) -> [[String: Any]] {
        lines.filter { $0["channel"] as? String == channel && $0["summary"] == nil }
    }

    private func summary(_ lines: [[String: Any]], channel: String) throws -> [String: Any] {
        try XCTUnwrap(lines.first { $0["channel"] as? String == channel && $0["summary"] as? Bool == true })
    }

    func testCoefficientsAt48kHzMatchTheStandardsTable() {
        let shelf = KWeighting.shelf(sampleRate: 48000), highPass = KWeighting.highPass(sampleRate: 48000)
        let ours = [shelf.b0, shelf.b1, shelf.b2, shelf.a1, shelf.a2, highPass.b0, highPass.b1, highPass.b2, highPass.a1, highPass.a2]
        let table = StandardTable.shelf.b + StandardTable.shelf.a + StandardTable.highPass.b + StandardTable.highPass.a
        for (value, expected) in zip(ours, table) { XCTAssertEqual(value, expected, accuracy: 1e-8) }
    }

    func testFullScale997HzSineReadsMinus3Point01LUFS() throws {
        // The standard's calibration point: a 0 dB FS 997 Hz sine in one channel reads -3.01 LUFS.
        let expected = StandardTable.sineLoudness(frequency: 997, amplitude: 1)
        XCTAssertEqual(expected, -3.01, accuracy: 0.005)
        let lines = try measure([PluginTestAudio.sine(frequency: 997, amplitude: 1, frames: 48000 * 4)])
        let values = readings(lines, channel: "in_1")
        XCTAssertEqual(values.count, 37, "one line every 100 ms from 0.4 s to 4.0 s")
        XCTAssertEqual(values.first?["time"] as? Double, 0.4)
        // The high-pass settles within the first window; every reading is within 0.01 LU.
        for value in values { XCTAssertEqual(value["momentary"] as? Double ?? 0, expected, accuracy: 0.01, "\(value)") }
        let shortTerm = values.compactMap { $0["shortTerm"] as? Double }
        XCTAssertEqual(shortTerm.count, 11, "short-term starts at 3.0 s")
        XCTAssertEqual(values.first { $0["shortTerm"] is Double }?["time"] as? Double, 3.0)
        for value in shortTerm { XCTAssertEqual(value, expected, accuracy: 0.01) }
        let total = try summary(lines, channel: "in_1")
        XCTAssertEqual(total["integrated"] as? Double ?? 0, expected, accuracy: 0.01)
        XCTAssertEqual(total["seconds"] as? Double, 4)
        XCTAssertEqual(total["droppedFrames"] as? Int, 0)
    }

    func testOneKilohertzAtTwoLevelsFollowsTheKWeightingGain() throws {
        let lines = try measure([
            PluginTestAudio.sine(frequency: 1000, amplitude: 1, frames: 48000 * 3),
            PluginTestAudio.sine(frequency: 1000, amplitude: 0.5, frames: 48000 * 3),
        ])
        for (channel, amplitude) in [("in_1", 1.0), ("in_2", 0.5)] {
            let expected = StandardTable.sineLoudness(frequency: 1000, amplitude: amplitude)
            let last = try XCTUnwrap(readings(lines, channel: channel).last)
            XCTAssertEqual(last["momentary"] as? Double ?? 0, expected, accuracy: 0.01, channel)
            XCTAssertEqual(last["shortTerm"] as? Double ?? 0, expected, accuracy: 0.01, channel)
        }
    }

    func testPublishesTheLoudestInputsReadingsAsResults() throws {
        // Through a test host, as jackhost would receive them: the louder input (1.0 against 0.5)
        // is what the results show; short-term only once 3 s have passed.
        let path = directory.appendingPathComponent("results.jsonl").path
        let host = PluginTestHost(results: LoudnessMeter.results)
        let meter = try LoudnessMeter.make(options: ["output": path], host: host.pluginHost)
        let expected = StandardTable.sineLoudness(frequency: 1000, amplitude: 1)
        try PluginTestDriver().run(
            meter,
            channels: [
                PluginTestAudio.sine(frequency: 1000, amplitude: 0.5, frames: 48000 * 2),
                PluginTestAudio.sine(frequency: 1000, amplitude: 1, frames: 48000 * 2),
            ])
        XCTAssertEqual(try XCTUnwrap(host.latest("momentary")), expected, accuracy: 0.01)
        XCTAssertEqual(host.publishCount("momentary"), 17, "every 100 ms from 0.4 s to 2.0 s")
        XCTAssertNil(host.latest("short-term"), "no short-term reading before 3 s")
        let longer = PluginTestHost(results: LoudnessMeter.results)
        try PluginTestDriver().run(
            try LoudnessMeter.make(options: ["output": path], host: longer.pluginHost),
            channels: [PluginTestAudio.sine(frequency: 1000, amplitude: 1, frames: 48000 * 3)])
        XCTAssertEqual(try XCTUnwrap(longer.latest("short-term")), expected, accuracy: 0.01)
        XCTAssertEqual(longer.publishCount("short-term"), 1)
        let silent = PluginTestHost(results: LoudnessMeter.results)
        try PluginTestDriver().run(
            try LoudnessMeter.make(options: ["output": path], host: silent.pluginHost), channels: [[Float](repeating: 0, count: 24000)])
        XCTAssertEqual(silent.latest("momentary"), -.infinity, "silence reads -inf")
    }

    func testTheCurveIsTheSameAtOtherSampleRates() throws {
        // The standard tabulates 48 kHz only. The bilinear transform warps the curve a little at other
        // rates (about 0.025 dB at 96 kHz); EBU Tech 3341 allows 0.1 LU, so hold it to half that.
        for (frequency, expected) in [
            (100.0, StandardTable.sineLoudness(frequency: 100, amplitude: 0.5)),
            (1000.0, StandardTable.sineLoudness(frequency: 1000, amplitude: 0.5)),
            (5000.0, StandardTable.sineLoudness(frequency: 5000, amplitude: 0.5)),
        ] {
            for rate in [44100.0, 96000.0] {
                let lines = try measure(
                    [PluginTestAudio.sine(frequency: frequency, amplitude: 0.5, sampleRate: rate, frames: Int(rate))],
                    sampleRate: rate)
                let last = try XCTUnwrap(readings(lines, channel: "in_1").last)
                XCTAssertEqual(last["momentary"] as? Double ?? 0, expected, accuracy: 0.05, "\(frequency) Hz at \(rate)")
            }
        }
    }

    func testSilenceIsNullNotMinusInfinity() throws {
        let lines = try measure([[Float](repeating: 0, count: 24000)])
        XCTAssertTrue(readings(lines, channel: "in_1").allSatisfy { $0["momentary"] is NSNull })
        XCTAssertTrue(try summary(lines, channel: "in_1")["integrated"] is NSNull)
    }

    func testIntegratedLoudnessGatesOutSilenceAndQuietPassages() throws {
        let rate = 48000
        let loud = PluginTestAudio.sine(frequency: 997, amplitude: 1, frames: rate * 2)
        let quiet = PluginTestAudio.sine(frequency: 997, amplitude: 0.03, frames: rate * 4)  // about -33 LUFS
        let silence = [Float](repeating: 0, count: rate * 4)
        let lines = try measure([loud + quiet, loud + silence])
        let full = StandardTable.sineLoudness(frequency: 997, amplitude: 1)
        // The absolute gate (-70 LUFS) drops the silent blocks and the relative gate (10 LU below the
        // ungated mean, about -15 LUFS here) the quiet ones. What passes: the 17 all-loud 400 ms blocks
        // (ending at 0.4 ... 2.0 s), and the 3 blocks straddling the change, which are 3/4, 1/2 and 1/4 loud.
        for (channel, quietPower) in [("in_1", 0.03 * 0.03), ("in_2", 0.0)] {
            let straddling = [0.75, 0.5, 0.25].map { $0 + (1 - $0) * quietPower }.reduce(0, +)
            let expected = full + 10 * log10((17 + straddling) / 20)
            XCTAssertEqual(try summary(lines, channel: channel)["integrated"] as? Double ?? 0, expected, accuracy: 0.02, channel)
        }
        XCTAssertEqual(try summary(lines, channel: "in_1")["maxMomentary"] as? Double ?? 0, full, accuracy: 0.01)
    }

    func testDroppedFramesAreReportedAndCountInTheTimeline() throws {
        let tone = PluginTestAudio.sine(frequency: 997, amplitude: 1, frames: 48000)
        let lines = try measure([tone], droppedCycles: [50, 51, 52], blockFrames: 100)
        let total = try summary(lines, channel: "in_1")
        XCTAssertEqual(total["droppedFrames"] as? Int, 300)
        XCTAssertEqual(total["seconds"] as? Double, 1)
        // 47700 frames arrive; steps complete every 4800 of them, so the 9th and last ends after
        // 43200 received frames, which is 43500 stream frames with the 300 lost ones: 0.906 s.
        XCTAssertEqual(readings(lines, channel: "in_1").last?["time"] as? Double, 0.906)
        for value in readings(lines, channel: "in_1") {
            XCTAssertEqual(value["momentary"] as? Double ?? 0, -3.01, accuracy: 0.02, "windows continue over the audio that arrived")
        }
    }

    func testRefusesRatesTheFiltersCannotRepresent() throws {
        let meter = try LoudnessMeter.make(options: ["output": directory.appendingPathComponent("x.jsonl").path])
        XCTAssertThrowsError(try meter.prepare(format: StreamFormat(sampleRate: 4000, channelCount: 1))) {
            XCTAssertTrue(String(describing: $0).contains("at least 8000 Hz"), "\($0)")
        }
    }
}

/// The integrated loudness's histogram against the exact two-gate computation over every block.
final class IntegratedLoudnessTests: XCTestCase {
    /// BS.1770-4's gating, exactly, over a list of block mean squares.
    private func exact(_ blocks: [Double]) -> Double? {
        func lufs(_ meanSquare: Double) -> Double { -0.691 + 10 * log10(meanSquare) }
        let absolute = blocks.filter { $0 > 0 && lufs($0) > -70 }
        guard !absolute.isEmpty else { return nil }
        let gate = lufs(absolute.reduce(0, +) / Double(absolute.count)) - 10
        let relative = absolute.filter { lufs($0) > gate }
        return relative.isEmpty ? nil : lufs(relative.reduce(0, +) / Double(relative.count))
    }

    func testAHistogramAgreesWithEveryBlockKept() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            // Programme-like material: loud passages, quiet ones, and silence.
            let blocks = (0..<5000).map { _ -> Double in
                let level = [-12.0, -25.0, -40.0, -90.0].randomElement(using: &generator)! + Double.random(in: -6...6, using: &generator)
                return pow(10, (level + 0.691) / 10)
            }
            var histogram = IntegratedLoudness()
            for block in blocks { histogram.add(meanSquare: block) }
            XCTAssertEqual(try XCTUnwrap(histogram.value), try XCTUnwrap(exact(blocks)), accuracy: 0.05)
        }
    }

    func testMemoryStaysConstantOverADayOfBlocks() {
        var histogram = IntegratedLoudness()
        let before = histogram.binsHeld
        for index in 0..<864_000 { histogram.add(meanSquare: 0.01 + Double(index % 100) * 1e-4) }  // 24 h of 100 ms steps
        XCTAssertEqual(histogram.binsHeld, before)
        XCTAssertNotNil(histogram.value)
    }
}
