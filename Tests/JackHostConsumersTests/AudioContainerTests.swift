import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// The containers' names, limits and lossy encoding, checked through libsndfile without a server.
final class AudioContainerTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-containers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func testLossyExtensionsNameTheirContainers() {
        XCTAssertEqual(AudioContainer(path: "take.ogg"), .ogg)
        XCTAssertEqual(AudioContainer(path: "take.OGA"), .ogg)
        XCTAssertEqual(AudioContainer(path: "take.opus"), .opus)
        XCTAssertEqual(AudioContainer(path: "/a/take.mp3"), .mp3)
        XCTAssertEqual(AudioContainer.meaning(ofExtensionIn: "take.m4a"), .unsupportedAudio("M4A"))
        XCTAssertEqual(AudioContainer.allCases.filter(\.isLossy), [.ogg, .opus, .mp3])
        XCTAssertEqual(AudioContainer.mp3.defaultSampleFormat, .float32)
        XCTAssertEqual(AudioContainer.flac.defaultSampleFormat, .int24)
    }

    /// The coding history line names the coding, rate, bits and mode of the file it is in.
    func testCodingHistoryLineIsTrueForEachFormat() {
        XCTAssertEqual(
            BroadcastWave.codingHistory(sampleFormat: .float32, sampleRate: 48000, channels: 2), "A=PCM_FLOAT,F=48000,W=32,M=stereo,T=jackhost")
        XCTAssertEqual(BroadcastWave.codingHistory(sampleFormat: .int24, sampleRate: 44100, channels: 1), "A=PCM,F=44100,W=24,M=mono,T=jackhost")
        XCTAssertEqual(BroadcastWave.codingHistory(sampleFormat: .int16, sampleRate: 96000, channels: 6), "A=PCM,F=96000,W=16,M=multi,T=jackhost")
        XCTAssertEqual(BroadcastWave.codingHistory(sampleFormat: .int32, sampleRate: 48000, channels: 2), "A=PCM,F=48000,W=32,M=stereo,T=jackhost")
        XCTAssertEqual(CodingHistoryPatch.historyBytes("A=PCM", size: 10), Array("A=PCM\r\n".utf8) + [0, 0, 0])
        XCTAssertEqual(CodingHistoryPatch.historyBytes("A=PCM,F=48000", size: 4), Array("A=PC".utf8), "cut to the area, never past it")
    }

    /// Debian 12's libsndfile (1.2.0) writes all eight; the project's machines run it.
    func testThisMachineWritesEveryContainer() {
        XCTAssertEqual(AudioContainer.writableOnThisMachine(), AudioContainer.allCases)
    }

    func testEachLimitIsRefusedWithItsOwnReasonAndAHint() throws {
        XCTAssertNil(AudioContainer.flac.refusal(for: .int24, channels: 8, sampleRate: 96000))
        let flac = try XCTUnwrap(AudioContainer.flac.refusal(for: .int24, channels: 9, sampleRate: 48000))
        XCTAssertEqual(flac, .tooManyChannels(container: .flac, channels: 9, maximum: 8))
        XCTAssertTrue(flac.description.contains("FLAC holds at most 8 channels"), flac.description)
        XCTAssertTrue(flac.description.contains("--channel-files") && flac.description.contains("w64"), flac.description)

        XCTAssertNil(AudioContainer.mp3.refusal(for: .float32, channels: 2, sampleRate: 44100))
        XCTAssertEqual(
            AudioContainer.mp3.refusal(for: .float32, channels: 3, sampleRate: 48000),
            .tooManyChannels(container: .mp3, channels: 3, maximum: 2))
        let mp3Rate = try XCTUnwrap(AudioContainer.mp3.refusal(for: .float32, channels: 2, sampleRate: 96000))
        XCTAssertTrue(mp3Rate.description.contains("22.05") && mp3Rate.description.contains("96000 Hz"), mp3Rate.description)

        XCTAssertNil(AudioContainer.opus.refusal(for: .float32, channels: 255, sampleRate: 48000))
        XCTAssertEqual(
            AudioContainer.opus.refusal(for: .float32, channels: 256, sampleRate: 48000),
            .tooManyChannels(container: .opus, channels: 256, maximum: 255))
        let opusRate = try XCTUnwrap(AudioContainer.opus.refusal(for: .float32, channels: 2, sampleRate: 44100))
        XCTAssertEqual(opusRate, .unsupportedSampleRate(container: .opus, sampleRate: 44100))
        XCTAssertTrue(opusRate.description.contains("8, 12, 16, 24 or 48 kHz"), opusRate.description)

        XCTAssertNil(AudioContainer.ogg.refusal(for: .float32, channels: 64, sampleRate: 192000))
        let integer = try XCTUnwrap(AudioContainer.ogg.refusal(for: .int16, channels: 2, sampleRate: 48000))
        XCTAssertEqual(integer, .unsupportedCombination(container: .ogg, sampleFormat: .int16))
        XCTAssertTrue(integer.description.contains("float"), integer.description)
        for description in [flac, mp3Rate, opusRate, integer].map(\.description) {
            XCTAssertFalse(description.contains("\n"), "one line: \(description)")
        }
    }

    /// A 1 kHz sine at -6 dBFS, recorded through the Recorder (as a take is) in each lossy
    /// container, reads back with its length and level; a lower quality makes a smaller file.
    func testLossyTakesKeepLengthAndLevelAndQualityChangesSize() throws {
        let rate = 48000.0, frames = 188 * 256, block = 256
        for container in [AudioContainer.ogg, .opus, .mp3] {
            var sizes: [Double: Int] = [:]
            for quality in [0.1, 0.9] {
                let path = directory.appendingPathComponent("q\(quality).\(container.fileExtension)").path
                let settings = Recorder.Settings(container: try XCTUnwrap(AudioContainer(path: path)), quality: quality)
                let recorder = Recorder(path: path, settings: settings)
                XCTAssertEqual(recorder.container, container)
                try recorder.prepare(format: StreamFormat(sampleRate: rate, channelCount: 2))
                var frame = 0
                while frame < frames {
                    let wave = (0..<block).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double(frame + $0) / rate)) }
                    feed(recorder, [wave, wave])
                    frame += block
                }
                recorder.finish()
                XCTAssertNil(recorder.failure)
                var info = SF_INFO()
                let file = try XCTUnwrap(sf_open(path, Int32(SFM_READ), &info), "\(container) reads back")
                var samples = [Float](repeating: 0, count: Int(info.frames) * 2)
                let read = Int(sf_readf_float(file, &samples, info.frames))
                sf_close(file)
                XCTAssertEqual(Int(info.frames), frames, "\(container) q\(quality): libsndfile knows the exact length")
                XCTAssertEqual(read, frames)
                // Skip the codec's first and last 50 ms (priming and padding).
                let middle = samples[4800 * 2..<(read - 2400) * 2]
                let rms = (middle.reduce(0) { $0 + Double($1) * Double($1) } / Double(middle.count)).squareRoot()
                let decibels = 20 * log10(rms / (0.5 / 2.0.squareRoot()))
                XCTAssertEqual(decibels, 0, accuracy: 1, "\(container) q\(quality): level within 1 dB")
                sizes[quality] = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            }
            XCTAssertLessThan(sizes[0.1]!, sizes[0.9]!, "\(container): quality 0.1 makes a smaller file than 0.9")
        }
    }

    private func feed(_ recorder: Recorder, _ channels: [[Float]]) {
        withBlock(channels) { recorder.consume($0) }
    }
}
