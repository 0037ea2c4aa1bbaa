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
