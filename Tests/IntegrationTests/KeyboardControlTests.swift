import Foundation
import JackHost
import JackHostTesting
import XCTest

/// jackhost at a terminal: `m` drops a marker, `r` rotates the file, the meter shows the keys,
/// and the terminal is as it was afterwards. The markers are read back from the WAV files by an
/// independent reader (a RIFF walker in Python, not libsndfile and not jackhost's code) and
/// from the sidecars.
final class KeyboardControlTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    func testKeysDropMarkersAndRotateWhereAReaderFindsThem() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let run = try TerminalRun.run(
                ["record", path("take.wav"), "-s", server.name, "--sidecar", "--connect", "jhgen:out_.*"],
                steps: ["wait capturing", "sleep 1", "key m", "sleep 0.6", "key r", "sleep 0.6", "key m", "sleep 0.5", "signal INT"],
                directory: workDirectory)
            XCTAssertEqual(run.status, 0, run.output)
            XCTAssertTrue(run.output.contains("keys: m marker  r rotate"), "the meter shows the keys:\n\(run.output)")
            XCTAssertFalse(run.canonicalWhileRunning || run.echoWhileRunning, "keys are read one at a time, unechoed")
            XCTAssertTrue(run.canonicalAfter && run.echoAfter, "the terminal is as it was afterwards")
            let files = [path("take.wav"), path("take-0002.wav")]
            for file in files { XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(file)\n\(run.output)") }

            let cues = try files.map(IndependentCues.read)
            XCTAssertEqual(cues.map { $0.map(\.label) }, [["marker 1"], ["marker 2"]], run.output)
            let frames = cues.map { $0.first?.frame ?? -1 }
            XCTAssertTrue(frames.allSatisfy { $0 >= 0 && $0 % 256 == 0 }, "on the first frame of a cycle: \(frames)")
            // The first file starts at about the "capturing" line, the second at the rotate key.
            XCTAssertEqual(Double(frames[0]) / 48000, run.keyTimes[0], accuracy: 0.35, "\(frames) \(run.keyTimes)")
            XCTAssertEqual(Double(frames[1]) / 48000, run.keyTimes[2] - run.keyTimes[1], accuracy: 0.35, "\(frames) \(run.keyTimes)")
            for (file, frame) in zip(files, frames) {
                let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file + ".json"))) as? [String: Any]
                let markers = try XCTUnwrap(sidecar?["markers"] as? [[String: Any]])
                XCTAssertEqual(markers.compactMap { $0["frame"] as? Int }, [frame], "the sidecar agrees")
                XCTAssertEqual(markers.compactMap { $0["source"] as? String }, ["keyboard"])
            }
            // The audio is whole: both files read as the generator's sequence, end to end.
            let first = try AudioFileCheck.readWithSox(files[0], channels: 2)
            let second = try AudioFileCheck.readWithSox(files[1], channels: 2)
            let joined = zip(first, second).map { $0 + $1 }
            let start = try XCTUnwrap(joined[0].firstIndex { $0 != 0 })
            let report = SequenceCheck.verifyEachChannel(joined.map { Array($0[(start + 256)...]) })
            XCTAssertNil(report.firstMismatch, "the rotation lost or repeated nothing: \(report.description)")
            XCTAssertTrue(
                run.output.contains("markers: 2 (1 in \(files[0]), 1 in \(files[1])), in the files' cue chunks, in the sidecars"),
                run.output)
        }
    }

    /// With stdin a pipe, not a terminal, nothing changes: the same keys piped in drop no
    /// marker and rotate nothing, and the meter shows no keys.
    func testKeysFromAPipeAreNotCommands() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let keys = Pipe()
            keys.fileHandleForWriting.write(Data("m r m r\nmr\n".utf8))
            try keys.fileHandleForWriting.close()
            let result = try JackhostBinary.run(
                ["record", path("take.wav"), "-s", server.name, "--sidecar", "--connect", "jhgen:out_.*", "--duration", "2"],
                stdin: keys.fileHandleForReading)
            XCTAssertEqual(result.status, 0, result.stderr)
            let output = result.stdout + result.stderr
            XCTAssertFalse(output.contains("keys:"), "no keys legend without a terminal:\n\(output)")
            let files = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(".wav") }
            XCTAssertEqual(files, ["take.wav"], "nothing rotated: \(files)")
            XCTAssertEqual(try IndependentCues.read(path("take.wav")), [], "no marker in the file")
            let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("take.wav") + ".json"))) as? [String: Any]
            XCTAssertEqual((sidecar?["markers"] as? [Any])?.count ?? 0, 0, "no marker in the sidecar: \(String(describing: sidecar))")
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path("take.wav"))?.frames, 96000, "the whole duration, in one file")
        }
    }
}
