import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// The Broadcast Wave `bext` chunk of a take: a time reference checked against JACK's own clock,
/// and a coding history that is one true line, read by an independent reader.
final class BroadcastWaveTests: XCTestCase {
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

    /// The `bext` time reference of a WAV and an RF64 take is the wall-clock time of the first
    /// sample's JACK cycle, in samples since local midnight: checked against JACK's own clock
    /// (the generator's frame time of the first sample, turned into time by `jack_frames_to_time`)
    /// within one period. The sidecar carries the same frame time and time reference.
    func testBroadcastWaveTimeReferenceMatchesTheCycleTimeWithinOnePeriod() throws {
        try JACKFixture.withServer(captureChannels: 2, bufferSize: 256) { server in
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
