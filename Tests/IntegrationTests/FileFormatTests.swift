import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// The file formats of a take: every lossless one bit-exact, and Ogg Vorbis, Opus and MP3 with
/// the limits of each container: every lossy take reads back through libsndfile and through an
/// independent decoder measured by sox, with its length and level; a take a container cannot
/// hold is refused before the run, in one line.
final class FileFormatTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: workDirectory) }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// The sine every lossy take records: 1 kHz at amplitude 0.5, so an RMS of 0.5/√2.
    private let expectedRMS = 0.5 / 2.0.squareRoot()

    /// What `sox FILE -n stat` says: length in seconds and RMS amplitude over all channels.
    private func soxStat(_ file: String) throws -> (seconds: Double, rms: Double) {
        let result = try JACKFixture.run("sox", [file, "-n", "stat"])
        XCTAssertEqual(result.status, 0, "sox reads \(file): \(result.stderr)")
        func field(_ name: String) -> Double? {
            result.stderr.split(separator: "\n").first { $0.hasPrefix(name) }
                .flatMap { Double($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
        }
        return (try XCTUnwrap(field("Length (seconds)"), result.stderr), try XCTUnwrap(field("RMS     amplitude"), result.stderr))
    }

    private func decibels(_ rms: Double) -> Double { 20 * log10(rms / expectedRMS) }

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

    /// Each lossy format records 2 s of a sine from a private server and reads back: libsndfile
    /// finds 2 channels at 48 kHz and 96000 frames give or take one codec frame, and the level
    /// within 1 dB; sox (MP3 through libmad, Vorbis through libvorbisfile; Opus decoded by
    /// opusdec first, as Debian's sox has no Opus reader) agrees on length and level.
    func testLossyTakesReadBackWithTheirLengthAndLevel() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhfmt", server: server.name, channels: 2, signal: .sine(frequency: 1000, amplitude: 0.5))
            defer { generator.stop() }
            for container in ["ogg", "opus", "mp3"] {
                let take = path("take.\(container)")
                let result = try JackhostBinary.run([
                    "record", take, "-s", server.name, "--connect", "jhfmt:out_.*", "-d", "2", "-q", "--quality", "0.6",
                ])
                XCTAssertEqual(result.status, 0, "\(container): \(result.stderr)")
                // Opus works in 20 ms packets and MP3 in 1152-frame frames; allow two MP3 frames.
                let tolerance = 2304
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take), "sndfile-info reads \(container)")
                XCTAssertEqual(header.channels, 2, container)
                XCTAssertEqual(header.sampleRate, 48000, container)
                XCTAssertEqual(header.frames, 96000, accuracy: tolerance, container)

                let (_, channels) = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take), "libsndfile reads \(container)")
                // Skip 100 ms at each end: codec priming, and the cycle before the connection.
                let middle = channels.flatMap { $0.dropFirst(4800).dropLast(4800) }
                let rms = (middle.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(middle.count, 1))).squareRoot()
                XCTAssertEqual(decibels(rms), 0, accuracy: 1, "\(container) through libsndfile: RMS \(rms)")

                var soxInput = take
                if container == "opus" {
                    let decoded = path("take-opusdec.wav")
                    guard PrivateJACKServer.findExecutable("opusdec") != nil else {
                        XCTFail("opusdec is missing; run scripts/setup (it installs opus-tools)")
                        continue
                    }
                    let decode = try JACKFixture.run("opusdec", ["--quiet", "--rate", "48000", take, decoded])
                    XCTAssertEqual(decode.status, 0, decode.stderr)
                    soxInput = decoded
                } else {
                    let info = try JACKFixture.run("sox", ["--i", "-c", take])
                    XCTAssertEqual(info.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "2", "sox --i: \(info.stderr)")
                }
                let stat = try soxStat(soxInput)
                XCTAssertEqual(stat.seconds, 2, accuracy: Double(tolerance) / 48000, "\(container) length through sox")
                XCTAssertEqual(decibels(stat.rms), 0, accuracy: 1, "\(container) through sox: RMS \(stat.rms)")
            }
        }
    }

    /// `--quality` reaches the encoder from both record and run: 0.1 makes a smaller file than 0.9.
    func testQualityChangesTheEncoding() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhfmt", server: server.name, channels: 2, signal: .tones(baseFrequency: 220, amplitude: 0.5))
            defer { generator.stop() }
            for container in ["ogg", "opus", "mp3"] {
                let small = path("small.\(container)"), large = path("large.\(container)")
                let record = try JackhostBinary.run([
                    "record", small, "-s", server.name, "--connect", "jhfmt:out_.*", "-d", "2", "-q", "--quality", "0.1",
                ])
                XCTAssertEqual(record.status, 0, record.stderr)
                let run = try JackhostBinary.run([
                    "run", "--record", large, "-s", server.name, "--connect", "jhfmt:out_.*", "-d", "2", "--quality", "0.9",
                ])
                XCTAssertEqual(run.status, 0, run.stderr)
                let sizes = try [small, large].map { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) }
                XCTAssertLessThan(sizes[0], sizes[1], "\(container): --quality 0.1 is smaller than 0.9")
            }
        }
    }

    /// A take the container cannot hold is refused before the run: status 2, one line that
    /// names the limit and what to do, and no file. FLAC stops at 8 channels (found when the
    /// server's 9 capture ports are counted, or from --channels), MP3 at 2; the hinted W64
    /// takes the same 9 channels bit-exact.
    func testChannelLimitsAreRefusedWithAHint() throws {
        try JACKFixture.withServer(captureChannels: 9) { server in
            let generator = try TestSignalSource(name: "jhfmt", server: server.name, channels: 9, signal: .sequence)
            defer { generator.stop() }
            let s = server.name
            let connect = ["--connect", "jhfmt:out_.*"]
            let cases: [(arguments: [String], mentions: [String])] = [
                (["record", path("nine.flac"), "-s", s, "-d", "1"] + connect, ["FLAC holds at most 8 channels", "has 9", "--channel-files", "w64"]),
                (["record", path("nine.flac"), "-s", s, "-c", "9", "-d", "1"] + connect, ["FLAC holds at most 8 channels", "--channel-files"]),
                (["run", "--record", path("nine.flac"), "-s", s, "-d", "1"] + connect, ["FLAC holds at most 8 channels"]),
                (
                    ["record", path("three.mp3"), "-s", s, "-c", "3", "-d", "1"] + connect,
                    ["MP3 holds at most 2 channels", "--channel-files", "opus"]
                ),
                (["record", path("nine.mp3"), "-s", s, "-d", "1"] + connect, ["MP3 holds at most 2 channels", "has 9"]),
                (["record", path("s24.opus"), "-s", s, "-c", "2", "-b", "s24", "-d", "1"] + connect, ["OPUS cannot store s24", "f32"]),
                (["record", path("q.wav"), "-s", s, "-c", "2", "--quality", "0.5", "-d", "1"] + connect, ["--quality applies to ogg, opus and mp3"]),
                (
                    ["record", path("q.ogg"), "-s", s, "-c", "2", "--quality", "1.5", "-d", "1"] + connect,
                    ["--quality 1.5", "0 (smallest file) to 1"]
                ),
                (["record", path("big.ogg"), "-s", s, "-c", "2", "--split", "10M", "-d", "1"] + connect, ["by duration"]),
            ]
            for entry in cases {
                let label = entry.arguments.joined(separator: " ")
                let result = try JackhostBinary.run(entry.arguments, timeout: 20)
                XCTAssertEqual(result.status, 2, "\(label): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(label) prints one line: \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("jackhost: "), result.stderr)
                for text in entry.mentions { XCTAssertTrue(result.stderr.contains(text), "\(label) should mention \(text): \(result.stderr)") }
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path)
            XCTAssertEqual(left, [], "a refused take leaves no file")

            let w64 = path("nine.w64")
            let result = try JackhostBinary.run(["record", w64, "-s", s, "-d", "1", "-q"] + connect)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(w64), .init(frames: 48000, channels: 9, sampleRate: 48000))
            let channels = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(w64)).channels
            XCTAssertNil(SequenceCheck.verify(channels).firstMismatch, "9 channels bit-exact in W64")
        }
    }

    /// Opus encodes only at 8, 12, 16, 24 and 48 kHz: a 44.1 kHz server is refused before the run.
    func testOpusRefusesA44100HzServer() throws {
        try JACKFixture.withServer(captureChannels: 2, sampleRate: 44100) { server in
            let take = path("cd.opus")
            let result = try JackhostBinary.run(["record", take, "-s", server.name, "-d", "1"], timeout: 20)
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("OPUS encodes only at 8, 12, 16, 24 or 48 kHz"), result.stderr)
            XCTAssertTrue(result.stderr.contains("44100 Hz"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: take))
            // MP3 and Vorbis take 44.1 kHz.
            for container in ["mp3", "ogg"] {
                let other = path("cd.\(container)")
                let recorded = try JackhostBinary.run(["record", other, "-s", server.name, "-d", "0.5", "-q"])
                XCTAssertEqual(recorded.status, 0, recorded.stderr)
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(other)?.sampleRate, 44100, container)
            }
        }
    }

    /// `jackhost record --help` lists what this machine's libsndfile writes.
    func testHelpListsTheWritableContainers() throws {
        let result = try JackhostBinary.run(["record", "--help"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.contains("wav, rf64, w64, caf, flac, ogg, opus or mp3"), result.stdout)
        XCTAssertTrue(result.stdout.contains("--quality Q"), result.stdout)
    }
}
