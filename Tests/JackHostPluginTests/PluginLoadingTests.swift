import Foundation
import JackHost
import JackHostPluginSDK
import JackHostPluginTesting
import JackHostPlugins
import XCTest

/// Loads real shared objects, compiled with `cc` into a temporary directory: the CPeak
/// example, and plugins that are broken in each way the loader must report.
final class PluginLoadingTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws { directory = try CPluginBuilder.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Asserts that loading `text` fails with an error matching `expected`, whose one-line
    /// description names the path and contains `mentions`.
    private func assertLoadFails(
        _ text: String, mentions: [String], file: StaticString = #filePath, line: UInt = #line,
        _ expected: (PluginError) -> Bool
    ) {
        do {
            _ = try LoadedPlugin.load(PluginSpecification(parsing: text))
            XCTFail("\(text) loaded", file: file, line: line)
        } catch {
            XCTAssertTrue(expected(error), "unexpected error: \(error)", file: file, line: line)
            let description = error.description
            XCTAssertFalse(description.contains("\n"), "one line: \(description)", file: file, line: line)
            if let path = error.path { XCTAssertTrue(description.contains(path), description, file: file, line: line) }
            for word in mentions { XCTAssertTrue(description.contains(word), "\(word): \(description)", file: file, line: line) }
        }
    }

    // MARK: A good plugin

    func testCPeakLoadsDescribesItselfAndMeasuresPeaks() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let output = path("peaks.txt")
        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: "\(library):output=\(output)"))
        XCTAssertEqual(plugin.name, "CPeak")
        XCTAssertEqual(plugin.version, "1.0.0")
        XCTAssertEqual(plugin.abiVersion, 2, "built against the version 2 header")
        XCTAssertEqual(plugin.mode, .realtime)
        XCTAssertEqual(
            plugin.options,
            [
                PluginOptionInfo(name: "output", type: .string, defaultValue: nil, help: "write the results to PATH instead of stdout"),
                PluginOptionInfo(name: "max-channels", type: .int, defaultValue: "64", help: "refuse streams with more channels than this"),
            ])
        XCTAssertEqual(
            plugin.optionValues.map { "\($0.key)=\($0.value)" }, ["output=\(output)", "max-channels=64"],
            "the user's values, then defaults")
        let text = plugin.inspectionText
        for expected in [
            "name:     CPeak", "version:  1.0.0", "abi:      2", "events:   no", "results:  none", "mode:     realtime", "max-channels", "int", "64",
            "(none)", "refuse streams with more channels than this",
        ] {
            XCTAssertTrue(text.contains(expected), "\(expected) in:\n\(text)")
        }

        guard case .realtime(let consumer) = plugin.makeConsumer() else { return XCTFail("CPeak is a real-time plugin") }
        XCTAssertEqual(consumer.consumerName, "CPeak")
        XCTAssertTrue(plugin.makeConsumer().consumer === consumer, "one instance, one consumer")
        let sine = PluginTestAudio.sine(frequency: 1000, amplitude: 0.5, frames: 9600)
        let ramp = (0..<9600).map { Float($0) / 9600 * 0.25 }
        let report = try PluginTestDriver(blockFrames: 256).run(consumer, channels: [sine, ramp])
        XCTAssertEqual(report.deliveredFrames, 9600)
        XCTAssertEqual(
            try String(contentsOfFile: output, encoding: .utf8),
            "peak in_1 0.500000 -6.02 dBFS clips 0\npeak in_2 0.249974 -12.04 dBFS clips 0\n")
    }

    func testCPeakRefusesTooManyChannelsWithItsOwnReason() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: "\(library):max-channels=1,output=\(path("x.txt"))"))
        let silence = [Float](repeating: 0, count: 512)
        XCTAssertThrowsError(try PluginTestDriver().run(plugin.makeConsumer().consumer, channels: [silence, silence])) { error in
            guard case .prepareRejected(let reportedPath, let name, let format, let reason) = error as? PluginError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(reportedPath, library)
            XCTAssertEqual(name, "CPeak")
            XCTAssertEqual(format, "48000 Hz, 2 ch, Float32, non-interleaved")
            XCTAssertEqual(reason, "CPeak is limited to 1 channels (max-channels=1) but the stream has 2")
            XCTAssertEqual(
                String(describing: error),
                "plugin \"CPeak\" (\(library)) rejected the stream format "
                    + "48000 Hz, 2 ch, Float32, non-interleaved: CPeak is limited to 1 channels (max-channels=1) but the stream has 2")
            XCTAssertFalse((error as! PluginError).isUsageError)
        }
    }

    // MARK: The user's mistakes

    func testMissingFile() {
        let missing = path("libNothing.so")
        assertLoadFails(missing, mentions: ["no such file"]) { $0 == .fileNotFound(path: missing) }
    }

    func testUnknownOptionIsRefusedBeforeCreateRuns() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        let output = path("never.txt")
        assertLoadFails("\(library):output=\(output),max-chanels=2", mentions: ["\"max-chanels\"", "output, max-channels"]) {
            $0 == .unknownOption(path: library, plugin: "CPeak", key: "max-chanels", known: ["output", "max-channels"])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "create (which opens the output) must not have run")
    }

    func testWrongValueTypesAreRefused() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        for value in ["many", "1.5", "", "0x10"] {
            assertLoadFails("\(library):max-channels=\(value)", mentions: ["max-channels=\(value)", "is not an int"]) {
                $0 == .invalidOptionValue(path: library, plugin: "CPeak", key: "max-channels", value: value, expected: .int)
            }
        }
        assertLoadFails("\(library):max-channels=2,max-channels=3", mentions: ["given twice"]) {
            $0 == .duplicateOption(path: library, plugin: "CPeak", key: "max-channels")
        }
    }

    func testCreateFailureCarriesThePluginsReason() throws {
        let library = try CPluginBuilder.buildCPeak(in: directory)
        assertLoadFails("\(library):output=/nonexistent-dir/out.txt", mentions: ["failed to start", "/nonexistent-dir/out.txt"]) {
            guard case .createFailed(library, "CPeak", let reason) = $0 else { return false }
            return reason.hasPrefix("cannot open output /nonexistent-dir/out.txt: No such file or directory")
        }
    }

    // MARK: Broken plugins

    func testFilesThatAreNotSharedObjects() throws {
        let text = path("libText.so")
        try "not an ELF file, just text long enough to have a header\n".write(toFile: text, atomically: true, encoding: .utf8)
        assertLoadFails(text, mentions: ["is not an ELF shared object", "-shared -fPIC"]) {
            guard case .notELF(text, let reason) = $0 else { return false }
            return reason.hasSuffix("not the ELF magic 7f 45 4c 46")
        }
        let folder = path("folder.so")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        assertLoadFails(folder, mentions: ["directory"]) { $0 == .notASharedObject(path: folder, reason: "it is a directory") }
    }

    func testSharedObjectWithoutTheEntrySymbol() throws {
        let library = try CPluginBuilder.build(
            source: "__attribute__((visibility(\"default\"))) int answer(void) { return 42; }\n",
            name: "NoEntry", in: directory)
        assertLoadFails(library, mentions: ["does not export jackhost_plugin_descriptor"]) {
            $0 == .missingEntrySymbol(path: library)
        }
    }

    func testABIMismatchIsRefusedBeforeAnythingElseIsRead() throws {
        let library = try CPluginBuilder.build(source: ProbePlugin.source, name: "Abi999", defines: ["PROBE_ABI=999"], in: directory)
        assertLoadFails(library, mentions: ["ABI version 999", "speaks version 2", "loads versions 1 to 2", "rebuild"]) {
            $0 == .abiMismatch(path: library, pluginVersion: 999, hostVersion: 2)
        }
    }

    func testInvalidDescriptorsAreRefused() throws {
        let cases: [(define: String, reason: String)] = [
            ("PROBE_NULL_PROCESS", "process is NULL"),
            ("PROBE_SMALL_STRUCT", "struct_size is 40 bytes; ABI version 2 needs at least 88"),
            ("PROBE_BAD_DEFAULT", "option \"count\" has default \"three\", which is not an int"),
            ("PROBE_MODE=7", "mode is 7"),
        ]
        for (index, entry) in cases.enumerated() {
            let library = try CPluginBuilder.build(
                source: ProbePlugin.source, name: "Invalid\(index)", defines: [entry.define],
                in: directory)
            assertLoadFails(library, mentions: ["invalid descriptor", entry.reason]) {
                guard case .invalidDescriptor(library, let reason) = $0 else { return false }
                return reason.hasPrefix(entry.reason)
            }
        }
    }

    func testInspectionNeedsNoInstance() throws {
        let library = try CPluginBuilder.build(source: ProbePlugin.source, name: "Inspected", in: directory)
        let opened = try PluginLibrary.open(path: library)
        XCTAssertEqual(opened.name, "Probe")
        XCTAssertEqual(opened.mode, .realtime)
        XCTAssertEqual(try ProbeReader(path: library)["creates"], 0, "inspecting must not create an instance")
        XCTAssertTrue(opened.inspectionText.contains("fail-create  bool    false"), opened.inspectionText)
    }
}
