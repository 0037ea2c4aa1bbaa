import Foundation
import JackHost
import JackHostPluginSDK
import JackHostPluginTesting
import XCTest

/// A consumer that records everything it is given, of either kind.
private class Recorder: AudioConsumer {
    var events: [String] = []
    var blocks: [(timestamp: AudioTimestamp, frames: Int, dropped: Int, firstSamples: [Float])] = []
    var refuse = false
    struct Refusal: Error, CustomStringConvertible { var description: String { "no thanks" } }

    func prepare(format: StreamFormat) throws {
        events.append("prepare \(format)")
        if refuse { throw Refusal() }
    }
    func record(_ block: AudioBlock) {
        blocks.append(
            (
                block.timestamp, block.frameCount, block.droppedFramesBefore,
                (0..<block.channelCount).map { block.buffers[$0].first ?? .nan }
            ))
    }
    func finish() { events.append("finish") }
}

private final class RealtimeRecorder: Recorder, RealtimeAudioConsumer {
    func process(_ block: AudioBlock) { record(block) }
}

private final class DeferredRecorder: Recorder, DeferredAudioConsumer {
    func consume(_ block: AudioBlock) { record(block) }
}

final class PluginTestDriverTests: XCTestCase {
    /// Channel c, frame i holds c * 10000 + i, so every sample says where it came from.
    private func ramps(channels: Int, frames: Int) -> [[Float]] {
        (0..<channels).map { c in (0..<frames).map { Float(c * 10000 + $0) } }
    }

    func testBlocksTimestampsAndTheShortLastBlock() throws {
        let recorder = RealtimeRecorder()
        let driver = PluginTestDriver(sampleRate: 48000, blockFrames: 256, firstFrameTime: UInt32.max - 299)
        let report = try driver.run(recorder, channels: ramps(channels: 3, frames: 1000))
        XCTAssertEqual(recorder.events, ["prepare 48000 Hz, 3 ch, Float32, non-interleaved", "finish"])
        XCTAssertEqual(recorder.blocks.map(\.frames), [256, 256, 256, 232])
        XCTAssertEqual(recorder.blocks.map(\.timestamp.sequence), [0, 1, 2, 3])
        XCTAssertEqual(
            recorder.blocks.map(\.timestamp.frameTime), [UInt32.max - 299, UInt32.max - 43, 212, 468],
            "frame time wraps at 2^32 like JACK's")
        XCTAssertEqual(recorder.blocks.map(\.timestamp.microseconds), [0, 5333, 10666, 16000])
        XCTAssertEqual(
            recorder.blocks.map(\.firstSamples),
            [
                [0, 10000, 20000], [256, 10256, 20256],
                [512, 10512, 20512], [768, 10768, 20768],
            ])
        XCTAssertTrue(recorder.blocks.allSatisfy { $0.dropped == 0 && !$0.timestamp.xrunSincePreviousCycle })
        XCTAssertEqual(
            report,
            .init(
                format: StreamFormat(sampleRate: 48000, channelCount: 3), cycles: 4, deliveredBlocks: 4,
                deliveredFrames: 1000, droppedFrames: 0))
    }

    func testDeferredDropsSkipTheAudioAndAreReportedOnTheNextBlock() throws {
        let recorder = DeferredRecorder()
        let driver = PluginTestDriver(blockFrames: 100, droppedCycles: [1, 2, 5], xrunCycles: [4])
        let report = try driver.run(recorder, channels: ramps(channels: 1, frames: 700))
        XCTAssertEqual(recorder.blocks.map(\.timestamp.sequence), [0, 3, 4, 6], "sequence numbers count lost cycles too")
        XCTAssertEqual(recorder.blocks.map(\.dropped), [0, 200, 0, 100])
        XCTAssertEqual(recorder.blocks.map(\.firstSamples[0]), [0, 300, 400, 600], "dropped audio is skipped, not shifted")
        XCTAssertEqual(recorder.blocks.map(\.timestamp.xrunSincePreviousCycle), [false, false, true, false])
        XCTAssertEqual(report.droppedFrames, 300)
        XCTAssertEqual(report.deliveredFrames, 400)
        XCTAssertEqual(report.cycles, 7)
    }

    func testRefusedPrepareDeliversNothingAndDoesNotFinish() {
        let recorder = RealtimeRecorder()
        recorder.refuse = true
        XCTAssertThrowsError(try PluginTestDriver().run(recorder, channels: ramps(channels: 1, frames: 10))) { error in
            XCTAssertEqual(String(describing: error), "no thanks")
        }
        XCTAssertEqual(recorder.events, ["prepare 48000 Hz, 1 ch, Float32, non-interleaved"])
        XCTAssertTrue(recorder.blocks.isEmpty)
    }

    func testMisuseIsReported() {
        XCTAssertThrowsError(try PluginTestDriver(droppedCycles: [0]).run(RealtimeRecorder(), channels: [[0]])) {
            XCTAssertEqual($0 as? PluginTestDriverError, .dropsNeedDeferredConsumer)
        }
        XCTAssertThrowsError(try PluginTestDriver().run(RealtimeRecorder(), channels: [[0, 1], [0]])) {
            XCTAssertEqual($0 as? PluginTestDriverError, .unequalChannelLengths)
        }
        XCTAssertThrowsError(try PluginTestDriver().run(RealtimeRecorder(), channels: [])) {
            XCTAssertEqual($0 as? PluginTestDriverError, .noChannels)
        }
    }

    func testAudioFilesPlayAtTheirOwnRate() throws {
        let directory = try CPluginBuilder.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tone.wav").path
        // sox is an independent generator: two channels, 0.1 s at 44.1 kHz, 32-bit float.
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sox.arguments = [
            "sox", "-n", "-r", "44100", "-c", "2", "-e", "floating-point", "-b", "32", path,
            "synth", "0.1", "sine", "1000", "sine", "500", "vol", "0.5",
        ]
        try sox.run()
        sox.waitUntilExit()
        XCTAssertEqual(sox.terminationStatus, 0, "sox is needed for this test (scripts/setup installs it)")

        let recorder = DeferredRecorder()
        let report = try PluginTestDriver(blockFrames: 512).run(recorder, audioFile: path)
        XCTAssertEqual(report.format, StreamFormat(sampleRate: 44100, channelCount: 2))
        XCTAssertEqual(report.deliveredFrames, 4410)
        XCTAssertEqual(recorder.blocks.count, 9)
        let file = try PluginTestAudio.read(path)
        // Channel order and scale survive decoding (sox's sine starts a few hundredths of a sample late, hence 0.01).
        for (channel, frequency) in [(0, 1000.0), (1, 500.0)] {
            let reference = PluginTestAudio.sine(frequency: frequency, amplitude: 0.5, sampleRate: 44100, frames: 4410)
            let worst = zip(file.channels[channel], reference).map { abs($0 - $1) }.max() ?? 1
            XCTAssertLessThan(worst, 0.01, "channel \(channel) is the \(frequency) Hz tone")
        }
        XCTAssertThrowsError(try PluginTestAudio.read(directory.appendingPathComponent("missing.wav").path))
    }
}
