import Foundation
import JackHostPlugins
import XCTest

@testable import JackHostCLI

/// A plugin that missed part of the take has its results marked partial, in the summary line
/// and in `--results`; one that missed nothing is shown as it is.
final class PluginResultsTests: XCTestCase {
    private let values = [PublishedResult(name: "rms.max", unit: "dBFS", value: -6)]

    func testResultsOfAPluginThatMissedFramesArePartialInTheSummary() {
        let whole = PluginResultSource(plugin: "Peak", instance: 1, latest: { self.values })
        XCTAssertEqual(whole.line, "Peak: rms.max -6 dBFS")
        let partial = PluginResultSource(plugin: "Peak", instance: 1, latest: { self.values }, missedFrames: { 96000 })
        XCTAssertEqual(partial.line, "Peak: rms.max -6 dBFS  (partial: the plugin missed 96000 frames of the take)")
    }

    func testResultsOfAPluginThatMissedFramesArePartialInTheResultsFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("results-\(UUID().uuidString).jsonl").path
        defer { unlink(path) }
        let writer = try PluginResultsWriter(path: path, overwrite: false)
        writer.write(
            [
                PluginResultSource(plugin: "Peak", instance: 1, latest: { self.values }),
                PluginResultSource(plugin: "Peak", instance: 2, latest: { self.values }, missedFrames: { 512 }),
            ], seconds: 4, summary: true)
        writer.writeRetention(removed: 3, seconds: 4)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[0], #"{"summary":true,"time":4.000,"plugin":"Peak","instance":1,"results":{"rms.max":-6.0}}"#)
        XCTAssertEqual(
            lines[1], #"{"summary":true,"time":4.000,"plugin":"Peak","instance":2,"partial":true,"missedFrames":512,"results":{"rms.max":-6.0}}"#)
        XCTAssertEqual(lines[2], #"{"summary":true,"time":4.000,"retention":{"removed":3}}"#)
        for line in lines { XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8))) }
    }
}
