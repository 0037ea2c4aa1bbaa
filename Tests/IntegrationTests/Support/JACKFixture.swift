import Foundation
import JackHost
import XCTest

/// Starts private dummy jackd servers for tests and runs command-line tools against them.
///
/// One process must not use two servers at once (libjack answers graph queries from the
/// wrong server; see docs/TESTING.md), so every use goes through one process-wide lock.
enum JACKFixture {
    /// A semaphore rather than a mutex: async tests take it on one thread and give it back on another.
    private static let gate = DispatchSemaphore(value: 1)

    /// Runs `body` with a fresh private server, and always stops it afterwards.
    static func withServer<T>(captureChannels: Int = 4, bufferFrames: Int = 256, sampleRate: Int = 48000,
                              _ body: (PrivateJACKServer) throws -> T) throws -> T {
        gate.wait()
        defer { gate.signal() }
        setenv("JACK_NO_START_SERVER", "1", 1)
        let server = PrivateJACKServer(name: PrivateJACKServer.uniqueName(prefix: "jhtest"),
                                       sampleRate: sampleRate, bufferFrames: bufferFrames,
                                       captureChannels: captureChannels, playbackChannels: 2, synchronous: true)
        try server.start()
        defer { server.stop() }
        return try body(server)
    }

    /// The async form of ``withServer(captureChannels:bufferFrames:sampleRate:_:)``.
    static func withServerAsync(captureChannels: Int = 4,
                                _ body: @Sendable (PrivateJACKServer) async throws -> Void) async throws {
        await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                gate.wait()
                resumed.resume()
            }
        }
        defer { gate.signal() }
        setenv("JACK_NO_START_SERVER", "1", 1)
        let server = PrivateJACKServer(name: PrivateJACKServer.uniqueName(prefix: "jhtest"), sampleRate: 48000,
                                       bufferFrames: 256, captureChannels: captureChannels, playbackChannels: 2,
                                       synchronous: true)
        try server.start()
        defer { server.stop() }
        try await body(server)
    }

    /// Runs `body` holding the one-server-at-a-time lock, for tests that manage servers
    /// themselves (kill and restart). `body` must stop every server it starts.
    static func serialized<T>(_ body: () throws -> T) rethrows -> T {
        gate.wait()
        defer { gate.signal() }
        setenv("JACK_NO_START_SERVER", "1", 1)
        return try body()
    }

    /// The result of running a child process.
    struct ToolResult {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether a signal ended the process (a crash, or the timeout's SIGKILL).
        var signalled = false
        /// Wall-clock seconds from start to exit.
        var elapsed = 0.0
    }

    /// Runs an executable (found on PATH, or a full path) and waits for it, with a timeout.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], timeout: Double = 30,
                    stdin: FileHandle? = nil, environment extra: [String: String] = [:],
                    directory: URL? = nil, removingEnvironment removed: [String] = []) throws -> ToolResult {
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        let path = tool.hasPrefix("/") ? tool : (PrivateJACKServer.findExecutable(tool) ?? tool)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_START_SERVER"] = "1"
        environment.merge(extra) { _, new in new }
        for name in removed { environment[name] = nil }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin ?? FileHandle.nullDevice
        let started = Date()
        try process.run()
        // Read both pipes concurrently so a chatty child cannot fill one and stall.
        let group = DispatchGroup()
        let collected = Collected()
        group.enter()
        DispatchQueue.global().async { collected.out = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { collected.err = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTFail("\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        group.wait()
        return ToolResult(status: process.terminationStatus,
                          stdout: String(decoding: collected.out, as: UTF8.self),
                          stderr: String(decoding: collected.err, as: UTF8.self),
                          signalled: process.terminationReason == .uncaughtSignal,
                          elapsed: Date().timeIntervalSince(started))
    }

    private final class Collected: @unchecked Sendable {
        var out = Data()
        var err = Data()
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes.
    static func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

/// Checks captured audio against ``TestSignal/sequenceValue(channel:frame:)``.
enum SequenceCheck {
    /// The outcome: how many frames matched, and the first mismatch if any.
    struct Report: CustomStringConvertible {
        var leadingSilence = 0
        var checkedFrames = 0
        var firstMismatch: String?
        var description: String {
            "leading silence \(leadingSilence), checked \(checkedFrames), mismatch: \(firstMismatch ?? "none")"
        }
    }

    /// Checks each channel on its own: skips that channel's leading silence (channels may be
    /// connected one after another while audio runs), then requires the sequence to continue
    /// exactly to the end with no gap. Finally checks that all channels are aligned in time:
    /// every channel's frame index, relative to its position, must agree.
    static func verifyEachChannel(_ channels: [[Float]]) -> Report {
        var total = Report()
        var offsets: Set<Int> = []
        for (c, samples) in channels.enumerated() {
            guard let start = samples.firstIndex(where: { $0 != 0 }) else {
                total.firstMismatch = "channel \(c) is silent"
                return total
            }
            total.leadingSilence = max(total.leadingSilence, start)
            let k = Int(Int16(samples[start] * 32768)) & 0xFFFF
            let origin = ((k &- 1 &- c &* 7919) &* 31_711) & 0xFFFF
            offsets.insert((origin &- start) & 0xFFFF)
            for i in start..<samples.count {
                let expected = TestSignal.sequenceValue(channel: c, frame: origin + (i - start))
                if samples[i].bitPattern != expected.bitPattern {
                    total.firstMismatch = "frame \(i) channel \(c): got \(samples[i]), expected \(expected)"
                    return total
                }
            }
            total.checkedFrames = c == 0 ? samples.count - start : min(total.checkedFrames, samples.count - start)
        }
        if offsets.count > 1 { total.firstMismatch = "channels are not aligned in time: offsets \(offsets.sorted())" }
        return total
    }

    /// For recordings with gaps filled by silence. Counts the frames that are silent on every
    /// channel after the signal started, and the places where the sequence jumps. Every other
    /// frame must continue the sequence exactly, on every channel, aligned across channels.
    static func verifyGapsFilledWithSilence(_ channels: [[Float]]) -> (silentFrames: Int, jumps: [Int], mismatch: String?) {
        guard let frames = channels.first?.count,
              let start = (0..<frames).first(where: { i in channels.allSatisfy { $0[i] != 0 } }) else {
            return (0, [], "no frame where every channel carries signal")
        }
        func index(_ value: Float, channel: Int) -> Int {
            let k = Int(Int16(value * 32768)) & 0xFFFF
            return ((k &- 1 &- channel &* 7919) &* 31_711) & 0xFFFF
        }
        var silent = 0, jumps: [Int] = [], expected: Int?
        for i in start..<frames {
            if channels.allSatisfy({ $0[i] == 0 }) { silent += 1; continue }
            let frame = index(channels[0][i], channel: 0)
            if let expected, frame != expected { jumps.append((frame - expected) & 0xFFFF) }
            for c in channels.indices where channels[c][i].bitPattern != TestSignal.sequenceValue(channel: c, frame: frame).bitPattern {
                return (silent, jumps, "frame \(i) channel \(c) is not aligned with channel 0")
            }
            expected = (frame + 1) & 0xFFFF
        }
        return (silent, jumps, nil)
    }

    /// The standard check: ``verifyEachChannel(_:)``, which also proves the channels are aligned.
    static func verify(_ channels: [[Float]]) -> Report {
        guard channels.count >= 2 else {
            var report = Report()
            report.firstMismatch = "need at least two channels"
            return report
        }
        return verifyEachChannel(channels)
    }
}

