import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Takes are never overwritten: overwriting is opt-in, and automatic names never collide.
final class OverwriteTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    func testOverwriteIsOptInAndAutomaticNamesNeverCollide() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = path("take.wav")
            try Data("an earlier take".utf8).write(to: URL(fileURLWithPath: take))
            let refused = try JackhostBinary.run(["record", take, "-s", server.name, "-d", "0.2"])
            XCTAssertEqual(refused.status, 2, refused.stderr)
            XCTAssertEqual(try String(contentsOfFile: take, encoding: .utf8), "an earlier take")
            let replaced = try JackhostBinary.run(["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.2", "--overwrite"])
            XCTAssertEqual(replaced.status, 0, replaced.stderr)
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(take)?.frames, 9600)

            // Split segments of this take never clobber: a second split run is refused whole.
            let split = path("split.wav")
            let first = try JackhostBinary.run(["record", split, "-s", server.name, "--split", "1s", "-d", "2.5", "-q"])
            XCTAssertEqual(first.status, 0, first.stderr)
            let segments = (1...3).map { TakeFilesNames.numbered(split, $0) }
            let contents = try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            let again = try JackhostBinary.run(["record", split, "-s", server.name, "--split", "1s", "-d", "2.5", "-q"])
            XCTAssertEqual(again.status, 2, again.stderr)
            XCTAssertTrue(again.stderr.contains("split-0001.wav exists from an earlier take"), again.stderr)
            XCTAssertEqual(try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }, contents)

            // `record` without FILE: time-stamped names, two at once in one directory, no collision.
            let children = try (0..<2).map { index in
                try JackhostBinary.startIn(
                    workDirectory,
                    [
                        "record", "-s", server.name, "-n", "recorder\(index)",
                        "--connect", "jhgen:out_.*", "-d", "0.5", "-q",
                    ])
            }
            for child in children { XCTAssertEqual(child.wait(), 0, child.stderr) }
            let automatic = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter {
                $0.hasPrefix("jackhost-") && $0.hasSuffix(".wav")
            }
            XCTAssertEqual(automatic.count, 2, "\(automatic)")
            for name in automatic {
                XCTAssertNotNil(name.range(of: #"^jackhost-\d{8}-\d{6}(-\d+)?\.wav$"#, options: .regularExpression), name)
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path(name))?.frames, 24000, name)
            }
        }
    }
}
