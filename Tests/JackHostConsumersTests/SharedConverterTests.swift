import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

final class SharedConverterTests: XCTestCase {
    final class Sink: EncodedAudioConsumer {
        let consumerName: String
        let encoding: AudioEncoding
        var received: [[UInt8]] = []
        var bases: [UnsafeRawPointer] = []
        init(_ name: String, _ encoding: AudioEncoding) {
            consumerName = name
            self.encoding = encoding
        }
        func prepare(format: StreamFormat) throws {}
        func consume(_ block: EncodedBlock) {
            received.append(Array(block.bytes))
            bases.append(block.bytes.baseAddress!)
        }
        func finish() {}
        func handle(_ event: AudioSessionEvent) {}
    }

    func testEachEncodingIsConvertedOncePerBlockAndShared() throws {
        let s16 = AudioEncoding(sampleFormat: .int16, interleaved: true)
        let a = Sink("a", s16), b = Sink("b", s16), c = Sink("c", AudioEncoding(sampleFormat: .float32, interleaved: false))
        let converter = SharedConverter([a, b, c])
        XCTAssertEqual(converter.consumerName, "a+b+c")
        try converter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let left: [Float] = [0.5, -0.5, 0.25], right: [Float] = [0, 1, -1]
        withBlock([left, right]) { converter.consume($0) }
        withBlock([left, right]) { converter.consume($0) }
        XCTAssertEqual(converter.conversions, 4, "two blocks x two distinct encodings")
        XCTAssertEqual(a.received, b.received)
        XCTAssertEqual(a.bases, b.bases, "both sinks saw the very same converted bytes")
        let expected: [Int16] = [16384, 0, -16384, 32767, 8192, -32768]
        XCTAssertEqual(a.received[0], expected.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } })
        XCTAssertEqual(c.received[0].count, 6 * 4)
    }

    func testRecorderEncodingMatchesTheStreamOnlyWhereLibsndfileAgrees() {
        XCTAssertEqual(
            Recorder(path: "/tmp/x.wav", sampleFormat: .int16).encoding,
            StreamWriter(descriptor: 1, sampleFormat: .int16, interleaved: true).encoding)
        XCTAssertNotEqual(
            Recorder(path: "/tmp/x.wav", sampleFormat: .int24).encoding,
            StreamWriter(descriptor: 1, sampleFormat: .int24, interleaved: true).encoding,
            "libsndfile takes 24-bit in 32-bit words; a raw stream is packed")
    }
}
