import Foundation
import JackHostPluginSDK
import JackHostPluginTesting
import XCTest

@testable import FrequencyEstimator

final class FrequencyEstimatorTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("frequency-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func outputPath() -> String { directory.appendingPathComponent("frequency.txt").path }

    func testOneKilohertzAtFullAndLowLevelWritesOneLinePerChannel() throws {
        let path = outputPath()
        let plugin = try FrequencyEstimator.make(options: ["output": path])
        let loud = PluginTestAudio.sine(frequency: 1000, amplitude: 1.0, frames: 96000)
        let quiet = PluginTestAudio.sine(frequency: 1000, amplitude: 0.01, frames: 96000)
        try PluginTestDriver(blockFrames: 256).run(plugin, channels: [loud, quiet])
        for estimate in plugin.estimates { XCTAssertEqual(try XCTUnwrap(estimate), 1000, accuracy: 0.01) }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "frequency in_1 1000.00 Hz\nfrequency in_2 1000.00 Hz\n")
    }

    func testFrequenciesThatAreNotWholeSamplePeriods() throws {
        let plugin = try FrequencyEstimator.make(options: ["output": outputPath()])
        let frequencies = [50.0, 441.3, 997, 5000.7, 15000]
        let channels = frequencies.map { PluginTestAudio.sine(frequency: $0, amplitude: 0.5, sampleRate: 44100, frames: 88200) }
        try PluginTestDriver(sampleRate: 44100, blockFrames: 128).run(plugin, channels: channels)
        for (estimate, frequency) in zip(plugin.estimates, frequencies) {
            XCTAssertEqual(try XCTUnwrap(estimate), frequency, accuracy: frequency * 1e-5, "\(frequency) Hz")
        }
    }

    func testHysteresisKeepsNoiseFromAddingCrossings() throws {
        // A -20 dBFS tone with +-0.02 of deterministic noise: noise makes extra zero crossings
        // near each real one, which the hysteresis must ignore.
        var state: UInt32 = 1
        let noisy = PluginTestAudio.sine(frequency: 1000, amplitude: 0.1, frames: 96000).map { sample -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return sample + (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.04
        }
        let naive = try FrequencyEstimator.make(options: ["output": outputPath(), "hysteresis": "0"])
        try PluginTestDriver().run(naive, channels: [noisy])
        XCTAssertGreaterThan(try XCTUnwrap(naive.estimates[0]), 1010, "without hysteresis, noise adds crossings")
        let plugin = try FrequencyEstimator.make(options: ["output": outputPath(), "hysteresis": "0.05"])
        try PluginTestDriver().run(plugin, channels: [noisy])
        XCTAssertEqual(try XCTUnwrap(plugin.estimates[0]), 1000, accuracy: 1)
    }

    func testAnXrunSplicesTheMeasurementInsteadOfCountingTheGap() throws {
        // The audio jumps by 17 samples at the start of cycle 18, as if a cycle were lost.
        let sine = PluginTestAudio.sine(frequency: 1000, amplitude: 0.5, frames: 96017)
        let spliced = Array(sine[0..<4608] + sine[4625...])
        let unaware = try FrequencyEstimator.make(options: ["output": outputPath()])
        try PluginTestDriver(blockFrames: 256).run(unaware, channels: [spliced])
        XCTAssertGreaterThan(abs(try XCTUnwrap(unaware.estimates[0]) - 1000), 0.1, "the gap biases an unflagged estimate")
        let plugin = try FrequencyEstimator.make(options: ["output": outputPath()])
        try PluginTestDriver(blockFrames: 256, xrunCycles: [18]).run(plugin, channels: [spliced])
        XCTAssertEqual(try XCTUnwrap(plugin.estimates[0]), 1000, accuracy: 0.01)
    }

    func testSilenceHasNoFrequency() throws {
        let path = outputPath()
        let plugin = try FrequencyEstimator.make(options: ["output": path])
        try PluginTestDriver().run(plugin, channels: [[Float](repeating: 0, count: 4800)])
        XCTAssertNil(plugin.estimates[0])
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "frequency in_1 none\n")
    }

    func testRefusesMaxFrequencyAtOrAboveNyquist() throws {
        let plugin = try FrequencyEstimator.make(options: ["output": outputPath(), "max-frequency": "24000"])
        XCTAssertThrowsError(try plugin.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))) { error in
            XCTAssertEqual(
                String(describing: error),
                "max-frequency 24000 Hz is not below the Nyquist frequency 24000 Hz of a 48000 Hz stream")
        }
        try plugin.prepare(format: StreamFormat(sampleRate: 96000, channelCount: 2))
        plugin.finish()
    }

    func testRefusesBadOptions() {
        XCTAssertThrowsError(try FrequencyEstimator.make(options: ["hysteresis": "1.5"]))
        XCTAssertThrowsError(try FrequencyEstimator.make(options: ["max-frequency": "-1"]))
        XCTAssertThrowsError(try FrequencyEstimator.make(options: ["max-frequency": "high"])) {
            XCTAssertEqual($0 as? PluginOptionError, .invalidValue(key: "max-frequency", value: "high", expected: .double))
        }
        XCTAssertThrowsError(try FrequencyEstimator.make(options: ["output": directory.appendingPathComponent("no/dir").path]))
    }

    func testReadsAToneFileMadeBySox() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sox.arguments = ["sox", "-n", "-r", "48000", "-c", "1", "-b", "24", wav, "synth", "1", "sine", "1000"]
        try sox.run()
        sox.waitUntilExit()
        XCTAssertEqual(sox.terminationStatus, 0, "this test needs sox (apt-get install sox)")
        let plugin = try FrequencyEstimator.make(options: ["output": outputPath()])
        let report = try PluginTestDriver(blockFrames: 512).run(plugin, audioFile: wav)
        XCTAssertEqual(report.deliveredFrames, 48000)
        XCTAssertEqual(try XCTUnwrap(plugin.estimates[0]), 1000, accuracy: 0.05)
    }

    func testExportedDescriptorDescribesThePlugin() {
        let descriptor = jackhostPluginDescriptor().assumingMemoryBound(to: UInt32.self)
        XCTAssertEqual(descriptor[0], 2, "ABI version 2")
        XCTAssertEqual(jackhostPluginDescriptor(), jackhostPluginDescriptor(), "the same descriptor every time")
    }
}
