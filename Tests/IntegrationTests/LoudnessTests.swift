import Foundation
import JackHostSignals
import XCTest

/// `--loudness` and `--programme`: EBU R128 through libebur128 on a take recorded live from a
/// private dummy server, checked against the values EBU Tech 3341 gives for its test signals
/// and against an independent implementation, pyloudnorm (BS.1770-4, pure Python), run by
/// Debian's python3 on the same file, read with scipy (not libsndfile).
final class LoudnessTests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-loudness-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    /// pyloudnorm's integrated loudness of a WAV file, in LUFS.
    private func pyloudnorm(_ file: String) throws -> Double {
        let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/python").path
        let script = """
            import sys, numpy, pyloudnorm, scipy.io.wavfile
            rate, data = scipy.io.wavfile.read(sys.argv[1])
            scale = float(numpy.iinfo(data.dtype).max) + 1 if data.dtype.kind == "i" else 1.0
            print(pyloudnorm.Meter(rate).integrated_loudness(data.astype("float64") / scale))
            """
        let result = try JACKFixture.run("/usr/bin/python3", ["-c", script, file], timeout: 60, environment: ["PYTHONPATH": library])
        XCTAssertEqual(result.status, 0, "pyloudnorm (scripts/setup installs it into .build/python): \(result.stderr)")
        return try XCTUnwrap(Double(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), result.stdout + result.stderr)
    }

    /// The value of `field` (LUFS, LU or dBTP) in the summary's loudness line for `name`.
    private func summaryValue(_ output: String, _ name: String, _ field: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("loudness \(name): ") }),
            let range = line.range(of: "\(field) ")
        else { return nil }
        return Double(line[range.upperBound...].prefix { !$0.isWhitespace })
    }

    /// Tech 3341 case 1 and 2: a 1 kHz stereo sine at -23 dBFS is -23.0 LUFS, at -33 dBFS
    /// -33.0 LUFS. Each input alone is 3 dB less (one channel of two); the sine's true peak is its
    /// sample peak. jackhost and pyloudnorm agree within 0.1 LU on the recorded take.
    func testSinesMeasureAsTech3341SaysAndAsPyloudnormDoes() throws {
        for level in [-23.0, -33.0] {
            try JACKFixture.withServer(captureChannels: 2) { server in
                let amplitude = Float(pow(10, level / 20))
                let generator = try TestSignalSource(
                    name: "jhgen", server: server.name, channels: 2, signal: .sine(frequency: 1000, amplitude: amplitude))
                defer { generator.stop() }
                let take = work.appendingPathComponent("sine\(Int(-level)).wav").path
                let results = work.appendingPathComponent("sine\(Int(-level)).jsonl").path
                let result = try JackhostBinary.run([
                    "run", "--record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "4", "--programme", "1-2",
                    "--results", results, "--meter",
                ])
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertEqual(try XCTUnwrap(summaryValue(result.stdout, "1-2", "integrated"), result.stdout), level, accuracy: 0.1)
                // The meter shows a loudness line per measurement beside its levels.
                let meterLine = try XCTUnwrap(result.stdout.split(separator: "\n").last { $0.hasPrefix("LUFS 1-2 ") }, result.stdout)
                XCTAssertTrue(meterLine.contains(" I \(level)") && meterLine.contains("TP \(level) dBTP"), String(meterLine))
                // The results file's summary line carries the unrounded values.
                let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                let running = lines.filter { $0["loudness"] != nil && $0["summary"] == nil }
                XCTAssertGreaterThanOrEqual(running.count, 6, "once a second for each of in_1, in_2 and 1-2")
                let summary = try XCTUnwrap(
                    lines.first { $0["summary"] as? Bool == true && ($0["loudness"] as? [String: Any])?["name"] as? String == "1-2" }
                        .flatMap { $0["loudness"] as? [String: Any] }, "\(lines)")
                let programme = try XCTUnwrap(summary["integrated"] as? Double, "\(summary)")
                XCTAssertEqual(programme, level, accuracy: 0.1, "Tech 3341: \(result.stdout)")
                XCTAssertEqual(try XCTUnwrap(summaryValue(result.stdout, "in_1", "integrated")), level - 3.0, accuracy: 0.1, result.stdout)
                XCTAssertEqual(try XCTUnwrap(summaryValue(result.stdout, "1-2", "peak")), level, accuracy: 0.2, "true peak of a sine")
                XCTAssertEqual(try XCTUnwrap(summaryValue(result.stdout, "1-2", "range")), 0, accuracy: 0.1, "a steady sine has no range")
                let independent = try pyloudnorm(take)
                XCTAssertEqual(programme, independent, accuracy: 0.1, "pyloudnorm on the same take")
                reliabilityFigures("loudness, 1 kHz stereo sine at \(level) dBFS", "jackhost \(programme) LUFS, pyloudnorm \(independent) LUFS")
            }
        }
    }

    /// `--sidecar` with `--loudness`: each segment's sidecar has the segment's loudness and the
    /// take's so far. The level drops 10 dB mid-take; pyloudnorm on each segment file, and on
    /// the files up to it joined, agrees within 0.1 LU.
    func testSidecarsCarryEachSegmentsLoudnessAndTheTakesSoFar() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhgen", server: server.name, channels: 2, signal: .sine(frequency: 1000, amplitude: Float(pow(10, -23.0 / 20))))
            defer { generator.stop() }
            let take = work.appendingPathComponent("log.wav").path
            let child = try RunningJackhost(
                arguments: [
                    "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "6", "--split", "2s", "--sidecar", "--programme", "1-2",
                    "-b", "s24", "--no-meter",
                ], directory: work)
            usleep(3_000_000)
            generator.gain = Float(pow(10, -10.0 / 20))
            XCTAssertEqual(child.wait(), 0, child.stderr)
            let files = (1...3).map { Recorder_numbered(take, $0) }
            var joined: [[Float]] = [[], []]
            for (index, file) in files.enumerated() {
                let sidecar = try XCTUnwrap(
                    JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file + ".json"))) as? [String: Any], file)
                let loudness = try XCTUnwrap(sidecar["loudness"] as? [String: Any], "\(sidecar)")
                func integrated(_ part: String) throws -> Double {
                    let entries = try XCTUnwrap(loudness[part] as? [[String: Any]], "\(loudness)")
                    return try XCTUnwrap(entries.first { $0["name"] as? String == "1-2" }?["integrated"] as? Double, "\(entries)")
                }
                let channels = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(file)).channels
                for c in 0..<2 { joined[c] += channels[c] }
                let joinedFile = work.appendingPathComponent("joined-\(index).wav").path
                try Self.writeFloatWAV(joined, to: joinedFile)
                XCTAssertEqual(try integrated("segment"), try pyloudnorm(file), accuracy: 0.1, "segment \(index + 1)")
                XCTAssertEqual(try integrated("take"), try pyloudnorm(joinedFile), accuracy: 0.1, "the take up to segment \(index + 1)")
            }
            XCTAssertEqual(try pyloudnorm(files[0]), -23, accuracy: 0.1)
            XCTAssertEqual(try pyloudnorm(files[2]), -33, accuracy: 0.1)
        }
    }

    private func Recorder_numbered(_ path: String, _ index: Int) -> String {
        path.replacingOccurrences(of: ".wav", with: String(format: "-%04d.wav", index))
    }

    /// A 32-bit float WAV of planar `channels`, by hand (for pyloudnorm; scipy reads it).
    private static func writeFloatWAV(_ channels: [[Float]], to path: String) throws {
        let frames = channels[0].count, count = channels.count
        var data = Data()
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8))
        append(UInt32(36 + frames * count * 4).littleEndian)
        data.append(contentsOf: Array("WAVEfmt ".utf8))
        append(UInt32(16).littleEndian)
        append(UInt16(3).littleEndian)
        append(UInt16(count).littleEndian)
        append(UInt32(48000).littleEndian)
        append(UInt32(48000 * count * 4).littleEndian)
        append(UInt16(count * 4).littleEndian)
        append(UInt16(32).littleEndian)
        data.append(contentsOf: Array("data".utf8))
        append(UInt32(frames * count * 4).littleEndian)
        for frame in 0..<frames { for c in 0..<count { append(channels[c][frame].bitPattern.littleEndian) } }
        try data.write(to: URL(fileURLWithPath: path))
    }

    func testProgrammeValuesAreCheckedBeforeJACK() throws {
        for (value, line) in [
            ("2-1", "is not FIRST-LAST[:LAYOUT]"), ("1-3", "has 3 inputs; name a layout"), ("1-2:5.1", "5.1 has 6 channels, not 2"),
            ("1-6:quad", "unknown layout \"quad\""),
        ] {
            let result = try JackhostBinary.run(["meter", "--programme", value, "-s", "no-such-server"])
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains(line), result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        }
    }
}
