// PlatformTests.swift
//
// The small POSIX pieces that replace full Foundation (Sources/JackHostSupport): the text
// helpers against printf's and NSString's answers, the file kinds, and a child process.

import Glibc
import JackHostTesting
import XCTest

@testable import JackHost

final class PlatformTests: XCTestCase {
    func testDecimalsRoundLikePrintf() {
        XCTAssertEqual((-6.0206).formatted(places: 2), "-6.02")
        XCTAssertEqual(Float(-9.0309).formatted(places: 1), "-9.0")
        XCTAssertEqual(2.5.formatted(places: 0), "2")  // ties to even, as %.0f
        XCTAssertEqual(0.0005.formatted(places: 3), "0.001")
        XCTAssertEqual(1.5.formatted(places: 3), "1.500")
    }

    func testPaddingAndZeroPadding() {
        XCTAssertEqual("in_1".padded(to: 6), "in_1  ")
        XCTAssertEqual("in_1024".padded(to: 6), "in_1024", "longer strings are not cut")
        XCTAssertEqual(3.zeroPadded(to: 4), "0003")
        XCTAssertEqual(12345.zeroPadded(to: 4), "12345")
        XCTAssertEqual((-7).zeroPadded(to: 3), "-007")
    }

    func testPathComponents() {
        XCTAssertEqual("dir/take.wav".deletingLastPathComponent, "dir")
        XCTAssertEqual("take.wav".deletingLastPathComponent, "")
        XCTAssertEqual("/take.wav".deletingLastPathComponent, "/")
        XCTAssertTrue("dir/take.wav".splittingPathExtension == ("dir/take", "wav"))
        XCTAssertTrue("take".splittingPathExtension == ("take", ""))
        XCTAssertTrue("dir.d/take".splittingPathExtension == ("dir.d/take", ""), "a dot in a directory is no extension")
        XCTAssertTrue(".wav".splittingPathExtension == (".wav", ""), "a leading dot is no extension")
        XCTAssertTrue("a/b.tar.gz".splittingPathExtension == ("a/b.tar", "gz"))
    }

    func testFileKinds() {
        XCTAssertEqual(FileKind(atPath: "/tmp"), .directory)
        XCTAssertEqual(FileKind(atPath: "/etc/hostname"), .other)
        XCTAssertEqual(FileKind(atPath: "/no/such/path"), .missing)
    }

    func testChildProcessOutputStatusAndSignals() throws {
        let log = "/tmp/jackhost-child-\(getpid()).log"
        defer { unlink(log) }
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"],
            environment: [:], outputPath: log)
        child.waitUntilExit()
        XCTAssertFalse(child.isRunning)
        XCTAssertEqual(child.terminationStatus, 3)
        XCTAssertEqual(String(decoding: try XCTUnwrap(FileManager.default.contents(atPath: log)), as: UTF8.self), "out\nerr\n")

        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"], environment: [:], outputPath: log)
        XCTAssertTrue(sleeper.isRunning)
        sleeper.signal(SIGTERM)
        sleeper.waitUntilExit()
        XCTAssertEqual(sleeper.terminationStatus, 128 + SIGTERM)

        XCTAssertThrowsError(try ChildProcess(executable: "/no/such/program", arguments: [], environment: [:], outputPath: log))
    }

    func testWorkerThreadRunsItsBody() {
        let done = DispatchSemaphore(value: 0)
        WorkerThread.start(name: "jackhost-test") { done.signal() }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    }
}
