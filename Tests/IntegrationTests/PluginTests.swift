import Foundation
import JackHost
import JackHostTesting
import XCTest

/// compute what a loudness meter must read for a steady sine.
enum BS1770 {
    static let shelf = (b: [1.53512485958697, -2.69169618940638, 1.19839281085285], a: [-1.69065929318241, 0.73248077421585])
    static let highPass = (b: [1.0, -2.0, 1.0], a: [-1.99004745483398, 0.99007225036621])

    /// |H(e^jω)|² of one section at 48 kHz.
    static func power(_ section: (b: [Double], a: [Double]), at frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / 48000
        func response(_ c: [Double]) -> (Double, Double) {
            (c[0] + c[1] * cos(w) + c[2] * cos(2 * w), -c[1] * sin(w) - c[2] * sin(2 * w))
        }
        let (nr, ni) = response(section.b), (dr, di) = response([1] + section.a)
        return (nr * nr + ni * ni) / (dr * dr + di * di)
    }

    /// -0.691 + 10 log10(A²/2 · |K(f)|²): the loudness of a sine of amplitude A at f, in LUFS.
    static func sineLoudness(frequency: Double, amplitude: Double) -> Double {
        -0.691 + 10 * log10(amplitude * amplitude / 2 * power(shelf, at: frequency) * power(highPass, at: frequency))
    }
}

/// `jackhost run --plugin` and `jackhost plugin` end to end, against private dummy servers with
/// a generator client in the test process.
final class PluginTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: JackhostBinary.path),
            "build jackhost first (swift build): \(JackhostBinary.path)")
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: workDirectory) }

    private func file(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Runs `body` with a server whose two capture inputs are fed a full-scale 1 kHz sine by "jhgen".
    private func withToneServer(_ body: (PrivateJACKServer) throws -> Void) throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhgen", server: server.name, channels: 2,
                signal: .sine(frequency: 1000, amplitude: 1.0))
            defer { generator.stop() }
            try body(server)
        }
    }

    private func jsonLines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
    }

    // MARK: Running plugins

    func testFrequencyEstimatorReportsTheToneOnEveryChannel() throws {
        let estimator = try ExamplePlugins.path("FrequencyEstimator")
        let output = file("frequency.txt")
        try withToneServer { server in
            // Two instances of one plugin: one writes a file, one writes to jackhost's stdout.
            let result = try JackhostBinary.run([
                "run", "--plugin", "\(estimator):output=\(output)", "--plugin", estimator,
                "-s", server.name, "--connect", "jhgen:out_.*", "-d", "2",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let fromFile = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
            let fromStdout = result.stdout.split(separator: "\n").filter { $0.hasPrefix("frequency ") }
            for lines in [fromFile, fromStdout] {
                XCTAssertEqual(lines.map { $0.split(separator: " ")[1] }, ["in_1", "in_2"], "\(lines)")
                for line in lines {
                    let fields = line.split(separator: " ")
                    XCTAssertEqual(fields.count, 4, String(line))
                    XCTAssertEqual(fields.last, "Hz", String(line))
                    XCTAssertEqual(Double(fields[2]) ?? 0, 1000, accuracy: 1, String(line))
                }
            }
        }
    }

    func testLoudnessMeterMatchesTheBS1770Formula() throws {
        let meter = try ExamplePlugins.path("LoudnessMeter")
        let output = file("loudness.jsonl")
        let expected = BS1770.sineLoudness(frequency: 1000, amplitude: 1)
        XCTAssertEqual(expected, -3.0, accuracy: 0.05, "a full-scale 1 kHz sine is about -3 LUFS")
        try withToneServer { server in
            let result = try JackhostBinary.run([
                "run", "--plugin", "\(meter):output=\(output)",
                "-s", server.name, "--connect", "jhgen:out_.*", "-d", "4.5",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let lines = try jsonLines(output)
        for channel in ["in_1", "in_2"] {
            let readings = lines.filter { $0["channel"] as? String == channel && $0["summary"] == nil }
            // The first window may start before the connection is made; from 1 s on, every window is all tone.
            let settled = readings.filter { ($0["time"] as? Double ?? 0) >= 1.0 }
            XCTAssertGreaterThanOrEqual(settled.count, 30, "\(channel): a reading every 100 ms")
            for reading in settled {
                XCTAssertEqual(reading["momentary"] as? Double ?? 0, expected, accuracy: 0.1, "\(channel) \(reading)")
            }
            let shortTerm = settled.filter { ($0["time"] as? Double ?? 0) >= 4.0 }.compactMap { $0["shortTerm"] as? Double }
            XCTAssertFalse(shortTerm.isEmpty, "\(channel): short-term readings once 3 s of tone have been heard")
            for value in shortTerm { XCTAssertEqual(value, expected, accuracy: 0.1, channel) }
            let summary = try XCTUnwrap(lines.first { $0["channel"] as? String == channel && $0["summary"] as? Bool == true })
            XCTAssertEqual(summary["integrated"] as? Double ?? 0, expected, accuracy: 0.1, "\(channel) \(summary)")
            XCTAssertEqual(summary["seconds"] as? Double ?? 0, 4.5, accuracy: 0.001, "exactly -d 4.5 of audio")
        }
    }

    func testAllExamplesRunTogetherWithTheMeter() throws {
        let plugins = try ["FrequencyEstimator", "LoudnessMeter", "CPeak"].map { try ExamplePlugins.path($0) }
        let outputs = ["frequency.txt", "loudness.jsonl", "peak.txt"].map(file)
        try withToneServer { server in
            var arguments = ["run", "--meter", "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"]
            for (plugin, output) in zip(plugins, outputs) { arguments += ["--plugin", "\(plugin):output=\(output)"] }
            let result = try JackhostBinary.run(arguments)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.contains("channel  peak_dBFS"), "the meter still reports: \(result.stdout)")
        }
        XCTAssertEqual(try String(contentsOfFile: outputs[0], encoding: .utf8).split(separator: "\n").count, 2)
        XCTAssertEqual(try jsonLines(outputs[1]).filter { $0["summary"] as? Bool == true }.count, 2)
        let peaks = try String(contentsOfFile: outputs[2], encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(peaks.count, 2, "\(peaks)")
        for line in peaks { XCTAssertEqual(Double(line.split(separator: " ")[2]) ?? 0, 1, accuracy: 1e-4, String(line)) }
    }

    // MARK: Failures

    func testAPluginThatRefusesTheFormatStopsJackhostBeforeItStarts() throws {
        let estimator = try ExamplePlugins.path("FrequencyEstimator")
        let peak = try ExamplePlugins.path("CPeak")
        try withToneServer { server in
            let cases: [(plugin: String, name: String, reason: String)] = [
                ("\(estimator):max-frequency=30000", "FrequencyEstimator", "max-frequency 30000 Hz is not below the Nyquist frequency"),
                ("\(peak):max-channels=1", "CPeak", "CPeak is limited to 1 channels (max-channels=1) but the stream has 2"),
            ]
            for entry in cases {
                let result = try JackhostBinary.run([
                    "run", "--plugin", entry.plugin, "-s", server.name,
                    "--connect", "jhgen:out_.*", "-d", "1",
                ])
                XCTAssertEqual(result.status, 1, "\(entry.plugin): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "one line: \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("jackhost: "), result.stderr)
                for word in [entry.name, String(entry.plugin.split(separator: ":")[0]), entry.reason] {
                    XCTAssertTrue(result.stderr.contains(word), "\(word) in: \(result.stderr)")
                }
            }
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost:"), "a refused start leaves no ports: \(listed.stdout)")
        }
    }

    func testBadPluginArgumentsGetOneLineAndTheDocumentedStatus() throws {
        let estimator = try ExamplePlugins.path("FrequencyEstimator")
        let notAPlugin = file("notes.so")
        try "just text\n".write(toFile: notAPlugin, atomically: true, encoding: .utf8)
        try withToneServer { server in
            let common = ["-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"]
            let cases: [(plugin: String, status: Int32, mentions: [String])] = [
                (file("libMissing.so"), 2, ["libMissing.so", "no such file"]),
                ("\(estimator):bogus=1", 2, ["FrequencyEstimator", "bogus", "output, hysteresis, max-frequency"]),
                ("\(estimator):max-frequency=high", 2, ["max-frequency=high", "double"]),
                ("\(estimator):output", 2, ["malformed", "'=value'"]),
                (notAPlugin, 1, ["notes.so", "shared object"]),
                ("\(estimator):output=\(file("no/such/dir/f.txt"))", 1, ["FrequencyEstimator", "no/such/dir/f.txt"]),
            ]
            for entry in cases {
                let result = try JackhostBinary.run(["run", "--plugin", entry.plugin] + common)
                XCTAssertEqual(result.status, entry.status, "\(entry.plugin): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
                for word in entry.mentions { XCTAssertTrue(result.stderr.contains(word), "\(word) in: \(result.stderr)") }
            }
        }
    }

    // MARK: jackhost plugin

    func testInspectDescribesEveryExample() throws {
        let expectations: [(name: String, mode: String, options: [String])] = [
            ("FrequencyEstimator", "realtime", ["output", "string", "hysteresis", "double", "0.001", "max-frequency", "20000.0"]),
            ("LoudnessMeter", "deferred", ["output", "string", "(none)"]),
            ("CPeak", "realtime", ["max-channels", "int", "64"]),
        ]
        for entry in expectations {
            let path = try ExamplePlugins.path(entry.name)
            let result = try JackhostBinary.run(["plugin", "inspect", path])
            XCTAssertEqual(result.status, 0, result.stderr)
            for expected in [
                "name:     \(entry.name)", "version:  1.0.0", "abi:      2", "mode:     \(entry.mode)",
                "path:     \(path)",
            ] + entry.options {
                XCTAssertTrue(result.stdout.contains(expected), "\(expected) in:\n\(result.stdout)")
            }
        }
        let missing = try JackhostBinary.run(["plugin", "inspect", file("libNothing.so")])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        let text = file("text.so")
        try "text".write(toFile: text, atomically: true, encoding: .utf8)
        let broken = try JackhostBinary.run(["plugin", "inspect", text])
        XCTAssertEqual(broken.status, 1, broken.stderr)
        XCTAssertTrue(broken.stderr.hasPrefix("jackhost: plugin \(text)"), broken.stderr)
    }

    /// A library that exports the entry symbol as data once crashed `plugin inspect` with SIGSEGV.
    /// Now the ELF check refuses it before `dlopen`: a broken plugin, so exit status 1, one
    /// `jackhost:` line, nothing on stdout, and the library's constructor never runs.
    func testInspectRefusesADataEntrySymbolWithoutLoadingIt() throws {
        let source = file("data_entry.c")
        let marker = file("constructor-ran")
        try """
        #include <stdio.h>
        const int jackhost_plugin_descriptor = 1;
        __attribute__((constructor)) static void loaded(void) {
            FILE *file = fopen(MARKER_PATH, "w");
            if (file != NULL) fclose(file);
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let library = file("libDataEntry.so")
        let compiled = try JACKFixture.run("cc", ["-shared", "-fPIC", "-DMARKER_PATH=\"\(marker)\"", source, "-o", library])
        XCTAssertEqual(compiled.status, 0, "cc failed (is a C compiler installed?): \(compiled.stderr)")

        let result = try JackhostBinary.run(["plugin", "inspect", library])
        XCTAssertFalse(result.signalled, "jackhost crashed: \(result.stderr)")
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stdout, "")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 1, "one line: \(result.stderr)")
        XCTAssertTrue(result.stderr.hasSuffix("\n"), result.stderr)
        XCTAssertEqual(
            lines.first.map(String.init),
            "jackhost: plugin \(library) exports jackhost_plugin_descriptor as data, not a function; export "
                + "`const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void)` (see docs/PLUGINS.md)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the library was loaded: its constructor ran")
    }

    /// `jackhost plugin new` writes a package that builds, passes its own tests, and runs in jackhost.
    func testPluginNewWritesAPackageThatBuildsAndRuns() throws {
        for (name, mode) in [("ToneLevel", "realtime"), ("ToneLog", "deferred")] {
            let created = try JackhostBinary.run(["plugin", "new", name, "--directory", workDirectory.path, "--mode", mode])
            XCTAssertEqual(created.status, 0, created.stderr)
            let package = workDirectory.appendingPathComponent(name).path
            XCTAssertTrue(created.stdout.contains("created \(package)"), created.stdout)
            let built = try JACKFixture.run("swift", ["build", "--package-path", package], timeout: 900)
            XCTAssertEqual(built.status, 0, "\(name) does not build:\n\(built.stdout)\n\(built.stderr)")
            let tested = try JACKFixture.run("swift", ["test", "--package-path", package], timeout: 900)
            XCTAssertEqual(tested.status, 0, "\(name)'s tests fail:\n\(tested.stdout)\n\(tested.stderr)")
            let library = "\(package)/.build/debug/lib\(name).so"
            let inspected = try JackhostBinary.run(["plugin", "inspect", library])
            XCTAssertTrue(inspected.stdout.contains("mode:     \(mode)"), inspected.stdout + inspected.stderr)

            let output = file("\(name).txt")
            try withToneServer { server in
                let result = try JackhostBinary.run([
                    "run", "--plugin", "\(library):output=\(output)", "-s", server.name,
                    "--connect", "jhgen:out_.*", "-d", "1",
                ])
                XCTAssertEqual(result.status, 0, result.stderr)
                if mode == "realtime" {
                    // The real-time template publishes its loudest RMS as a result (plugin ABI 2).
                    XCTAssertTrue(result.stdout.contains("results \(name): rms.max -3."), "the summary shows it: \(result.stdout)")
                    XCTAssertTrue(inspected.stdout.contains("results:  rms.max (dBFS)"), inspected.stdout)
                }
            }
            let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
            XCTAssertEqual(lines.count, 2, "\(lines)")
            for line in lines {
                // A full-scale sine's RMS is -3.01 dBFS; the first cycles before the connection may be silent.
                let level = Double(line.split(separator: " ")[3]) ?? 0
                XCTAssertEqual(level, -3.01, accuracy: 0.1, String(line))
            }
        }
        let again = try JackhostBinary.run(["plugin", "new", "ToneLevel", "--directory", workDirectory.path])
        XCTAssertEqual(again.status, 2)
        XCTAssertTrue(again.stderr.contains("already exists"), again.stderr)
        let badName = try JackhostBinary.run(["plugin", "new", "9lives", "--directory", workDirectory.path])
        XCTAssertEqual(badName.status, 2)
        XCTAssertTrue(badName.stderr.contains("\"9lives\""), badName.stderr)
    }

    /// The shared objects a library needs (its ELF dynamic section's NEEDED entries), by objdump.
    private func neededLibraries(_ library: String) throws -> [String] {
        let dumped = try JACKFixture.run("objdump", ["-p", library])
        XCTAssertEqual(dumped.status, 0, dumped.stderr)
        return dumped.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count == 2 && fields[0] == "NEEDED" ? String(fields[1]) : nil
        }
    }

    /// The slim SDK: a release build of the template plugin, and each Swift example plugin,
    /// links neither libjack nor libsndfile nor any Foundation library (not even
    /// FoundationEssentials: the template and examples import none).
    func testPluginsLinkNoHostLibrariesAndNoFoundation() throws {
        let created = try JackhostBinary.run(["plugin", "new", "SlimProbe", "--directory", workDirectory.path])
        XCTAssertEqual(created.status, 0, created.stderr)
        let package = workDirectory.appendingPathComponent("SlimProbe").path
        let built = try JACKFixture.run(
            "swift", ["build", "-c", "release", "--package-path", package, "--product", "SlimProbe"], timeout: 900)
        XCTAssertEqual(built.status, 0, "SlimProbe does not build:\n\(built.stdout)\n\(built.stderr)")
        let libraries = try [
            "\(package)/.build/release/libSlimProbe.so",
            ExamplePlugins.path("FrequencyEstimator"),
            ExamplePlugins.path("LoudnessMeter"),
        ]
        for library in libraries {
            let needed = try neededLibraries(library)
            XCTAssertTrue(needed.contains("libswiftCore.so"), "\(library): \(needed)")
            let forbidden = needed.filter { $0.hasPrefix("libjack") || $0.hasPrefix("libsndfile") || $0.contains("Foundation") }
            XCTAssertEqual(forbidden, [], "\(library) links host libraries or Foundation: \(needed)")
        }
    }
}
