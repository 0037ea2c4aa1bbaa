import Foundation
import XCTest

@testable import JackHostCLI

/// `plugin new` finds the SDK relative to the running binary: the installed one beside
/// `PREFIX/bin`, or the checkout it was built in under any build path (the RealtimeSanitizer pass
/// builds into `.build-rtsan`, where a search for `.build` alone found nothing).
final class PluginSDKLocationTests: XCTestCase {
    private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testACheckoutIsFoundFromAnyOfItsBuildPaths() {
        for build in [".build/x86_64-unknown-linux-gnu/debug", ".build-rtsan/x86_64-unknown-linux-gnu/debug", ".build/release"] {
            let binary = checkout.appendingPathComponent(build).appendingPathComponent("jackhost")
            XCTAssertEqual(PluginSDKLocation.find(executable: binary)?.path, checkout.standardizedFileURL.path, build)
        }
    }

    /// An installation: `PREFIX/bin/jackhost` finds `PREFIX/share/jackhost/swift-sdk`, whatever the prefix.
    func testAnInstalledBinaryFindsTheSDKBesideItsPrefix() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let sdk = prefix.appendingPathComponent(PluginSDKLocation.installedSuffix)
        try FileManager.default.createDirectory(at: sdk.appendingPathComponent("Sources/JackHostPluginSDK"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("bin"), withIntermediateDirectories: true)
        let binary = prefix.appendingPathComponent("bin/jackhost")
        XCTAssertNil(PluginSDKLocation.find(executable: binary), "no manifest yet: not an SDK")
        try "// products: JackHostPluginSDK\n".write(to: sdk.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        XCTAssertEqual(PluginSDKLocation.find(executable: binary)?.path, sdk.standardizedFileURL.path)
    }

    func testABinaryOutsideAnyCheckoutOrInstallationFindsNothing() {
        XCTAssertNil(PluginSDKLocation.find(executable: URL(fileURLWithPath: "/usr/local/bin/jackhost")))
    }
}

/// What `plugin new` writes holds a Swift author to jackhost's compiler: the manifest evaluates
/// with that compiler and stops with one clear line under any other, before anything is built.
final class PluginManifestVersionTests: XCTestCase {
    private let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `swift package dump-package` on a generated manifest that requires `version`.
    private func evaluate(requiring version: String) throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = PluginTemplate.files(name: "Probe", mode: .realtime, jackhostPath: checkout.path, swiftVersion: version)
        let manifest = try XCTUnwrap(files.first { $0.0 == "Package.swift" }?.1)
        try manifest.write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", directory.path, "dump-package"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    func testTheManifestEvaluatesWithJackhostsOwnCompiler() throws {
        let result = try evaluate(requiring: PluginTemplate.requiredSwiftVersion)
        XCTAssertEqual(result.status, 0, result.output)
    }

    func testAnotherCompilerStopsAtTheManifestWithOneClearLine() throws {
        let parts = PluginTemplate.requiredSwiftVersion.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 3 else { throw XCTSkip("this jackhost's Swift version is not MAJOR.MINOR.PATCH") }
        // A version below this compiler's (above it, the tools version would refuse first).
        let older =
            parts[2] > 0
            ? "\(parts[0]).\(parts[1]).\(parts[2] - 1)"
            : parts[1] > 0 ? "\(parts[0]).\(parts[1] - 1).99" : "\(parts[0] - 1).99.99"
        let result = try evaluate(requiring: older)
        XCTAssertNotEqual(result.status, 0, result.output)
        XCTAssertTrue(
            result.output.contains("error: this plugin must be built with Swift \(older), the version jackhost runs on"), result.output)
    }
}
