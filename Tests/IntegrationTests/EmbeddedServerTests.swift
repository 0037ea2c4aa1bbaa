import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// Audio is real, or jackhost fails: with no server nothing starts one behind the user's back,
/// and `--embedded-server` (the demo's choice) records the test tones and cleans up.
final class EmbeddedServerTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// With no server, no command starts one behind the user's back: exit 1, one line that says
    /// how to start a server, and no file. Before, record/meter/stream/run recorded test tones
    /// from a private server and exited 0.
    func testNoServerFailsLoudlyInsteadOfRecordingTestTones() throws {
        try JACKFixture.serialized {
            guard !PrivateJACKServer.isRunning(nil) else { throw XCTSkip("a default JACK server runs on this machine") }
            let take = path("take.wav")
            for arguments in [
                ["record", take, "-d", "1"], ["meter", "-d", "1"], ["stream", "-d", "1"], ["run", "--meter", "-d", "1"],
                ["record", "-d", "1"],
            ] {
                let result = try JACKFixture.run(
                    JackhostBinary.path, arguments, timeout: 20, directory: workDirectory,
                    removingEnvironment: ["JACK_DEFAULT_SERVER"])
                let label = arguments.joined(separator: " ")
                XCTAssertEqual(result.status, 1, "\(label): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(label): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("no JACK server is running"), result.stderr)
                XCTAssertTrue(result.stderr.contains("pw-jack") && result.stderr.contains("qjackctl"), result.stderr)
                XCTAssertFalse(result.stderr.contains("private dummy"), result.stderr)
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDirectory.path), [], "no take of fake audio")
            // A studio server named by JACK_DEFAULT_SERVER that has crashed: the same, naming it.
            let crashed = "jhtest-crashed-\(getpid())"
            let result = try JACKFixture.run(
                JackhostBinary.path, ["record", take, "-d", "1"], timeout: 20,
                environment: ["JACK_DEFAULT_SERVER": crashed])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no JACK server named \"\(crashed)\""), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: take))
        }
    }

    /// --embedded-server is the one way to get test tones, and scripts/demo asks for it.
    func testDemoScriptAsksForTheEmbeddedServer() throws {
        let demo = try String(contentsOf: ExamplePlugins.repositoryRoot.appendingPathComponent("scripts/demo"), encoding: .utf8)
        XCTAssertTrue(demo.contains("--embedded-server"), "scripts/demo must ask for the private server explicitly")
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
}
