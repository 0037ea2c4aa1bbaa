import CSndFile
import Foundation
import JackHost
import XCTest

/// Runs the `jackhost` executable built next to the test bundle, as a user would.
enum JackhostBinary {
    /// `.build/<config>/jackhost`, beside the test runner, or `$JACKHOST_BINARY` when set (to
    /// run the suite against another build, such as a release or an older one).
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["JACKHOST_BINARY"], !override.isEmpty { return override }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        // The runner is .../debug/JackHostPackageTests.xctest (a file on Linux).
        if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.appendingPathComponent("jackhost").path
    }

    /// Runs jackhost to completion and checks the sanitizer stayed quiet.
    @discardableResult
    static func run(
        _ arguments: [String], timeout: Double = 60, environment: [String: String] = [:], stdin: FileHandle? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> JACKFixture.ToolResult {
        let result = try JACKFixture.run(path, arguments, timeout: timeout, stdin: stdin, environment: environment)
        assertNoSanitizerReport(result.stderr, file: file, line: line)
        return result
    }

    /// Starts jackhost in the background with its stdout and stderr going to files.
    static func start(_ arguments: [String], directory: URL) throws -> RunningJackhost {
        try RunningJackhost(arguments: arguments, directory: directory)
    }

    static func assertNoSanitizerReport(_ stderr: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(stderr.contains("RealtimeSanitizer"), "real-time violation:\n\(stderr)", file: file, line: line)
    }
}

/// A jackhost child process for tests that signal it or watch it while it runs.
final class RunningJackhost {
    let process = Process()
    let stdoutURL: URL
    let stderrURL: URL

    /// Starts jackhost with `arguments`; `environment` adds to (or replaces in) the test's own.
    /// `launcher`, when given, runs jackhost through another program that execs it (for example
    /// `ip netns exec NAME`), so the pid is still jackhost's own.
    init(
        arguments: [String], directory: URL, workingDirectory: URL? = nil, environment extra: [String: String] = [:],
        launcher: [String] = []
    ) throws {
        stdoutURL = directory.appendingPathComponent("jackhost-\(UUID().uuidString).out")
        stderrURL = directory.appendingPathComponent("jackhost-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let command = launcher + [JackhostBinary.path] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_START_SERVER"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit; fails the test and kills the child after `timeout`.
    func wait(timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            XCTFail("jackhost did not exit within \(timeout) s", file: file, line: line)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        JackhostBinary.assertNoSanitizerReport(stderr, file: file, line: line)
        return process.terminationStatus
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }
}

/// Reads audio files twice: through libsndfile (our own reader) and through sox (an independent one).
enum AudioFileCheck {
    struct Header: Equatable {
        var frames: Int
        var channels: Int
        var sampleRate: Int
    }

    /// The header as `sndfile-info` (a separate program) prints it.
    static func sndfileInfoHeader(_ path: String) throws -> Header? {
        let result = try JACKFixture.run("sndfile-info", [path])
        func field(_ name: String) -> Int? {
            for line in result.stdout.split(separator: "\n") where line.hasPrefix(name) {
                if let value = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                    return value
                }
            }
            return nil
        }
        guard let frames = field("Frames"), let channels = field("Channels"), let rate = field("Sample Rate") else {
            return nil
        }
        return Header(frames: frames, channels: channels, sampleRate: rate)
    }

    /// Planar float samples read with libsndfile.
    static func readWithLibsndfile(_ path: String) -> (header: Header, channels: [[Float]])? {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
        defer { sf_close(file) }
        let channels = Int(info.channels), frames = Int(info.frames)
        var interleaved = [Float](repeating: 0, count: channels * frames)
        let read = Int(sf_readf_float(file, &interleaved, sf_count_t(frames)))
        var planar = Array(repeating: [Float](), count: channels)
        for c in 0..<channels { planar[c] = (0..<read).map { interleaved[$0 * channels + c] } }
        return (Header(frames: frames, channels: channels, sampleRate: Int(info.samplerate)), planar)
    }

    /// Planar samples decoded by sox to raw signed 32-bit integers, scaled back to floats.
    static func readWithSox(_ path: String, channels: Int) throws -> [[Float]] {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("sox-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: raw) }
        let result = try JACKFixture.run("sox", [path, "-t", "raw", "-e", "signed-integer", "-b", "32", raw.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let data = try Data(contentsOf: raw)
        let values = data.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        let frames = values.count / channels
        return (0..<channels).map { c in (0..<frames).map { Float(Double(values[$0 * channels + c]) / 2_147_483_648) } }
    }
}

extension JackhostBinary {
    /// Starts jackhost with `directory` as its working directory (for automatic names).
    static func startIn(_ directory: URL, _ arguments: [String]) throws -> RunningJackhost {
        try RunningJackhost(arguments: arguments, directory: directory, workingDirectory: directory)
    }
}
