import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// `jackhost stream` end to end: raw samples piped into sox, into a FIFO and a closed pipe, in
/// every sample format, and sharing one conversion with a recording.
final class StreamTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: JackhostBinary.path),
            "build jackhost first (swift build): \(JackhostBinary.path)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    func testStreamPipedIntoSoxReproducesTheSignal() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 4, signal: .sequence)
            defer { generator.stop() }
            let flac = workDirectory.appendingPathComponent("streamed.flac").path
            let pipeline =
                "\(JackhostBinary.path) stream -s \(server.name) -c 4 --connect 'jhgen:out_.*' -d 1 --sample-format s16 --interleaved"
                + " | sox -t raw -r 48000 -e signed -b 16 -c 4 - \(flac)"
            let result = try JACKFixture.run("/bin/bash", ["-c", "set -o pipefail; " + pipeline])
            XCTAssertEqual(result.status, 0, result.stderr)
            JackhostBinary.assertNoSanitizerReport(result.stderr)
            let channels = try AudioFileCheck.readWithSox(flac, channels: 4)
            XCTAssertEqual(channels.first?.count, 48000)
            let report = SequenceCheck.verify(channels)
            XCTAssertNil(report.firstMismatch, "\(report)")
        }
    }

    func testStreamFormatsDecodeBackToTheSignal() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            // Each format with the default kernels and again with the portable ones (JACKHOST_SIMD=portable).
            let formats = [("f32", false), ("s24", true), ("8.24", true), ("s32", false)]
            for ((format, interleaved), kernels) in formats.flatMap({ f in ["default", "portable"].map { (f, $0) } }) {
                let out = workDirectory.appendingPathComponent("stream-\(format)-\(kernels).raw").path
                var arguments = ["stream", "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.5", "-b", format, "-o", out]
                if interleaved { arguments.append("-i") }
                let result = try JackhostBinary.run(arguments, environment: kernels == "portable" ? ["JACKHOST_SIMD": "portable"] : [:])
                XCTAssertEqual(result.status, 0, result.stderr)
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
                let channels = decode(bytes, format: format, interleaved: interleaved, channels: 2, blockFrames: 256)
                XCTAssertEqual(channels[0].count, 24000, "\(format) \(kernels)")
                XCTAssertNil(SequenceCheck.verify(channels).firstMismatch, "\(format) \(kernels)")
            }
        }
    }

    /// Decodes little-endian raw samples; non-interleaved streams come in per-channel runs of one block.
    private func decode(_ bytes: [UInt8], format: String, interleaved: Bool, channels: Int, blockFrames: Int) -> [[Float]] {
        let width = format == "s24" ? 3 : 4
        let samples: [Float] = stride(from: 0, to: bytes.count - width + 1, by: width).map { offset in
            var value: UInt32 = 0
            for i in 0..<width { value |= UInt32(bytes[offset + i]) << (8 * i) }
            switch format {
            case "f32": return Float(bitPattern: value)
            case "s24": return Float(Int32(bitPattern: value << 8) >> 8) / 8_388_608
            case "8.24": return Float(Int32(bitPattern: value)) / 16_777_216
            default: return Float(Double(Int32(bitPattern: value)) / 2_147_483_648)
            }
        }
        var planar = Array(repeating: [Float](), count: channels)
        if interleaved {
            for (index, sample) in samples.enumerated() { planar[index % channels].append(sample) }
        } else {
            var offset = 0
            while offset < samples.count {
                let frames = min(blockFrames, (samples.count - offset) / channels)
                for c in 0..<channels { planar[c].append(contentsOf: samples[(offset + c * frames)..<(offset + (c + 1) * frames)]) }
                offset += frames * channels
            }
        }
        return planar
    }

    /// A recording and a stream that want the same samples share one conversion per cycle;
    /// both still carry exactly the generator's signal.
    func testRecordAndStreamSharingAConversionAgree() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let wav = workDirectory.appendingPathComponent("shared.wav").path
            let raw = workDirectory.appendingPathComponent("shared.raw").path
            // Every built-in consumer at once (meter, recorder, stream): the RealtimeSanitizer pass runs this too.
            let result = try JackhostBinary.run([
                "run", "--meter", "--record", wav, "--record-sample-format", "s16", "--stream", "-o", raw,
                "--sample-format", "s16", "--interleaved", "-s", server.name,
                "--connect", "jhgen:out_.*", "-d", "1",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let streamed = try Data(contentsOf: URL(fileURLWithPath: raw))
            XCTAssertEqual(streamed.count, 48000 * 2 * 2)
            let fromFile = try AudioFileCheck.readWithSox(wav, channels: 2)
            let fromStream = streamed.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            XCTAssertEqual(fromStream.enumerated().map { Float($0.element) / 32768 }, (0..<48000).flatMap { [fromFile[0][$0], fromFile[1][$0]] })
            XCTAssertNil(SequenceCheck.verify(fromFile).firstMismatch)
        }
    }

    func testStreamIntoAFIFO() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let fifo = workDirectory.appendingPathComponent("audio.fifo").path
            let copy = workDirectory.appendingPathComponent("from-fifo.raw").path
            XCTAssertEqual(mkfifo(fifo, 0o600), 0)
            let reader = try JACKFixture.run(
                "/bin/bash",
                [
                    "-c",
                    "cat \(fifo) > \(copy) & \(JackhostBinary.path) stream -s \(server.name) --connect 'jhgen:out_.*' -d 1 -b s16 -i -o \(fifo); status=$?; wait; exit $status",
                ])
            XCTAssertEqual(reader.status, 0, reader.stderr)
            let samples = try Data(contentsOf: URL(fileURLWithPath: copy)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            XCTAssertEqual(samples.count, 2 * 48000)
            let planar = (0..<2).map { c in stride(from: c, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 } }
            XCTAssertNil(SequenceCheck.verify(planar).firstMismatch)
        }
    }

    func testClosedPipeEndsTheStreamCleanly() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JACKFixture.run(
                "/bin/sh",
                ["-c", "\(JackhostBinary.path) stream -s \(server.name) -b s16 | head -c 4096 > /dev/null; echo \"status ${PIPESTATUS:-}\""],
                timeout: 20)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertFalse(result.stderr.contains("Broken pipe"), result.stderr)
            JackhostBinary.assertNoSanitizerReport(result.stderr)
            // Same again, but read the exit status of jackhost itself.
            let status = try JACKFixture.run(
                "/bin/bash", ["-c", "\(JackhostBinary.path) stream -s \(server.name) -b s16 | head -c 4096 > /dev/null; exit ${PIPESTATUS[0]}"],
                timeout: 20)
            // A reader that goes away ends the stream early: status 1 and one line, never SIGPIPE's death.
            XCTAssertEqual(status.status, 1, "a closed pipe ends the stream with status 1: \(status.stderr)")
            XCTAssertEqual(status.stderr.split(separator: "\n").filter { $0.contains("reader went away") }.count, 1, status.stderr)
        }
    }
}
