@testable import JackHost
import XCTest

final class StreamFormatTests: XCTestCase {
    func testNonInterleavedBytesPerFrameDescribesOneChannel() {
        let format = StreamFormat(sampleRate: 48000, channelCount: 8)
        XCTAssertFalse(format.isInterleaved)
        XCTAssertEqual(format.bytesPerFrame, 4, "non-interleaved: one channel's buffer, not bytes * channels")
        XCTAssertEqual(format.bytesPerChannelBuffer(frames: 256), 1024)
        XCTAssertEqual(format.totalBytes(frames: 256), 8192)
        XCTAssertEqual(format.description, "48000 Hz, 8 ch, Float32, non-interleaved")
    }

    func testSessionInfoDerivesDurations() {
        let session = AudioSessionInfo(sampleRate: 48000, bufferFrames: 256, inputNumberOfChannels: 2, inputLatencyFrames: 480)
        XCTAssertEqual(session.ioBufferDuration, 256.0 / 48000, accuracy: 1e-12)
        XCTAssertEqual(session.inputLatency, 0.01, accuracy: 1e-12)
    }

    func testSequenceSignalIsInvertibleAndExactInInt16() {
        for frame in [0, 1, 2, 1000, 65535, 65536, 123_457] {
            let value = TestSignal.sequenceValue(channel: 0, frame: frame)
            XCTAssertEqual(TestSignal.sequenceFrame(fromChannel0: value), frame & 0xFFFF)
            XCTAssertEqual(Float(Int(value * 32768)) / 32768, value)
        }
        XCTAssertNotEqual(TestSignal.sequenceValue(channel: 1, frame: 0), 0)
    }

    func testErrorsNameTheProblemAndTheRemedy() {
        XCTAssertEqual(JackError.serverNotRunning(server: "x").description,
                       "no JACK server named \"x\" is running; start one with `jackd -n x -d dummy`, or pass another --server")
        XCTAssertTrue(JackError.invalidChannelCount(0).description.contains("1 to 1024"))
        XCTAssertEqual(JackError.fromOpenStatus(0x11, clientName: "a", server: "s"), .serverNotRunning(server: "s"))
        XCTAssertEqual(JackError.fromOpenStatus(0x05, clientName: "a", server: nil), .clientNameNotUnique(name: "a"))
    }
}
