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

    func testABinaryOutsideAnyCheckoutOrInstallationFindsNothing() {
        XCTAssertNil(PluginSDKLocation.find(executable: URL(fileURLWithPath: "/usr/local/bin/jackhost")))
    }
}
