import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// End-to-end tests of the `jackhost` binary against private dummy servers, with a
/// generator client in the test process.
final class CLITests: XCTestCase {
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

    func testVersionAndHelp() throws {
        let version = try JackhostBinary.run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("jackhost \(jackhostVersionForTests)"), version.stdout)
        let expectedKernels = SampleConversion.isSupported(.avx2) ? "avx2" : "portable"
        XCTAssertTrue(version.stdout.contains("conversion kernels: \(expectedKernels)"), version.stdout)
        let portable = try JackhostBinary.run(["--version"], environment: ["JACKHOST_SIMD": "portable"])
        XCTAssertTrue(portable.stdout.contains("conversion kernels: portable"), portable.stdout)
        if ProcessInfo.processInfo.environment["JACKHOST_EXPECT_RTSAN"] == "1" {
            XCTAssertTrue(version.stdout.contains("RealtimeSanitizer linked"), "the rtsan pass must link the runtime")
        }
        for command in ["info", "record", "meter", "stream", "run"] {
            let help = try JackhostBinary.run([command, "--help"])
            XCTAssertEqual(help.status, 0, command)
            XCTAssertTrue(help.stdout.contains("Usage: jackhost \(command)"), help.stdout)
            XCTAssertTrue(help.stdout.contains("Exit status:"), help.stdout)
        }
    }

    /// jack2 deadlocked closing a client with metadata on 48 or more ports; jackhost removes its
    /// ports and properties first, so 64 and 256 inputs exit promptly and print their summary.
    func testManyInputsExitPromptly() throws {
        for channels in [64, 256] {
            try JACKFixture.withServer(captureChannels: channels) { server in
                let started = Date()
                let result = try JackhostBinary.run(["run", "--meter", "-s", server.name, "-d", "0.2"], timeout: 20)
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertEqual(result.stdout.split(separator: "\n").filter { $0.hasPrefix("in_") }.count, channels)
                XCTAssertLessThan(Date().timeIntervalSince(started), 10, "\(channels) inputs must not hang at exit")
                let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
                XCTAssertFalse(listed.stdout.contains("jackhost:"), "and leave nothing behind")
            }
        }
    }

    func testInfoJSONReportsTheDummyServer() throws {
        try JACKFixture.withServer(captureChannels: 6) { server in
            let result = try JackhostBinary.run(["info", "--server", server.name, "--json"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(
                Set(object.keys),
                [
                    "sampleRate", "bufferFrames", "ioBufferDuration", "inputNumberOfChannels",
                    "inputLatencyFrames", "capturePorts",
                ])
            XCTAssertEqual(object["inputNumberOfChannels"] as? Int, 6)
            XCTAssertEqual(object["sampleRate"] as? Double, 48000)
            XCTAssertEqual(object["bufferFrames"] as? Int, 256)
            XCTAssertEqual((object["capturePorts"] as? [String])?.count, 6)
            XCTAssertEqual(object["ioBufferDuration"] as? Double ?? 0, 256.0 / 48000, accuracy: 1e-9)
        }
    }

    func testRunShowsPortsAndPrettyNamesToPatchbays() throws {
        try JACKFixture.withServer(captureChannels: 6) { server in
            let child = try JackhostBinary.start(
                ["run", "--meter", "-s", server.name, "--duration", "20", "-q"],
                directory: workDirectory)
            let observer = try JackClient(name: "observer", server: server.name)
            defer { observer.close() }
            XCTAssertTrue(JACKFixture.waitUntil { observer.portExists("jackhost:in_6") }, child.stderr)
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            for index in 1...6 { XCTAssertTrue(listed.stdout.contains("jackhost:in_\(index)\n"), listed.stdout) }
            XCTAssertFalse(listed.stdout.contains("jackhost:in_7"))
            let property = try JACKFixture.run(
                "jack_property", ["-p", "-l", "jackhost:in_6"],
                environment: ["JACK_DEFAULT_SERVER": server.name])
            XCTAssertTrue(property.stdout.contains("Input 6"), property.stdout)
            XCTAssertEqual(observer.connections(ofPortNamed: "jackhost:in_3"), ["system:capture_3"])
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
        }
    }

    /// Records the generator's sequence in every sample format and checks it with two readers.
    func testRecordIsBitExactInEveryFormat() throws {
        // The last case runs the portable conversion kernels, which CPUs without AVX2 use.
        let cases: [(file: String, format: String, arguments: [String], environment: [String: String])] = [
            ("f32.wav", "f32", [], [:]), ("s16.wav", "s16", ["-b", "s16"], [:]), ("s24.w64", "s24", ["-b", "s24"], [:]),
            ("s32.caf", "s32", ["-b", "s32"], [:]), ("s16.flac", "s16", ["-b", "s16"], [:]), ("f32.rf64", "f32", ["-f", "rf64"], [:]),
            ("s24-portable.wav", "s24", ["-b", "s24"], ["JACKHOST_SIMD": "portable"]),
        ]
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 3, signal: .sequence)
            defer { generator.stop() }
            for entry in cases {
                let path = workDirectory.appendingPathComponent(entry.file).path
                let result = try JackhostBinary.run(
                    [
                        "record", path, "-s", server.name, "-c", "3", "--connect", "jhgen:out_.*",
                        "-d", "1.5", "--no-meter",
                    ] + entry.arguments, environment: entry.environment)
                XCTAssertEqual(result.status, 0, "\(entry.file): \(result.stderr)")
                XCTAssertTrue(result.stdout.contains("recorded 72000 frames"), result.stdout)
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), entry.file)
                XCTAssertEqual(header, .init(frames: 72000, channels: 3, sampleRate: 48000), entry.file)
                let ours = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path))
                let oursReport = SequenceCheck.verify(ours.channels)
                XCTAssertNil(oursReport.firstMismatch, "\(entry.file) libsndfile: \(oursReport)")
                let sox = try AudioFileCheck.readWithSox(path, channels: 3)
                let soxReport = SequenceCheck.verify(sox)
                XCTAssertNil(soxReport.firstMismatch, "\(entry.file) sox: \(soxReport)")
                // Only the leading silence, before jackhost has connected its inputs, may go
                // unchecked: a few periods, more on a loaded machine (2304 frames seen in CI).
                XCTAssertEqual(soxReport.checkedFrames + soxReport.leadingSilence, 72000, "\(entry.file): \(soxReport)")
                XCTAssertLessThan(soxReport.leadingSilence, 12000, "\(entry.file): \(soxReport)")
            }
        }
    }

    func testSigintFinalisesTheFile() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("interrupted.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
            usleep(1_500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
            XCTAssertGreaterThan(header.frames, 48000)
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(reported, header.frames, "the report and the header agree: \(child.stdout)")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
            reliabilityFigures("SIGINT mid-take", "exit 0; header \(header.frames) frames = reported \(reported ?? -1); bit-exact")
        }
    }

    /// SIGTERM finalises like SIGINT; a second SIGINT while finalising changes nothing.
    func testSigtermAndARepeatedSigintFinaliseTheFile() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            for signals in [[SIGTERM], [SIGINT, SIGINT, SIGINT]] {
                let path = workDirectory.appendingPathComponent("signal-\(signals.count).wav").path
                let child = try JackhostBinary.start(
                    ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                    directory: workDirectory)
                XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
                usleep(1_000_000)
                for signal in signals { child.signal(signal) }
                XCTAssertEqual(child.wait(), 0, child.stderr)
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
                let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                XCTAssertEqual(reported, header.frames)
                XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
                reliabilityFigures(
                    signals.count == 1 ? "SIGTERM mid-take" : "3 x SIGINT mid-take",
                    "exit 0; header \(header.frames) frames = reported \(reported ?? -1); bit-exact")
            }
        }
    }

    func testSigkillLeavesAReadableFileMissingAtMostOneSecond() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("killed.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { generator.client.portExists("jackhost:in_2") }, child.stderr)
            let started = Date()
            usleep(3_000_000)
            child.signal(SIGKILL)
            let elapsed = Date().timeIntervalSince(started)
            _ = child.wait()
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "sndfile-info cannot read the killed take")
            XCTAssertGreaterThanOrEqual(Double(header.frames), (elapsed - 1.0) * 48000, "lost more than 1 s")
            let sox = try AudioFileCheck.readWithSox(path, channels: 2)
            XCTAssertEqual(sox.first?.count, header.frames)
            XCTAssertNil(SequenceCheck.verify(sox).firstMismatch)
            reliabilityFigures(
                "SIGKILL mid-take",
                String(
                    format: "killed after %.2f s; sndfile-info and sox read %d frames (%.2f s); lost at most %.2f s", elapsed, header.frames,
                    Double(header.frames) / 48000, elapsed - Double(header.frames) / 48000))
        }
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

    func testMeterSummaryMatchesTheSignalLevels() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            // 1 kHz at 48 kHz: sample 12 of each period is exactly the crest, so the peak is exact.
            let generator = try TestSignalSource(
                name: "jhgen", server: server.name, channels: 2,
                signal: .sine(frequency: 1000, amplitude: 0.5))
            defer { generator.stop() }
            let result = try JackhostBinary.run(["meter", "-s", server.name, "--connect", "jhgen:out_.*", "-d", "2"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("in_") }.map { $0.split(separator: " ") }
            XCTAssertEqual(rows.count, 2, result.stdout)
            for row in rows {
                XCTAssertEqual(Double(row[1]) ?? 0, -6.02, accuracy: 0.005, "peak of a 0.5 sine")
                // The summary's RMS covers the whole run, including the periods before the
                // inputs were connected: 5 silent periods in 2 s lower it by 0.06 dB (seen in CI).
                XCTAssertEqual(Double(row[2]) ?? 0, -9.03, accuracy: 0.2, "RMS of a 0.5 sine is 0.5/sqrt(2)")
                XCTAssertEqual(row[3], "0", "no clips")
                XCTAssertEqual(row[4], "0", "no drops")
            }
        }
    }

    func testEmbeddedServerRecordsTheTestTonesAndCleansUp() throws {
        let path = workDirectory.appendingPathComponent("demo.wav").path
        let result = try JackhostBinary.run(["record", path, "--embedded-server", "-c", "3", "-d", "1", "--meter"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path), .init(frames: 48000, channels: 3, sampleRate: 48000))
        let sox = try AudioFileCheck.readWithSox(path, channels: 3)
        for channel in sox { XCTAssertEqual(channel.map { abs($0) }.max() ?? 0, 0.5, accuracy: 0.01, "tone of amplitude 0.5") }
        let pid = result.stderr.components(separatedBy: "jackhost-embedded-").dropFirst().first?.prefix { $0.isNumber } ?? ""
        XCTAssertFalse(pid.isEmpty, result.stderr)
        XCTAssertFalse(PrivateJACKServer.isRunning("jackhost-embedded-\(pid)"), "the embedded server must stop at exit")
    }

    func testBadInputGetsOneLineAndTheDocumentedStatus() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let missingDirectory = workDirectory.appendingPathComponent("no/such/dir/take.wav").path
            let cases: [(arguments: [String], status: Int32, mentions: String)] = [
                (["record", "x.wav", "--bogus"], 2, "--bogus"),
                (["frobnicate"], 2, "frobnicate"),
                ([], 2, "no command"),
                (["record", "x.wav", "--channels"], 2, "needs a value"),
                (["record", "x.wav", "-s", server.name, "--channels", "0"], 2, "--channels 0"),
                (["record", "x.wav", "-s", server.name, "--channels", "-3"], 2, "--channels -3"),
                (["record", "x.wav", "-s", server.name, "--channels", "1025"], 2, "--channels 1025"),
                (["record", "x.wav", "-s", server.name, "--channels", "many"], 2, "many"),
                (["record", missingDirectory, "-s", server.name], 2, "does not exist"),
                (["record", "/proc/take.wav", "-s", server.name], 2, "/proc/take.wav"),
                (["record", "x.wav", "-s", server.name, "--format", "mp3"], 2, "mp3"),
                (["record", "x.wav", "-s", server.name, "--sample-format", "s12"], 2, "s12"),
                (["record", "x.flac", "-s", server.name, "--sample-format", "f32"], 2, "FLAC"),
                (["record", "x.wav", "-s", server.name, "--duration", "-1"], 2, "--duration"),
                (["record", "x.wav", "-s", server.name, "--split", "lots"], 2, "--split"),
                (["stream", "-s", server.name, "--sample-format", "u8"], 2, "u8"),
                (["record", "x.wav", "-s", server.name, "--connect", "nosuch:.*", "-d", "1"], 1, "nosuch"),
                (["record", "x.wav", "-s", "no-such-server-\(getpid())", "-d", "1"], 1, "no-such-server"),
                (["info", "-s", "no-such-server-\(getpid())"], 1, "no JACK server named"),
            ]
            for entry in cases {
                let result = try JACKFixture.run(JackhostBinary.path, entry.arguments, timeout: 20)
                let label = entry.arguments.joined(separator: " ")
                XCTAssertEqual(result.status, entry.status, "\(label): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "\(label) should print one line: \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("jackhost: "), label)
                XCTAssertTrue(result.stderr.contains(entry.mentions), "\(label): \(result.stderr)")
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
            XCTAssertFalse(leftovers.contains("x.wav") || leftovers.contains("x.flac"), "no file without audio")
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost:"), "failed runs leave no ports: \(listed.stdout)")
        }
    }
}

/// The version the binary should report.
let jackhostVersionForTests = "0.1.0"
