import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// Takes that line up: one file per channel on the same frame, a Broadcast Wave time reference
/// checked against JACK's own clock, and log segments split on wall-clock boundaries that
/// continue each other exactly.
final class TakeTimeTests: XCTestCase {
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

    // MARK: Channel files

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

    // MARK: Broadcast Wave time reference

    /// The `bext` time reference of a WAV and an RF64 take is the wall-clock time of the first
    /// sample's JACK cycle, in samples since local midnight: checked against JACK's own clock
    /// (the generator's frame time of the first sample, turned into time by `jack_frames_to_time`)
    /// within one period. The sidecar carries the same frame time and time reference.
    func testBroadcastWaveTimeReferenceMatchesTheCycleTimeWithinOnePeriod() throws {
        try JACKFixture.withServer(captureChannels: 2, bufferFrames: 256) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            for name in ["take.wav", "take.rf64", "take.w64"] {
                let take = path(name)
                let result = try JackhostBinary.run([
                    "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1", "--sidecar", "--quiet",
                ])
                XCTAssertEqual(result.status, 0, result.stderr)
                let bext = try XCTUnwrap(BroadcastChunk.read(take), "\(name) has a bext chunk")
                XCTAssertEqual(bext.originator, "jackhost")
                let sidecar = try XCTUnwrap(
                    JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: take + ".json"))) as? [String: Any])
                let first = try XCTUnwrap(sidecar["firstSample"] as? [String: Any])
                XCTAssertEqual((first["timeReference"] as? NSNumber)?.uint64Value, bext.timeReference, "sidecar and bext agree")
                XCTAssertEqual(sidecar["complete"] as? Bool, true)

                // Independent: which generator frame is the take's first sample, and when JACK played it.
                let channels = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take)).channels
                // sox is the independent reader. It opens W64 through its libsndfile plugin, which rescales a
                // float file whose peak reaches full scale by 32767/32768 (a libsndfile-written W64 reads the
                // same way), so sox is compared within 1e-4, and libsndfile's read is checked bit-exact.
                let sox = try AudioFileCheck.readWithSox(take, channels: 2)
                XCTAssertEqual(sox.map(\.count), channels.map(\.count), "\(name): sox reads as many frames")
                let worst = zip(sox, channels).flatMap { zip($0, $1).map { abs($0 - $1) } }.max() ?? 1
                XCTAssertLessThan(worst, 1e-4, "\(name): sox and libsndfile agree")
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(take)?.frames, 48000, name)
                let sequence = SequenceCheck.verify(channels)
                XCTAssertNil(sequence.firstMismatch, "\(name): \(sequence.description)")
                let sounding = try XCTUnwrap(channels[1].firstIndex { $0 != 0 }, "the take carries the signal")
                let signalFrame = SequenceCheck.frame(at: sounding, in: channels)
                let origin = try XCTUnwrap(generator.firstFrameTime)
                let firstFrameTime = origin &+ UInt32(truncatingIfNeeded: signalFrame) &- UInt32(sounding)
                XCTAssertEqual((first["jackFrameTime"] as? NSNumber)?.uint32Value, firstFrameTime, "the sidecar's frame time")
                let jackNow = JackClient.microsecondClock
                let wallNow = Date().timeIntervalSince1970
                // The generator's own record of that cycle: a jack_frames_to_time now would extrapolate
                // from a clock model that xruns since the take began have moved (seen: 6-16 ms late
                // under the RealtimeSanitizer pass).
                let cycleMicroseconds = try XCTUnwrap(generator.microseconds(atFrameTime: firstFrameTime), name)
                let wall = wallNow - Double(Int64(jackNow) - Int64(cycleMicroseconds)) / 1e6
                let midnight = Calendar.current.startOfDay(for: Date(timeIntervalSince1970: wall)).timeIntervalSince1970
                let expected = (wall - midnight) * 48000
                let difference = abs(Double(bext.timeReference) - expected)
                XCTAssertLessThanOrEqual(difference, 256, "\(name): bext \(bext.timeReference) vs JACK's clock \(expected)")
                XCTAssertEqual(bext.date.count, 10)
                reliabilityFigures("bext time reference (\(name))", "\(Int(difference)) frames from JACK's clock (one period is 256)")
            }
        }
    }

    /// Each file's `bext` coding history is exactly one line, and a true one: float, 24-bit and
    /// split WAV takes, a 4-channel 16-bit RF64 take, a float W64 take and 32-bit channel files,
    /// each read by a reader that is neither libsndfile nor jackhost's code (Python's standard
    /// library walking the chunks). libsndfile alone would leave a second, false line of its own
    /// (`A=PCM,…,W=24,…,T=libsndfile-…` for a float take). `sndfile-info` still reads each file.
    func testBroadcastWaveCodingHistoryIsOneTrueLine() throws {
        let reader = path("coding-history.py")
        try Self.codingHistoryReader.write(toFile: reader, atomically: true, encoding: .utf8)
        try JACKFixture.withServer(captureChannels: 4) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 4, signal: .sequence)
            defer { generator.stop() }
            let stereoFloat = "A=PCM_FLOAT,F=48000,W=32,M=stereo,T=jackhost"
            let stereo24 = "A=PCM,F=48000,W=24,M=stereo,T=jackhost"
            // The take's name, its options, how many files it makes (named after it), and the line each must carry.
            let cases: [(take: String, options: [String], files: Int, line: String)] = [
                ("float.wav", ["-c", "2"], 1, stereoFloat),
                ("s24.wav", ["-c", "2", "-b", "s24"], 1, stereo24),
                ("split.wav", ["-c", "2", "-b", "s24", "--split", "1s"], 2, stereo24),
                ("multi.rf64", ["-c", "4", "-b", "s16"], 1, "A=PCM,F=48000,W=16,M=multi,T=jackhost"),
                ("float.w64", ["-c", "2"], 1, stereoFloat),
                ("chan.wav", ["-c", "2", "-b", "s32", "--channel-files"], 2, "A=PCM,F=48000,W=32,M=mono,T=jackhost"),
            ]
            for test in cases {
                let result = try JackhostBinary.run(
                    ["record", path(test.take), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1.5", "--quiet"] + test.options)
                XCTAssertEqual(result.status, 0, "\(test.take): \(result.stderr)")
                let (stem, ext) = (test.take.split(separator: ".")[0], "." + test.take.split(separator: ".")[1])
                let made = try files(matching: ext).filter { $0.hasPrefix(stem) }
                XCTAssertEqual(made.count, test.files, "\(test.take) made \(made)")
                for file in made {
                    let read = try JACKFixture.run("python3", [reader, path(file)])
                    XCTAssertEqual(read.status, 0, "\(file): \(read.stderr)")
                    // The reader prints the coding history with CR and LF escaped, then whether the rest of the area is NUL.
                    XCTAssertEqual(read.stdout, "\(test.line)\\r\\n\nrest is NUL\n", file)
                    try assertSndfileInfoReads(path(file))
                }
            }
        }
    }

    /// `sndfile-info` reads the file and finds nothing wrong in it. (libsndfile knows no `bext` in
    /// Wave64, and says it skips that chunk; that note is all it may say.)
    private func assertSndfileInfoReads(_ file: String, line: UInt = #line) throws {
        let info = try JACKFixture.run("sndfile-info", [file])
        XCTAssertEqual(info.status, 0, "\(file): \(info.stdout)\(info.stderr)", line: line)
        XCTAssertNotNil(try AudioFileCheck.sndfileInfoHeader(file), "\(file): \(info.stdout)", line: line)
        let said = info.stdout.split(separator: "\n").filter { !$0.contains("Unknown chunk marker") || !file.hasSuffix(".w64") }
        for complaint in ["rror", "nvalid", "***", "nknown", "arning"] {
            XCTAssertFalse(said.contains { $0.contains(complaint) }, "\(file): sndfile-info said \(complaint):\n\(info.stdout)", line: line)
        }
    }

    /// Prints a RIFF, RF64 or Wave64 file's `bext` coding history (CR and LF shown as `\r`, `\n`)
    /// and whether the rest of the area is NUL; Python's standard library only.
    static let codingHistoryReader = #"""
        import struct, sys
        data = open(sys.argv[1], "rb").read()
        w64 = data[:4] == b"riff"
        if not (w64 or data[:4] in (b"RIFF", b"RF64")):
            sys.exit("not RIFF, RF64 or Wave64")
        offset = 40 if w64 else 12
        while offset + (24 if w64 else 8) <= len(data):
            name = data[offset:offset + 4]
            if w64:
                size = struct.unpack_from("<Q", data, offset + 16)[0] - 24
                body = offset + 24
            else:
                size = struct.unpack_from("<I", data, offset + 4)[0]
                body = offset + 8
            if name == b"bext":
                area = data[body + 602:body + size]
                history = area.rstrip(b"\0")
                print(history.decode("ascii").replace("\r", "\\r").replace("\n", "\\n"))
                print("rest is NUL" if all(b == 0 for b in area[len(history):]) else "rest is not NUL")
                sys.exit(0)
            if name == b"data":
                break
            end = body + size
            offset = end + ((8 - end % 8) % 8 if w64 else end & 1)
        sys.exit("no bext chunk before the audio")
        """#

    // MARK: Aligned log segments

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

/// An independent reader of the Broadcast Wave `bext` chunk of a RIFF, RF64 or Wave64 file (EBU Tech 3285).
enum BroadcastChunk {
    struct Fields {
        var originator: String
        var date: String
        var time: String
        var timeReference: UInt64
    }

    static func read(_ path: String) throws -> Fields? {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count > 40 else { return nil }
        func u32(_ offset: Int) -> UInt32 { data[offset..<offset + 4].enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * $1.offset) } }
        func text(_ range: Range<Int>) -> String { String(decoding: data[range].prefix { $0 != 0 }, as: UTF8.self) }
        let magic = String(decoding: data[0..<4], as: UTF8.self)
        // Wave64: 16-byte GUID chunk names, 64-bit sizes that include the 24-byte chunk header, 8-byte alignment.
        let wave64 = magic == "riff"
        guard wave64 || magic == "RIFF" || magic == "RF64" else { return nil }
        var offset = wave64 ? 40 : 12
        while offset + (wave64 ? 24 : 8) <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = wave64 ? Int(UInt64(u32(offset + 16)) | UInt64(u32(offset + 20)) << 32) - 24 : Int(u32(offset + 4))
            let body = offset + (wave64 ? 24 : 8)
            if id == "bext" {
                return Fields(
                    originator: text(body + 256..<body + 288), date: text(body + 320..<body + 330),
                    time: text(body + 330..<body + 338),
                    timeReference: UInt64(u32(body + 338)) | UInt64(u32(body + 342)) << 32)
            }
            if id == "data" && size == 0xFFFF_FFFF { return nil }
            offset = wave64 ? body + size + (8 - (body + size) % 8) % 8 : body + size + (size & 1)
        }
        return nil
    }
}
