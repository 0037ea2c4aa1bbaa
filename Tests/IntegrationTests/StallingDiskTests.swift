import Foundation
import JackHost
import JackHostTesting
import XCTest

/// A disk that stalls: a preloaded shim makes the recorder's file writes block once, for many
/// seconds, as an SD card, a USB stick or a network share does. With the elastic buffer the
/// take loses nothing; before it, a fixed 2.5 s ring (1.37 s at 64-frame periods) lost the rest.
final class StallingDiskTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-stall-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Compiles the benchmark's LD_PRELOAD shim (Benchmarks/peers/stall_write_shim.c): the first
    /// write(2) to a file whose path contains $STALL_PATH, after $STALL_AFTER_BYTES bytes, sleeps
    /// $STALL_SECONDS seconds; everything else passes through.
    private func buildShim() throws -> String {
        let source = ExamplePlugins.repositoryRoot.appendingPathComponent("Benchmarks/peers/stall_write_shim.c").path
        let output = workDirectory.appendingPathComponent("libstall.so").path
        let result = try JACKFixture.run("cc", ["-shared", "-fPIC", "-O2", source, "-o", output, "-ldl"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return output
    }

    /// Records through a stall and checks that every frame is in the file, in order.
    private func recordThroughStall(channels: Int, seconds: Int, stallSeconds: Int) throws -> (frames: Int, report: String) {
        let shim = try buildShim()
        return try JACKFixture.withServer(captureChannels: 2, bufferFrames: 64) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: channels, signal: .sequence)
            defer { generator.stop() }
            let take = workDirectory.appendingPathComponent("stalled.wav").path
            let started = Date()
            let result = try JACKFixture.run(
                JackhostBinary.path,
                ["record", take, "-s", server.name, "-c", String(channels), "--connect", "jhgen:out_.*", "-d", String(seconds), "--no-meter"],
                timeout: Double(seconds + stallSeconds + 30),
                environment: [
                    "LD_PRELOAD": shim, "STALL_PATH": "stalled.wav", "STALL_AFTER_BYTES": "1000000",
                    "STALL_SECONDS": String(stallSeconds),
                ])
            let wall = Date().timeIntervalSince(started)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertGreaterThan(wall, Double(stallSeconds), "the stall happened")
            XCTAssertTrue(result.stdout.contains("silence inserted for 0 dropped frames"), "nothing dropped: \(result.stdout)")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            XCTAssertEqual(header.frames, seconds * 48000, "every frame of the take is in the file")
            let samples = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take)).channels
            let check = SequenceCheck.verify(samples)
            XCTAssertNil(check.firstMismatch, "\(check)")
            let peak = result.stdout.components(separatedBy: "buffer peak ").dropFirst().first?.split(separator: " ").first ?? "?"
            return (
                header.frames,
                "exit 0 after \(wall.formatted(places: 1)) s; \(header.frames) frames = \(seconds) s, 0 dropped, bit-exact; buffer peak \(peak) s"
            )
        }
    }

    /// 2 channels, 64-frame periods, a 30 s stall: the first target.
    func testThirtySecondStallAtTwoChannelsLosesNothing() throws {
        let outcome = try recordThroughStall(channels: 2, seconds: 36, stallSeconds: 30)
        reliabilityFigures("disk write stalls 30 s, 2 channels, 64-frame periods", outcome.report)
    }

    /// 64 channels, 64-frame periods, a 10 s stall (123 MB of float audio waits in memory).
    func testTenSecondStallAtSixtyFourChannelsLosesNothing() throws {
        let outcome = try recordThroughStall(channels: 64, seconds: 14, stallSeconds: 10)
        reliabilityFigures("disk write stalls 10 s, 64 channels, 64-frame periods", outcome.report)
    }
}
