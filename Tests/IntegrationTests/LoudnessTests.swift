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
            import sys, pyloudnorm, scipy.io.wavfile
            rate, data = scipy.io.wavfile.read(sys.argv[1])
            print(pyloudnorm.Meter(rate).integrated_loudness(data.astype("float64")))
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
