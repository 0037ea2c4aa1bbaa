import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// The `jackhost` commands end to end against private dummy servers, with a generator client in
/// the test process: version and help, info, run, meter, many inputs and bad input.
final class CommandTests: XCTestCase {
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
                    "inputLatencyFrames", "capturePorts", "streams",
                ])
            XCTAssertEqual(object["inputNumberOfChannels"] as? Int, 6)
            XCTAssertEqual(object["sampleRate"] as? Double, 48000)
            XCTAssertEqual(object["bufferFrames"] as? Int, 256)
            XCTAssertEqual((object["capturePorts"] as? [String])?.count, 6)
            XCTAssertEqual(object["ioBufferDuration"] as? Double ?? 0, 256.0 / 48000, accuracy: 1e-9)
            // jackd's own capture ports are one stream, physical (info's own client has no outputs).
            let streams = try XCTUnwrap(object["streams"] as? [[String: Any]])
            XCTAssertEqual(streams.map { $0["name"] as? String }, ["system"])
            XCTAssertEqual(streams.first?["channels"] as? Int, 6)
            XCTAssertEqual(streams.first?["physical"] as? Bool, true)
            XCTAssertEqual(streams.first?["ports"] as? [String], object["capturePorts"] as? [String])
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
