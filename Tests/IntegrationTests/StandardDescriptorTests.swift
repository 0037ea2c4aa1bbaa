import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Descriptors 0, 1 and 2: closed ones never reach the server, and audio on standard output
/// leaves everything meant for people on standard error.
final class StandardDescriptorTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Started with stdout, stderr or stdin closed, jackhost keeps libjack's metadata database
    /// off descriptors 0-2: audio and messages never land in it, and the server stays healthy.
    func testClosedStandardDescriptorsNeverReachTheServer() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let binary = JackhostBinary.path
            let connect = "--connect 'jhgen:out_.*'"
            let runs: [(String, String?)] = [
                ("exec >&-; \(binary) stream -s \(server.name) \(connect) -d 0.5 -b s16", nil),
                ("exec 2>&-; \(binary) record \(path("closed-stderr.wav")) -s \(server.name) \(connect) -d 0.5 --meter", path("closed-stderr.wav")),
                ("exec <&-; \(binary) record \(path("closed-stdin.wav")) -s \(server.name) \(connect) -d 0.5", path("closed-stdin.wav")),
                (
                    "exec >&- 2>&- <&-; \(binary) run --record \(path("all-closed.wav")) --meter --stream -s \(server.name) \(connect) -d 0.5",
                    path("all-closed.wav")
                ),
            ]
            for (script, take) in runs {
                let result = try JACKFixture.run("/bin/sh", ["-c", script], timeout: 30)
                XCTAssertEqual(result.status, 0, "\(script): \(result.stderr)")
                XCTAssertFalse(result.signalled, script)
                if let take {
                    let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take), script)
                    XCTAssertEqual(header, .init(frames: 24000, channels: 2, sampleRate: 48000), script)
                    XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch, script)
                }
            }
            // The server's database and log are intact: no Berkeley DB panic, and a new client works.
            for word in ["BDB", "PANIC", "fatal region"] { XCTAssertFalse(server.log.contains(word), "\(word) in the server log:\n\(server.log)") }
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertEqual(listed.status, 0, listed.stderr)
            XCTAssertFalse(listed.stderr.contains("BDB"), listed.stderr)
            let property = try JACKFixture.run("jack_property", ["-s", server.name, "-l"])
            XCTAssertFalse(property.stderr.contains("BDB") || property.stdout.contains("BDB"), property.stderr)
            XCTAssertTrue(PrivateJACKServer.isRunning(server.name), "the server survived")
            reliabilityFigures(
                "stdout, stderr, stdin and all three closed",
                "exit 0 each; takes 24000 frames, bit-exact; no BDB message in the server log or from jack_lsp/jack_property afterwards")
        }
    }

    /// `record -` puts FLAC on stdout; meters and summaries go to stderr, never into the stream.
    func testAudioOnStdoutKeepsEverythingForPeopleOnStderr() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let output = path("stdout.flac")
            let result = try JACKFixture.run(
                "/bin/sh", ["-c", "\(JackhostBinary.path) record - -f flac --meter -s \(server.name) --connect 'jhgen:out_.*' -d 0.5 > \(output)"],
                timeout: 30)
            XCTAssertEqual(result.status, 0, result.stderr)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
            XCTAssertEqual(String(decoding: bytes.prefix(4), as: UTF8.self), "fLaC", "stdout carries nothing but FLAC")
            XCTAssertTrue(result.stderr.contains("channel  peak_dBFS"), "the meter summary went to stderr: \(result.stderr)")
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(output), .init(frames: 24000, channels: 2, sampleRate: 48000))
        }
    }
}
