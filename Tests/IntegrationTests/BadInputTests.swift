import Foundation
import JackHost
import XCTest

/// Careless and hostile input, table-driven, against a private server: each case must exit
/// with its documented status and exactly one `jackhost:` line naming the problem, within a
/// wall-clock limit, without crashing, and without leaving a file behind or touching one.
final class BadInputTests: XCTestCase {
    /// One bad command line.
    struct Case {
        var arguments: [String]
        var status: Int32
        /// Text the one stderr line must contain.
        var mentions: String
        var environment: [String: String] = [:]
        /// Text the line must not contain.
        var mustNotMention: String? = nil
    }

    /// Seconds any bad input may take, start to exit.
    static let wallClockLimit = 10.0

    func testEveryBadInputGetsOneLineTheDocumentedStatusAndLeavesFilesAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        // Files a careless user might aim at: a take, a link to it, a dangling link, a take with
        // a segment, a directory with an audio name.
        let precious = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try precious.write(to: URL(fileURLWithPath: path("precious.wav")))
        try precious.write(to: URL(fileURLWithPath: path("segment-0002.wav")))
        try FileManager.default.createSymbolicLink(atPath: path("link.wav"), withDestinationPath: path("precious.wav"))
        try FileManager.default.createSymbolicLink(atPath: path("dangling.wav"), withDestinationPath: path("nowhere.wav"))
        try FileManager.default.createDirectory(atPath: path("adir.wav"), withIntermediateDirectories: false)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()

        try JACKFixture.withServer(captureChannels: 2) { server in
            let s = server.name
            let missing = "jhtest-missing-\(getpid())"
            let long = String(repeating: "a", count: 300)
            let cases: [Case] = [
                // Commands and options.
                Case(arguments: [], status: 2, mentions: "no command"),
                Case(arguments: ["frobnicate"], status: 2, mentions: "frobnicate"),
                Case(arguments: ["record", "x.wav", "--bogus"], status: 2, mentions: "--bogus"),
                Case(arguments: ["record", "x.wav", "--channels"], status: 2, mentions: "needs a value"),
                Case(arguments: ["info", "extra", "-s", s], status: 2, mentions: "\"extra\""),
                Case(arguments: ["meter", "extra", "-s", s], status: 2, mentions: "\"extra\""),
                Case(arguments: ["stream", "extra", "-s", s], status: 2, mentions: "\"extra\""),
                Case(arguments: ["run", "-s", s], status: 2, mentions: "at least one consumer"),
                Case(arguments: ["run", "extra", "--meter", "-s", s], status: 2, mentions: "\"extra\""),
                Case(arguments: ["record", "a.wav", "b.wav", "-s", s], status: 2, mentions: "one FILE"),
                Case(arguments: ["record", "", "-s", s], status: 2, mentions: "empty FILE"),
                Case(arguments: ["run", "--record", "", "-s", s], status: 2, mentions: "empty FILE"),
                Case(arguments: ["signal", "extra", "-s", s], status: 2, mentions: "\"extra\""),
                Case(arguments: ["record", "x.wav", "-s", s, "--server", s], status: 2, mentions: "given twice"),
                Case(arguments: ["run", "--meter", "--output", "x.raw", "-s", s], status: 2, mentions: "applies to --stream"),
                Case(arguments: ["run", "--meter", "--split", "30s", "-s", s], status: 2, mentions: "applies to --record"),
                // Numbers: decimal only, range-checked, never a trap.
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "0"], status: 2, mentions: "--channels 0 is out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "-3"], status: 2, mentions: "--channels -3 is out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "1025"], status: 2, mentions: "1 to 1024"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "many"], status: 2, mentions: "not a whole number"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "0x2"], status: 2, mentions: "--channels 0x2 is not a whole number"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "2.5"], status: 2, mentions: "not a whole number"),
                Case(arguments: ["record", "x.wav", "-s", s, "--channels", "99999999999999999999"], status: 2, mentions: "out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", "-1"], status: 2, mentions: "--duration -1 is out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", "0"], status: 2, mentions: "0.001 to 31536000"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", "0x10"], status: 2, mentions: "--duration 0x10 is not a decimal"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", "1e15"], status: 2, mentions: "--duration 1e15 is not a decimal"),
                Case(arguments: ["meter", "-s", s, "--duration", "1e300"], status: 2, mentions: "--duration 1e300"),
                Case(arguments: ["stream", "-s", s, "--duration", "inf"], status: 2, mentions: "--duration inf"),
                Case(arguments: ["run", "--meter", "-s", s, "--duration", "nan"], status: 2, mentions: "--duration nan"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", "100000000000"], status: 2, mentions: "out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--duration", ""], status: 2, mentions: "not a decimal"),
                Case(arguments: ["meter", "-s", s, "--interval", "0"], status: 2, mentions: "--interval 0 is out of range"),
                Case(arguments: ["meter", "-s", s, "--interval", "1e300"], status: 2, mentions: "--interval 1e300"),
                Case(arguments: ["meter", "-s", s, "--interval", "0x1"], status: 2, mentions: "--interval 0x1"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "lots"], status: 2, mentions: "--split lots"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "9000000000G"], status: 2, mentions: "--split 9000000000G is out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "99999999999999999999999T"], status: 2, mentions: "out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "0s"], status: 2, mentions: "--split 0s is too short; use at least 1s"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "1K"], status: 2, mentions: "--split 1K is too small; use at least 64K"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "1e3s"], status: 2, mentions: "--split 1e3s"),
                Case(arguments: ["record", "x.wav", "-s", s, "--split", "10x"], status: 2, mentions: "--split 10x"),
                Case(arguments: ["record", "x.wav", "-s", s, "--max-buffer", "1e3"], status: 2, mentions: "--max-buffer 1e3"),
                Case(arguments: ["record", "x.wav", "-s", s, "--max-buffer", "100T"], status: 2, mentions: "1M to 64G"),
                Case(arguments: ["stream", "-s", s, "--max-buffer", "0s"], status: 2, mentions: "--max-buffer 0s"),
                Case(arguments: ["record", "x.wav", "-s", s, "--sync-interval", "-1"], status: 2, mentions: "--sync-interval -1 is out of range"),
                Case(arguments: ["record", "x.wav", "-s", s, "--min-free", "lots"], status: 2, mentions: "--min-free lots"),
                Case(arguments: ["run", "--meter", "-s", s, "--min-free", "1G"], status: 2, mentions: "applies to --record"),
                Case(arguments: ["signal", "-s", s, "--amplitude", "2"], status: 2, mentions: "--amplitude 2 is out of range"),
                Case(arguments: ["signal", "-s", s, "--frequency", "0x10"], status: 2, mentions: "--frequency 0x10"),
                Case(arguments: ["signal", "-s", s, "--stall-ms", "1e9"], status: 2, mentions: "--stall-ms 1e9"),
                Case(arguments: ["signal", "-s", s, "--channels", "5000"], status: 2, mentions: "--channels 5000"),
                Case(arguments: ["signal", "-s", s, "--duration", "-5"], status: 2, mentions: "--duration -5"),
                Case(arguments: ["signal", "-s", s, "--kind", "noise"], status: 2, mentions: "noise"),
                // Names, checked against JACK's limits before libjack sees them.
                Case(arguments: ["record", "x.wav", "--server", long], status: 2, mentions: "server name"),
                Case(arguments: ["record", "x.wav", "--server", ""], status: 2, mentions: "server name"),
                Case(arguments: ["record", "x.wav", "--server", "a/b"], status: 2, mentions: "without '/'"),
                Case(arguments: ["record", "x.wav", "-s", s, "--name", String(repeating: "n", count: 64)], status: 2, mentions: "client name"),
                Case(arguments: ["record", "x.wav", "-s", s, "--name", "a:b"], status: 2, mentions: "without ':'"),
                Case(arguments: ["meter", "-s", s, "--name", ""], status: 2, mentions: "client name"),
                Case(arguments: ["info", "-s", long], status: 2, mentions: "server name"),
                Case(arguments: ["signal", "-s", long], status: 2, mentions: "server name"),
                Case(arguments: ["record", "x.wav"], status: 2, mentions: "JACK_DEFAULT_SERVER", environment: ["JACK_DEFAULT_SERVER": long]),
                // Patterns: malformed, or able to stall libjack's matcher.
                Case(arguments: ["record", "x.wav", "-s", s, "--connect", "(a*)*\\1c"], status: 2, mentions: "back-references"),
                Case(arguments: ["record", "x.wav", "-s", s, "--connect", "["], status: 2, mentions: "not a usable regular expression"),
                Case(arguments: ["meter", "-s", s, "--connect", "(a"], status: 2, mentions: "not a usable regular expression"),
                Case(arguments: ["meter", "-s", s, "--connect", "((a{255}){255}){255}"], status: 2, mentions: "expand past"),
                Case(arguments: ["signal", "-s", s, "--connect", "["], status: 2, mentions: "not a usable regular expression"),
                Case(
                    arguments: ["record", "x.wav", "-s", s, "--connect", "nosuch:.*", "-d", "1"], status: 1, mentions: "matches no audio output port"),
                Case(arguments: ["record", "x.wav", "-s", s, "--connect", "a", "--no-auto-connect"], status: 2, mentions: "exclude each other"),
                // Files: never overwritten, never guessed.
                Case(arguments: ["record", "precious.wav", "-s", s, "-d", "1"], status: 2, mentions: "precious.wav exists"),
                Case(arguments: ["record", path("precious.wav"), "-s", s, "-d", "1", "-f", "wav"], status: 2, mentions: "--overwrite"),
                Case(arguments: ["record", "link.wav", "-s", s, "-d", "1"], status: 2, mentions: "link.wav exists"),
                Case(
                    arguments: ["record", "dangling.wav", "-s", s, "-d", "1"], status: 2, mentions: "symbolic link to a file that does not exist",
                    mustNotMention: "File exists"),
                Case(arguments: ["record", "segment.wav", "-s", s, "-d", "1"], status: 2, mentions: "segment-0002.wav exists from an earlier take"),
                Case(arguments: ["record", "adir.wav", "-s", s], status: 2, mentions: "it is a directory"),
                Case(arguments: ["record", path("no/such/dir/take.wav"), "-s", s], status: 2, mentions: "does not exist"),
                Case(arguments: ["record", "/proc/take.wav", "-s", s], status: 2, mentions: "/proc/take.wav"),
                Case(arguments: ["record", "x.m4a", "-s", s], status: 2, mentions: "does not write M4A"),
                Case(arguments: ["record", "x.aiff", "-s", s], status: 2, mentions: "does not write AIFF"),
                Case(arguments: ["record", "x.flac", "-s", s, "-f", "wav"], status: 2, mentions: "does not match --format wav"),
                Case(arguments: ["record", "x.wav", "-s", s, "--format", "aac"], status: 2, mentions: "unknown container \"aac\""),
                Case(arguments: ["record", "x", "-s", s], status: 2, mentions: "no extension"),
                Case(arguments: ["record", "x.bak", "-s", s], status: 2, mentions: "\".bak\""),
                Case(arguments: ["record", "x.wav", "-s", s, "--sample-format", "s12"], status: 2, mentions: "s12"),
                Case(arguments: ["record", "x.flac", "-s", s, "--sample-format", "f32"], status: 2, mentions: "FLAC"),
                Case(arguments: ["record", "-", "-s", s, "--split", "30s"], status: 2, mentions: "standard output"),
                Case(arguments: ["run", "--record", "precious.wav", "--meter", "-s", s], status: 2, mentions: "precious.wav exists"),
                Case(
                    arguments: ["run", "--record", "same.wav", "--stream", "--output", "same.wav", "-s", s, "-d", "1"], status: 2,
                    mentions: "same file"),
                Case(
                    arguments: ["run", "--record", "precious.wav", "--stream", "--output", "link.wav", "--overwrite", "-s", s, "-d", "1"],
                    status: 2, mentions: "same file"),
                Case(arguments: ["stream", "-o", "precious.wav", "-s", s, "-d", "1"], status: 2, mentions: "precious.wav exists"),
                Case(arguments: ["stream", "-o", "/proc/x.raw", "-s", s, "-d", "1"], status: 2, mentions: "/proc/x.raw"),
                Case(arguments: ["stream", "-o", path("no/such/dir/x.raw"), "-s", s], status: 2, mentions: "does not exist"),
                Case(arguments: ["stream", "-o", "", "-s", s], status: 2, mentions: "empty path"),
                Case(arguments: ["stream", "-s", s, "--sample-format", "u8"], status: 2, mentions: "u8"),
                // No server: fail loudly, never fake audio, never suggest what the command rejects.
                Case(arguments: ["record", "x.wav", "-s", missing, "-d", "1"], status: 1, mentions: "no JACK server named \"\(missing)\""),
                Case(arguments: ["info", "-s", missing], status: 1, mentions: "no JACK server named"),
                Case(arguments: ["signal", "-s", missing], status: 1, mentions: "no JACK server named", mustNotMention: "embedded"),
                Case(arguments: ["meter", "-s", missing], status: 1, mentions: "no JACK server named"),
                Case(arguments: ["stream", "-s", missing], status: 1, mentions: "no JACK server named"),
                Case(arguments: ["run", "--meter", "-s", missing], status: 1, mentions: "no JACK server named"),
                Case(
                    arguments: ["record", "x.wav", "-d", "1"], status: 1, mentions: "no JACK server named \"\(missing)\"",
                    environment: ["JACK_DEFAULT_SERVER": missing]),
                // A taken client name is not a missing server.
                Case(
                    arguments: ["record", "x.wav", "-s", s, "-n", "system", "-d", "1"], status: 1, mentions: "client named \"system\" already exists"),
                Case(arguments: ["meter", "-s", s, "-n", "system"], status: 1, mentions: "already exists"),
                Case(arguments: ["signal", "-s", s, "-n", "system"], status: 1, mentions: "already exists"),
                Case(arguments: ["record", "x.wav", "-s", s, "--embedded-server"], status: 2, mentions: "exclude each other"),
                Case(arguments: ["info", "-s", s, "--embedded-server"], status: 2, mentions: "exclude each other"),
            ]
            XCTAssertGreaterThanOrEqual(cases.count, 80)
            var slowest = 0.0
            for entry in cases {
                let label = entry.arguments.map { $0.count > 40 ? String($0.prefix(20)) + "…" : $0 }.joined(separator: " ")
                let result = try JACKFixture.run(
                    JackhostBinary.path, entry.arguments, timeout: 30, environment: entry.environment,
                    directory: directory)
                slowest = max(slowest, result.elapsed)
                XCTAssertFalse(result.signalled, "\(label) crashed: \(result.stderr)")
                XCTAssertEqual(result.status, entry.status, "\(label): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
                XCTAssertEqual(lines.count, 1, "\(label) should print exactly one line: \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("jackhost: "), "\(label): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(entry.mentions), "\(label) should mention \(entry.mentions): \(result.stderr)")
                if let forbidden = entry.mustNotMention {
                    XCTAssertFalse(result.stderr.contains(forbidden), "\(label): \(result.stderr)")
                }
                XCTAssertEqual(result.stdout, "", "\(label) prints nothing on stdout")
                XCTAssertLessThan(result.elapsed, Self.wallClockLimit, "\(label) took \(result.elapsed) s")
                JackhostBinary.assertNoSanitizerReport(result.stderr)
            }
            let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            XCTAssertEqual(after, before, "no file left behind")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("precious.wav"))), precious, "byte-for-byte untouched")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("segment-0002.wav"))), precious, "byte-for-byte untouched")
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost"), "failed runs leave no clients: \(listed.stdout)")
            print("BAD INPUT: \(cases.count) cases, slowest \(slowest.formatted(places: 2)) s")
        }
    }
}
