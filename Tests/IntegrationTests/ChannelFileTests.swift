import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// `--channel-files`: one mono file per channel, all on the same frame, named after their
/// sources, finalised together on every exit path, with names decided and checked before the run.
final class ChannelFileTests: XCTestCase {
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

    /// `--channel-files`: one mono file per input, named after its source (by port name: jack2's
    /// metadata store is shared by every server, so its pretty-names are not trusted), all
    /// starting on the same frame: read together, they are the sequence, bit-exact and aligned.
    func testChannelFilesAreMonoAlignedToTheFrameAndNamedAfterTheirSources() throws {
        try JACKFixture.withServer(captureChannels: 4) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 4, signal: .sequence)
            defer { generator.stop() }
            let result = try JackhostBinary.run([
                "record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1", "--channel-files",
                "--quiet",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let names = (1...4).map { "take_jhgen_out_\($0).wav" }
            XCTAssertEqual(try files(matching: ".wav"), names)
            var channels: [[Float]] = []
            for name in names {
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path(name)), .init(frames: 48000, channels: 1, sampleRate: 48000))
                let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path(name)))
                XCTAssertEqual(try AudioFileCheck.readWithSox(path(name), channels: 1)[0], read.channels[0], "sox and libsndfile agree on \(name)")
                channels.append(read.channels[0])
            }
            let report = SequenceCheck.verify(channels)
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertGreaterThan(report.checkedFrames, 40000, report.description)
        }
    }

    /// Channel files are the way past a container's channel limit: ten inputs into FLAC (which
    /// holds at most 8 in one file), each file mono and lossless, read back by sox.
    func testChannelFilesTakeMoreInputsThanOneFLACFileHolds() throws {
        try JACKFixture.withServer(captureChannels: 10) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 10, signal: .sequence)
            defer { generator.stop() }
            let refused = try JackhostBinary.run([
                "record", path("one.flac"), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.5", "--quiet",
            ])
            XCTAssertEqual(refused.status, 2, "one FLAC file cannot hold ten inputs: \(refused.stderr)")
            XCTAssertTrue(refused.stderr.contains("--channel-files"), refused.stderr)
            let result = try JackhostBinary.run([
                "record", path("take.flac"), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.5", "--channel-files",
                "--sample-format", "s24", "--quiet",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let names = (1...10).map { "take_jhgen_out_\($0).flac" }
            XCTAssertEqual(try files(matching: ".flac"), names.sorted())
            for name in names {
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path(name)), .init(frames: 24000, channels: 1, sampleRate: 48000))
                XCTAssertEqual(try AudioFileCheck.readWithSox(path(name), channels: 1)[0].count, 24000, "sox reads \(name)")
            }
        }
    }

    /// Channel files end together on every exit path: a signal, the server's death, and jackhost
    /// itself killed with SIGKILL (the headers are rewritten together every half second). Each
    /// time every file of the set is valid and holds as many frames as the others.
    func testChannelFilesAreFinalisedTogetherOnEveryExitPath() throws {
        try JACKFixture.serialized {
            for (index, ending) in ["SIGINT", "server lost", "SIGKILL"].enumerated() {
                let name = PrivateJACKServer.uniqueName(prefix: "jhtest")
                let server = PrivateJACKServer(name: name, captureChannels: 3, synchronous: true)
                try server.start()
                defer { server.stop() }
                let generator = try TestSignalSource(name: "jhgen", server: name, channels: 3, signal: .sequence)
                let stem = "exit\(index)"
                let child = try JackhostBinary.start(
                    ["record", path("\(stem).wav"), "-s", name, "--connect", "jhgen:out_.*", "--channel-files", "--no-reconnect", "--no-meter"],
                    directory: workDirectory)
                usleep(1_500_000)
                switch ending {
                case "SIGINT":
                    child.signal(SIGINT)
                    XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
                case "server lost":
                    server.crash()
                    generator.abandon()
                    XCTAssertEqual(child.wait(timeout: 10), 3, child.stderr)
                default:
                    child.signal(SIGKILL)
                    _ = child.wait(timeout: 10)
                }
                if ending != "server lost" { generator.stop() }
                let names = (1...3).map { "\(stem)_jhgen_out_\($0).wav" }
                var channels: [[Float]] = []
                for file in names {
                    let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path(file)), "\(ending): \(file) is readable")
                    XCTAssertEqual(header.channels, 1)
                    channels.append(try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path(file))).channels[0])
                }
                let lengths = Set(channels.map(\.count))
                XCTAssertEqual(lengths.count, 1, "\(ending): every channel file holds the same frames: \(channels.map(\.count))")
                XCTAssertGreaterThan(channels[0].count, 24000, ending)
                let report = SequenceCheck.verify(channels)
                XCTAssertNil(report.firstMismatch, "\(ending): \(report.description)")
                reliabilityFigures(
                    "channel files, \(ending) mid-take",
                    "3 mono files of \(channels.map(\.count).map(String.init).joined(separator: "/")) frames, all readable, bit-exact")
            }
        }
    }

    /// An input with one source is named after it, one with none is `in_N`; `-` cannot take
    /// channel files (exit 2, one line).
    func testChannelFilesWithoutASourceAreInNAndStandardOutputIsRefused() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JackhostBinary.run(["record", path("log.w64"), "-s", server.name, "-d", "0.2", "--channel-files"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try files(matching: ".w64"), ["log_system_capture_1.w64", "log_system_capture_2.w64"])
            XCTAssertTrue(result.stderr.contains("channel file 1: \(path("log_system_capture_1.w64")) (its source's port name)"), result.stderr)
            let alone = try JackhostBinary.run(
                ["record", path("none.w64"), "-s", server.name, "-c", "2", "-d", "0.2", "--channel-files", "--no-auto-connect", "--quiet"])
            XCTAssertEqual(alone.status, 0, alone.stderr)
            XCTAssertEqual(try files(starting: "none"), ["none_in_1.w64", "none_in_2.w64"])
            let refused = try JackhostBinary.run(["record", "-", "-s", server.name, "-d", "0.2", "--channel-files"])
            XCTAssertEqual(refused.status, 2, refused.stderr)
            XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        }
    }

    /// The names checked for overwrites are exactly the names the take writes, decided once the
    /// inputs are wired and before any file: a real collision is status 2 with no file made, and a
    /// stale file of a name the take would never write (`take_in_1.wav`) blocks nothing. Before,
    /// the check tested `NAME_in_N` while the take wrote other names: a real collision was found
    /// only at run time (status 1), and a stale `NAME_in_1.wav` blocked a take.
    func testChannelFileNamesAreDecidedPrintedAndCheckedBeforeTheRun() throws {
        try Data("stale".utf8).write(to: URL(fileURLWithPath: path("take_in_1.wav")))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path("clash_jhgen_out_2.wav")))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path("given_snare.wav")))
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let connect = ["-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.5", "--channel-files"]
            let fine = try JackhostBinary.run(["record", path("take.wav")] + connect)
            XCTAssertEqual(fine.status, 0, "a stale take_in_1.wav is no name of this take's: \(fine.stderr)")
            XCTAssertEqual(fine.stderr.split(separator: "\n").filter { $0.contains("channel file") }.count, 2, fine.stderr)
            let clash = try JackhostBinary.run(["record", path("clash.wav")] + connect)
            XCTAssertEqual(clash.status, 2, clash.stderr)
            XCTAssertEqual(clash.stderr.split(separator: "\n").count, 1, clash.stderr)
            XCTAssertTrue(clash.stderr.contains("clash_jhgen_out_2.wav exists"), clash.stderr)
            XCTAssertEqual(try files(starting: "clash"), ["clash_jhgen_out_2.wav"], "no file of the refused take was made")
            XCTAssertEqual(try String(contentsOfFile: path("clash_jhgen_out_2.wav"), encoding: .utf8), "mine")
            // --channel-names: the user's names, checked before JACK is touched.
            let named = try JackhostBinary.run(["record", path("named.wav"), "--channel-names", "kick,snare"] + connect)
            XCTAssertEqual(named.status, 0, named.stderr)
            XCTAssertEqual(try files(starting: "named"), ["named_kick.wav", "named_snare.wav"])
            XCTAssertTrue(named.stderr.contains("(--channel-names)"), named.stderr)
            let given = try JackhostBinary.run([
                "record", path("given.wav"), "--channel-names", "kick,snare", "-s", "jhtest-never-started", "--channel-files",
            ])
            XCTAssertEqual(given.status, 2, given.stderr)
            XCTAssertTrue(given.stderr.contains("given_snare.wav exists"), given.stderr)
            let miscounted = try JackhostBinary.run(["record", path("three.wav"), "--channel-names", "a,b,c"] + connect)
            XCTAssertEqual(miscounted.status, 2, miscounted.stderr)
            XCTAssertTrue(miscounted.stderr.contains("gives 3 names for 2 inputs"), miscounted.stderr)
            XCTAssertEqual(try files(starting: "three"), [])
        }
    }

    /// Two servers at once, each with a generator whose ports carry pretty-names, in jack2's one
    /// shared metadata store: the take's file names are the same on every run, whatever the other
    /// server's clients do. Before, closing a client on one server erased a pretty-name of the
    /// other's, and a take's files fell back to `in_N` names from run to run.
    func testChannelFileNamesDoNotDependOnAnotherServersMetadata() throws {
        try JACKFixture.serialized {
            let first = PrivateJACKServer(name: PrivateJACKServer.uniqueName(prefix: "jhtest"), captureChannels: 2, synchronous: true)
            let second = PrivateJACKServer(name: PrivateJACKServer.uniqueName(prefix: "jhtest"), captureChannels: 2, synchronous: true)
            try first.start()
            defer { first.stop() }
            try second.start()
            defer { second.stop() }
            let generator = try RunningJackhost(
                arguments: ["signal", "-s", first.name, "--name", "jhgen", "--channels", "2"], directory: workDirectory)
            defer {
                generator.signal(SIGTERM)
                _ = generator.wait()
            }
            var seen: Set<[String]> = []
            for run in 0..<3 {
                // On the other server, a client with pretty-named ports comes and goes.
                let other = try RunningJackhost(
                    arguments: ["signal", "-s", second.name, "--name", "jhother", "--channels", "2"], directory: workDirectory)
                usleep(300_000)
                let result = try JackhostBinary.run([
                    "record", path("run\(run).wav"), "-s", first.name, "--connect", "jhgen:out_.*", "-d", "0.3", "--channel-files", "--quiet",
                ])
                XCTAssertEqual(result.status, 0, result.stderr)
                other.signal(SIGTERM)
                _ = other.wait()
                seen.insert(try files(starting: "run\(run)").map { String($0.dropFirst("runN".count)) })
            }
            XCTAssertEqual(seen, [["_jhgen_out_1.wav", "_jhgen_out_2.wav"]], "the same names every run")
        }
    }
}
