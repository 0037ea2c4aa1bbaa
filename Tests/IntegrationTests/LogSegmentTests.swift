import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// Log segments: `--split --align` splits on wall-clock boundaries into segments that continue
/// each other exactly, and `--keep` removes only the logger's own old segments.
final class LogSegmentTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-time-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    private func files(matching suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(suffix) }.sorted()
    }

    private func files(starting prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// `--split 1s --align` with a dated name template: every segment after the first starts
    /// on a whole second of the time reference, is named after that second, and continues the
    /// previous one exactly (time reference + frames), with no frame lost or repeated between them.
    func testAlignedSplitsStartOnWallClockBoundariesAndContinueExactly() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let result = try JackhostBinary.run([
                "record", path("log-%Y%m%d-%H%M%S.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "3.5",
                "--split", "1s", "--align", "--quiet",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let segments = try files(matching: ".wav")
            XCTAssertGreaterThanOrEqual(segments.count, 4, "\(segments)")
            var joined: [[Float]] = [[], []]
            var previous: (reference: UInt64, frames: Int)?
            var total = 0
            for (index, name) in segments.enumerated() {
                let bext = try XCTUnwrap(BroadcastChunk.read(path(name)))
                let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path(name)))
                if index > 0 {
                    XCTAssertEqual(bext.timeReference % 48000, 0, "\(name) starts on a whole second")
                    let seconds = Int(bext.timeReference / 48000)
                    let stamp = String(format: "%02d%02d%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
                    XCTAssertTrue(name.hasSuffix("-\(stamp).wav"), "\(name) is named after its first second, \(stamp)")
                }
                if index > 0 && index < segments.count - 1 { XCTAssertEqual(read.header.frames, 48000, name) }
                if let previous { XCTAssertEqual(bext.timeReference, previous.reference + UInt64(previous.frames), "\(name) continues") }
                previous = (bext.timeReference, read.header.frames)
                total += read.header.frames
                for c in 0..<2 { joined[c] += read.channels[c] }
            }
            XCTAssertEqual(total, 168000, "--duration 3.5 in all segments together")
            let report = SequenceCheck.verify(joined)
            XCTAssertNil(report.firstMismatch, report.description)
        }
    }

    /// `--keep 1h` on a dated template removes the logger's own segments older than an hour (and
    /// their sidecars and channel files) that their marks prove jackhost wrote, says so for each
    /// one (stderr, the summary, the new segment's sidecar, --results), and nothing else: not
    /// newer ones, not other names, not another extension, not a link, not a file in another
    /// directory, not the names users give their edits, not a file restored from a backup.
    func testRetentionRemovesOnlyTheLoggersOwnOldSegments() throws {
        let other = workDirectory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let template = path("log-%Y%m%d-%H%M%S.wav")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let old = formatter.string(from: Date().addingTimeInterval(-3 * 3600))
        let recent = formatter.string(from: Date().addingTimeInterval(-600))
        // The logger's own old segments, marked as the recorder marks what it finalises.
        let doomed = ["log-\(old).wav", "log-\(old).wav.json", "log-\(old)-2.wav", "log-\(old)_in_1.wav"]
        let kept = ["log-\(recent).wav", "log-\(old).flac", "notes-\(old).wav", "log-\(old).wav.bak", "log-latest.wav"]
        // Named like segments but never written by jackhost (before, all three were removed).
        let users = ["log-\(old)_edited.wav", "log-\(old)_FINAL-mix.wav", "log-\(old)-1-2.wav", "log-\(old)-3.wav"]
        for name in doomed + kept + users { try Data("x".utf8).write(to: URL(fileURLWithPath: path(name))) }
        for name in doomed + kept { XCTAssertNil(TakeMark.write(path: path(name), template: template)) }
        try Data("x".utf8).write(to: other.appendingPathComponent("log-\(old).wav"))
        XCTAssertNil(TakeMark.write(path: other.appendingPathComponent("log-\(old).wav").path, template: template))
        try FileManager.default.createSymbolicLink(
            atPath: path("log-\(formatter.string(from: Date().addingTimeInterval(-7200))).wav"), withDestinationPath: path("log-latest.wav"))
        let results = path("results.jsonl")
        var stderr = ""
        var stdout = ""
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JackhostBinary.run([
                "run", "--record", template, "-s", server.name, "-d", "0.3", "--keep", "1h", "--sidecar", "--results", results,
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            stderr = result.stderr
            stdout = result.stdout
        }
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: workDirectory.path))
        for name in doomed { XCTAssertFalse(left.contains(name), "\(name) is the logger's own and older than an hour") }
        for name in kept + users { XCTAssertTrue(left.contains(name), "\(name) is not the logger's to remove") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: other.appendingPathComponent("log-\(old).wav").path), "another directory is left alone")
        XCTAssertEqual(
            left.filter { $0.hasPrefix("log-") && $0.hasSuffix(".wav") }.count, 8,
            "the new segment, the recent one, the link, log-latest and the users' four: \(left.sorted())")
        // Every removal said, once each: stderr, the summary's count, --results and the new segment's sidecar.
        for name in doomed {
            XCTAssertEqual(stderr.split(separator: "\n").filter { $0.contains("--keep removed \(path(name)):") }.count, 1, stderr)
        }
        XCTAssertTrue(stdout.contains("--keep removed 4 old file(s)"), stdout)
        XCTAssertTrue(try String(contentsOfFile: results, encoding: .utf8).contains("\"retention\":{\"removed\":4}"))
        let created = try XCTUnwrap(left.first { $0.hasPrefix("log-") && $0.hasSuffix(".wav.json") })
        let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path(created)))) as? [String: Any]
        XCTAssertEqual((sidecar?["removedByRetention"] as? [String])?.sorted(), doomed.map(path).sorted())
        // The new take carries jackhost's mark, as an independent reader (getfattr) shows it.
        let take = String(created.dropLast(5))
        let attribute = try JACKFixture.run(
            "python3", ["-c", "import os,sys; print(os.getxattr(sys.argv[1], 'user.jackhost.take').decode())", path(take)])
        XCTAssertTrue(attribute.stdout.contains("name=\(take)"), attribute.stdout + attribute.stderr)
        XCTAssertTrue(attribute.stdout.contains("template=\(template)"), attribute.stdout)
        reliabilityFigures(
            "--keep 1h with 4 old marked segments and 4 user files named like segments",
            "removed exactly the 4 marked (one line each, summary 4, results 4, sidecar lists them); kept \(kept.count + users.count) others")
    }

    /// `--keep` without FILE would sweep the current directory's earlier takes: refused, with
    /// nothing created and nothing removed.
    func testKeepWithoutAFileIsRefused() throws {
        let earlier = ["jackhost-20200101-000000.wav", "jackhost-20200101-000000-2.wav"]
        for name in earlier { try Data("x".utf8).write(to: URL(fileURLWithPath: path(name))) }
        let result = try JACKFixture.run(JackhostBinary.path, ["record", "--keep", "90m", "-s", "jhtest-never-started"], directory: workDirectory)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("give FILE as a date template"), result.stderr)
        for name in earlier { XCTAssertTrue(FileManager.default.fileExists(atPath: path(name)), name) }
    }

    /// Where the file system cannot store the mark (ramfs keeps no extended attributes), `--keep`
    /// refuses to start, says why and what to do, and leaves every file there alone.
    func testKeepRefusesAFileSystemThatCannotHoldItsMark() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a ramfs needs root (CI runs as root)") }
        let mountPoint = path("ramfs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try JACKFixture.run("/bin/mount", ["-t", "ramfs", "none", mountPoint])
        guard mounted.status == 0 else { throw XCTSkip("this machine refuses a ramfs mount: \(mounted.stderr)") }
        defer { _ = try? JACKFixture.run("/bin/umount", [mountPoint]) }
        let old = mountPoint + "/log-20200101-000000.wav"
        try Data("x".utf8).write(to: URL(fileURLWithPath: old))
        let result = try JackhostBinary.run(
            ["record", mountPoint + "/log-%Y%m%d-%H%M%S.wav", "--split", "1m", "--keep", "1h", "-s", "jhtest-never-started"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("cannot store one"), result.stderr)
        XCTAssertTrue(result.stderr.contains("or leave --keep out"), result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: old), "a file on the unmarkable file system was left alone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint), ["log-20200101-000000.wav"], "nothing created")
    }

    /// --align needs a duration that divides the day; --keep needs a dated name (exit 2 each).
    func testAlignAndKeepRefuseWhatTheyCannotDo() throws {
        for arguments in [
            ["record", path("a.wav"), "--align"],
            ["record", path("a.wav"), "--split", "7m", "--align"],
            ["record", path("a.wav"), "--split", "1G", "--align"],
            ["record", path("a.wav"), "--keep", "7d"],
            ["record", path("log-%H.wav"), "--keep", "7d"],
            ["record", path("a.wav"), "--keep", "7x"],
            ["record", path("a.wav"), "--pre-roll", "2"],
            ["record", path("a.wav"), "--transport", "--freewheel"],
            ["record", path("a.wav"), "--trigger", "-200dBFS"],
            ["record", path("a.wav"), "--hold", "2s"],
            ["run", "--meter", "--channel-files"],
        ] {
            let result = try JackhostBinary.run(arguments + ["-s", "jhtest-never-started"])
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(arguments): \(result.stderr)")
        }
        XCTAssertEqual(try files(matching: ""), [], "nothing was created")
    }
}
