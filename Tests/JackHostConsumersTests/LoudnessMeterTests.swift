import Foundation
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// The loudness meter fed directly: BS.1770's channel weights per layout, programmes beside
/// inputs, readings before any audio, and `--programme` values.
final class LoudnessMeterTests: XCTestCase {
    /// `seconds` of a 1 kHz sine at `dBFS` on the channels in `loud` (of `channels`), fed in
    /// 256-frame blocks at 48 kHz.
    private func feed(_ meter: LoudnessMeter, channels: Int, loud: [Int: Double], seconds: Double) {
        let frames = Int(seconds * 48000)
        var start = 0
        while start < frames {
            let block = (0..<channels).map { channel -> [Float] in
                guard let level = loud[channel] else { return [Float](repeating: 0, count: 256) }
                let amplitude = pow(10, level / 20)
                return (0..<256).map { Float(amplitude * sin(2 * Double.pi * 1000 * Double(start + $0) / 48000)) }
            }
            withBlock(block) { meter.consume($0) }
            start += 256
        }
        meter.finish()
    }

    private func integrated(_ meter: LoudnessMeter, _ name: String) -> Double? {
        meter.readings.first { $0.name == name }?.integrated
    }

    func testStereoAndEachInputAlone() throws {
        let meter = LoudnessMeter(programmes: [try LoudnessProgramme(parsing: "1-2")])
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        XCTAssertEqual(meter.readings.map(\.name), ["in_1", "in_2", "1-2"])
        XCTAssertNil(integrated(meter, "1-2"), "nothing measured yet")
        feed(meter, channels: 2, loud: [0: -23, 1: -23], seconds: 3)
        XCTAssertEqual(try XCTUnwrap(integrated(meter, "1-2")), -23, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(integrated(meter, "in_1")), -26.01, accuracy: 0.05)
        XCTAssertEqual(try XCTUnwrap(meter.readings.last?.truePeak), -23, accuracy: 0.2)
        XCTAssertEqual(try XCTUnwrap(meter.readings.last?.shortTerm), -23, accuracy: 0.05)
    }

    /// 5.1: the LFE is left out; a surround channel weighs 1.41 (+1.5 dB).
    func testFiveOneLeavesOutTheLFEAndWeighsTheSurrounds() throws {
        let meter = LoudnessMeter(programmes: [try LoudnessProgramme(parsing: "1-6:5.1")], perInput: false)
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 6))
        feed(meter, channels: 6, loud: [0: -23, 1: -23, 3: 0], seconds: 3)
        XCTAssertEqual(try XCTUnwrap(integrated(meter, "1-6")), -23, accuracy: 0.05, "a full-scale LFE adds nothing")

        let surround = LoudnessMeter(programmes: [try LoudnessProgramme(parsing: "1-6:5.1")], perInput: false)
        try surround.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 6))
        feed(surround, channels: 6, loud: [4: -23], seconds: 3)
        XCTAssertEqual(try XCTUnwrap(integrated(surround, "1-6")), -26.01 + 10 * log10(1.41), accuracy: 0.05)
    }

    /// EBU Tech 3341's gating cases, stereo 1 kHz sines in segments (dBFS, seconds): the
    /// relative gate leaves out the quieter parts (case 3), the absolute gate the silence-like
    /// ones (case 4), and case 5's alternation averages to -23.0 LUFS.
    func testTech3341GatingCases() throws {
        let cases: [(String, [(Double, Double)])] = [
            ("case 3", [(-36, 10), (-23, 60), (-36, 10)]),
            ("case 4", [(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)]),
            ("case 5", [(-26, 20), (-20, 20.1), (-26, 20)]),
        ]
        for (name, segments) in cases {
            let meter = LoudnessMeter(programmes: [try LoudnessProgramme(parsing: "1-2")], perInput: false)
            try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
            var start = 0
            for (level, seconds) in segments {
                let amplitude = pow(10, level / 20)
                let end = start + Int(seconds * 48000)
                while start < end {
                    let count = min(1024, end - start)
                    let samples = (0..<count).map { Float(amplitude * sin(2 * Double.pi * 1000 * Double(start + $0) / 48000)) }
                    withBlock([samples, samples]) { meter.consume($0) }
                    start += count
                }
            }
            meter.finish()
            XCTAssertEqual(try XCTUnwrap(integrated(meter, "1-2"), name), -23, accuracy: 0.1, name)
        }
    }

    /// Tech 3341's true-peak idea: a sine at a quarter of the rate whose samples all fall 3 dB
    /// under its crest (phase 45 degrees). Crest -6 dBFS: true peak -6.0 dBTP within 0.2 dB,
    /// where the sample peak would say -9.0.
    func testTruePeakOfAnInterSamplePeak() throws {
        let meter = LoudnessMeter(perInput: true)
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let crest = pow(10, -6.0 / 20)
        for block in 0..<(48000 / 256) {
            let samples = (0..<256).map { Float(crest * sin(2 * Double.pi * 12000 * Double(block * 256 + $0) / 48000 + Double.pi / 4)) }
            withBlock([samples]) { meter.consume($0) }
        }
        meter.finish()
        XCTAssertEqual(try XCTUnwrap(meter.readings.first?.truePeak), -6, accuracy: 0.2)
    }

    /// A recorder with a sidecar and `loudness`: the sidecar's values, from the very frames it
    /// wrote, in 16-bit, 24-bit (in 32-bit words) and float files alike.
    func testTheSidecarCarriesTheLoudnessOfWhatWasWrittenInEveryFormat() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sidecar-loudness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for format in [SampleFormat.int16, .int24, .float32] {
            let path = directory.appendingPathComponent("take-\(format.name).wav").path
            var settings = Recorder.Settings(sampleFormat: format, sidecar: true, syncSeconds: nil)
            settings.loudness = []
            let recorder = Recorder(path: path, settings: settings)
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let amplitude = pow(10, -23.0 / 20)
            for block in 0..<(2 * 48000 / 256) {
                let samples = (0..<256).map { Float(amplitude * sin(2 * Double.pi * 1000 * Double(block * 256 + $0) / 48000)) }
                withBlock([samples]) { recorder.consume($0) }
            }
            recorder.finish()
            let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".json"))) as? [String: Any]
            let loudness = try XCTUnwrap(sidecar?["loudness"] as? [String: Any], "\(format)")
            for part in ["segment", "take"] {
                let entry = try XCTUnwrap((loudness[part] as? [[String: Any]])?.first, "\(loudness)")
                XCTAssertEqual(entry["name"] as? String, "in_1")
                XCTAssertEqual(try XCTUnwrap(entry["integrated"] as? Double), -26.01, accuracy: 0.05, "\(format) \(part)")
                XCTAssertEqual(try XCTUnwrap(entry["truePeak"] as? Double), -23, accuracy: 0.2, "\(format) \(part)")
            }
        }
    }

    func testAProgrammeBeyondTheInputsIsRefusedAtPrepare() throws {
        let meter = LoudnessMeter(programmes: [try LoudnessProgramme(parsing: "3-4")])
        XCTAssertThrowsError(try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))) {
            XCTAssertTrue("\($0)".contains("names inputs beyond the 2 captured"), "\($0)")
        }
    }

    func testProgrammeValues() throws {
        XCTAssertEqual(try LoudnessProgramme(parsing: "3").channels, [2])
        XCTAssertEqual(try LoudnessProgramme(parsing: "3").name, "in_3")
        XCTAssertEqual(try LoudnessProgramme(parsing: "1-2").layout, .stereo)
        XCTAssertEqual(try LoudnessProgramme(parsing: "3-8").layout, .surround51)
        XCTAssertEqual(try LoudnessProgramme(parsing: "3-8:5.1").channels, [2, 3, 4, 5, 6, 7])
        for bad in ["", "0-1", "2-1", "1-3", "a-b", "1-2:5.1", "1-2:quad", "1-2-3"] {
            XCTAssertThrowsError(try LoudnessProgramme(parsing: bad), bad)
        }
    }
}
