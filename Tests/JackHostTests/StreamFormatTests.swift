import JackHostTesting
import XCTest

@testable import JackHost

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
        let session = AudioSessionInfo(sampleRate: 48000, bufferSize: 256, inputNumberOfChannels: 2, inputLatencyFrames: 480)
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

    /// The sequence names whole frame numbers for 2^32 frames: channels 0 and 1 together
    /// tell frame n from n + 65,536, so a loss of exactly k × 65,536 frames cannot hide.
    func testSequenceNeverRepeatsWithinHours() {
        for frame in [0, 65_535, 65_536, 1_000_000, 172_800_000, 0xFFFF_FFFF] {
            let c0 = TestSignal.sequenceValue(channel: 0, frame: frame)
            let c1 = TestSignal.sequenceValue(channel: 1, frame: frame)
            XCTAssertEqual(TestSignal.sequenceFrame(channel0: c0, channel1: c1), frame, "frame \(frame)")
        }
        for frame in [10, 70_000, 5_000_000] {
            XCTAssertNotEqual(
                TestSignal.sequenceValue(channel: 1, frame: frame),
                TestSignal.sequenceValue(channel: 1, frame: frame + 65_536), "channel 1 differs one wrap later")
        }
    }

    func testErrorsNameTheProblemAndTheRemedy() {
        XCTAssertEqual(
            JackError.serverNotRunning(server: "x").description,
            "no JACK server named \"x\" is running; start it (`jackd -n x -d alsa`, or qjackctl), or name a running one with --server")
        XCTAssertTrue(JackError.invalidChannelCount(0).description.contains("1 to 1024"))
        XCTAssertEqual(JackError.fromOpenStatus(0x11, clientName: "a", server: "s"), .serverNotRunning(server: "s"))
        XCTAssertEqual(JackError.fromOpenStatus(0x05, clientName: "a", server: nil), .clientNameNotUnique(name: "a"))
        // jack2 answers a taken name under JackUseExactName with 0x21 (JackFailure | JackServerError);
        // only the server's own answer about the name tells it from another refusal.
        XCTAssertEqual(
            JackError.fromOpenStatus(0x21, clientName: "a", server: "s", nameIsTaken: { true }),
            .clientNameNotUnique(name: "a"))
        XCTAssertEqual(
            JackError.fromOpenStatus(0x21, clientName: "a", server: "s", nameIsTaken: { false }),
            .openFailed(server: "s", status: 0x21))
        XCTAssertEqual(JackError.fromOpenStatus(0x201, clientName: "a", server: "s"), .sharedMemoryFailure(server: "s"))
        XCTAssertEqual(JackError.fromOpenStatus(0x411, clientName: "a", server: "s"), .versionMismatch(server: "s"))
        XCTAssertFalse(
            JackError.serverNotRunning(server: nil).description.contains("embedded"),
            "signal and info do not take --embedded-server, so no message may suggest it")
    }

    func testNamesAreCheckedAgainstJACKLimitsBeforeLibjackSeesThem() throws {
        XCTAssertNoThrow(try JackError.checkServerName(String(repeating: "s", count: 63)))
        XCTAssertThrowsError(try JackError.checkServerName(String(repeating: "s", count: 64)))
        XCTAssertThrowsError(try JackError.checkServerName(String(repeating: "s", count: 300)))
        XCTAssertThrowsError(try JackError.checkServerName(""))
        XCTAssertThrowsError(try JackError.checkServerName("a/b"))
        XCTAssertNoThrow(try JackError.checkClientName("jackhost"))
        XCTAssertThrowsError(try JackError.checkClientName("a:b"))
        XCTAssertThrowsError(try JackError.checkClientName(String(repeating: "é", count: 32)), "64 bytes in UTF-8")
        // The library refuses too, so a long name never reaches libjack (it smashed its stack).
        XCTAssertThrowsError(try JackClient(name: "x", server: String(repeating: "s", count: 300))) { error in
            XCTAssertEqual(error as? JackError, .invalidServerName(String(repeating: "s", count: 300)))
            XCTAssertLessThan((error as? JackError)?.description.count ?? 0, 200, "a hostile name still gives a short line")
        }
    }

    func testPortPatternsThatCouldStallLibjackAreRefused() throws {
        for good in [
            "system:capture_[1-8]", "Firefox:output_F[LR]", "^a2j:Midi Through \\[14\\] \\(capture\\)", "x{10}{10}",
            "jhgen:out_.*", "[[:alpha:]]+:in_[0-9]{1,3}$", "a|b|c",
        ] {
            XCTAssertNoThrow(try PortPattern.check(good), good)
        }
        func reason(_ pattern: String) -> String {
            do {
                try PortPattern.check(pattern)
                return "accepted"
            } catch { return error.description }
        }
        XCTAssertTrue(reason("(a*)*\\1c").contains("back-references"), reason("(a*)*\\1c"))
        XCTAssertTrue(reason("((a{255}){255}){255}").contains("expand past"))
        XCTAssertTrue(reason("a{32767}{32767}").contains("expand past"))
        XCTAssertTrue(reason("(x{100}|y){101}").contains("expand past"))
        XCTAssertTrue(reason("[").contains("regular expression ("))
        XCTAssertTrue(reason("(a").contains("regular expression ("))
        XCTAssertTrue(reason(String(repeating: "a", count: 2000)).contains("longer than"))
        XCTAssertTrue(reason("").contains("empty"))
        // A back-reference after a stray ')' is still found.
        XCTAssertTrue(reason("a)(b)\\1").contains("back-references") || reason("a)(b)\\1").contains("regular expression ("))
        // A backslash inside brackets is literal in POSIX, not a back-reference.
        XCTAssertNoThrow(try PortPattern.check("[\\1]"))
    }
}
