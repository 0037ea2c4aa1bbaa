import Foundation
import XCTest

/// The example plugins (Examples/Plugins), built by scripts/build-examples.
enum ExamplePlugins {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct NotBuilt: Error, CustomStringConvertible { let description: String }

    /// Where to look: JACKHOST_EXAMPLE_PLUGINS_DIR if set, else scripts/build-examples' default outputs.
    static var searchDirectories: [String] {
        if let directory = ProcessInfo.processInfo.environment["JACKHOST_EXAMPLE_PLUGINS_DIR"], !directory.isEmpty {
            return [directory]
        }
        return ["release", "debug"].map { repositoryRoot.appendingPathComponent("Examples/Plugins/.build/\($0)").path }
    }

    /// The path of `lib<name>.so`; fails the test (never skips it) when the examples are not built.
    static func path(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        for directory in searchDirectories {
            let candidate = (directory as NSString).appendingPathComponent("lib\(name).so")
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        let message =
            "example plugin lib\(name).so is not built (looked in \(searchDirectories.joined(separator: ", "))); "
            + "run scripts/build-examples first, or set JACKHOST_EXAMPLE_PLUGINS_DIR to its output directory"
        XCTFail(message, file: file, line: line)
        throw NotBuilt(description: message)
    }
}

/// ITU-R BS.1770-4's K-weighting at 48 kHz, from the standard's own coefficient tables, to
