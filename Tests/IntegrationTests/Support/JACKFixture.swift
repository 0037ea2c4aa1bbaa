import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Starts private dummy jackd servers for tests and runs command-line tools against them.
///
/// One process must not use two servers at once (libjack answers graph queries from the
/// wrong server; see docs/TESTING.md), so every use goes through one process-wide lock.
enum JACKFixture {
    /// A semaphore rather than a mutex: async tests take it on one thread and give it back on another.
    private static let gate = DispatchSemaphore(value: 1)

    /// Runs `body` with a fresh private server, and always stops it afterwards.
    static func withServer<T>(
        captureChannels: Int = 4, bufferSize: Int = 256, sampleRate: Int = 48000,
        synchronous: Bool = true, realtime: Bool = false,
        _ body: (PrivateJACKServer) throws -> T
    ) throws -> T {
        gate.wait()
        defer { gate.signal() }
        setenv("JACK_NO_START_SERVER", "1", 1)
        let server = PrivateJACKServer(
            name: PrivateJACKServer.uniqueName(prefix: "jhtest"),
            sampleRate: sampleRate, bufferSize: bufferSize,
            captureChannels: captureChannels, playbackChannels: 2, synchronous: synchronous, realtime: realtime)
        try server.start()
        defer { server.stop() }
        return try body(server)
    }

    /// The async form of ``withServer(captureChannels:bufferSize:sampleRate:_:)``.
    static func withServerAsync(
        captureChannels: Int = 4,
        _ body: @Sendable (PrivateJACKServer) async throws -> Void
    ) async throws {
        await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                gate.wait()
                resumed.resume()
            }
        }
        defer { gate.signal() }
        setenv("JACK_NO_START_SERVER", "1", 1)
        let server = PrivateJACKServer(
            name: PrivateJACKServer.uniqueName(prefix: "jhtest"), sampleRate: 48000,
            bufferSize: 256, captureChannels: captureChannels, playbackChannels: 2,
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

    /// Runs an executable (found on PATH, or a full path) and waits for it, with a timeout. A run
    /// over the timeout is killed and fails the test, unless `timeoutFails` is false: then the
    /// caller gets the killed run's result (`signalled`) and decides.
    @discardableResult
    static func run(
        _ tool: String, _ arguments: [String], timeout: Double = 30,
        stdin: FileHandle? = nil, environment extra: [String: String] = [:],
        directory: URL? = nil, removingEnvironment removed: [String] = [],
        timeoutFails: Bool = true
    ) throws -> ToolResult {
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
        DispatchQueue.global().async {
            collected.out = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            collected.err = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if timeoutFails { XCTFail("\(tool) \(arguments.joined(separator: " ")) did not finish within \(timeout) s") }
        }
        process.waitUntilExit()
        group.wait()
        return ToolResult(
            status: process.terminationStatus,
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

/// Checks captured audio against ``TestSignal/sequenceValue(channel:frame:)``, by whole frame
/// number (channels 0 and 1 together name it for 2^32 frames), so a loss of any length shows.
enum SequenceCheck {
    /// The outcome: how many frames matched, and the first mismatch if any.
    struct Report: CustomStringConvertible {
        var leadingSilence = 0
        var checkedFrames = 0
        var firstFrame = 0
        var firstMismatch: String?
        var description: String {
            "leading silence \(leadingSilence), first frame \(firstFrame), checked \(checkedFrames), mismatch: \(firstMismatch ?? "none")"
        }
    }

    /// The whole frame number at sample `index`, from channels 0 and 1 (or channel 0 alone,
    /// modulo 65,536, for a one-channel take).
    static func frame(at index: Int, in channels: [[Float]]) -> Int {
        channels.count >= 2
            ? TestSignal.sequenceFrame(channel0: channels[0][index], channel1: channels[1][index])
            : TestSignal.sequenceFrame(fromChannel0: channels[0][index])
    }

    /// Checks each channel from its own first sound (channels may be connected one after
    /// another while audio runs) to the end, with no gap, against the frame numbers read
    /// where channels 0 and 1 both sound: so every channel is also aligned in time with them.
    static func verifyEachChannel(_ channels: [[Float]]) -> Report {
        var report = Report()
        let starts = channels.map { $0.firstIndex(where: { $0 != 0 }) }
        for (c, start) in starts.enumerated() where start == nil {
            report.firstMismatch = "channel \(c) is silent"
            return report
        }
        let first = starts.compactMap { $0 }
        report.leadingSilence = first.max() ?? 0
        let anchor = first.prefix(2).max() ?? 0
        let origin = frame(at: anchor, in: channels) &- anchor
        report.firstFrame = origin &+ report.leadingSilence
        for (c, samples) in channels.enumerated() {
            let start = first[c]
            for i in start..<samples.count {
                let expected = TestSignal.sequenceValue(channel: c, frame: (origin &+ i) & 0xFFFF_FFFF)
                if samples[i].bitPattern != expected.bitPattern {
                    report.firstMismatch = "frame \(i) channel \(c): got \(samples[i]), expected \(expected) (frame number \(origin &+ i))"
                    return report
                }
            }
            report.checkedFrames = c == 0 ? samples.count - start : min(report.checkedFrames, samples.count - start)
        }
        return report
    }

    /// For recordings with gaps filled by silence. Counts the frames that are silent on every
    /// channel after the signal started, and the places where the frame number jumps (by whole
    /// frame number, so a jump of 65,536 frames shows). Every other frame must continue the
    /// sequence exactly, on every channel, aligned across channels.
    static func verifyGapsFilledWithSilence(_ channels: [[Float]]) -> (silentFrames: Int, jumps: [Int], mismatch: String?) {
        guard let frames = channels.first?.count,
            let start = (0..<frames).first(where: { i in channels.allSatisfy { $0[i] != 0 } })
        else {
            return (0, [], "no frame where every channel carries signal")
        }
        var silent = 0, jumps: [Int] = [], expected: Int?
        for i in start..<frames {
            if channels.allSatisfy({ $0[i] == 0 }) {
                silent += 1
                continue
            }
            let number = frame(at: i, in: channels)
            if let expected, number != expected { jumps.append((number - expected) & 0xFFFF_FFFF) }
            for c in channels.indices where channels[c][i].bitPattern != TestSignal.sequenceValue(channel: c, frame: number).bitPattern {
                return (silent, jumps, "frame \(i) channel \(c) is not aligned with channels 0 and 1")
            }
            expected = (number + 1) & 0xFFFF_FFFF
        }
        return (silent, jumps, nil)
    }

    /// The frames jackhost reported the server skipped, from its stderr ("the server's clock
    /// skipped this client N time(s), M frames in all"); 0 when it reported none.
    static func reportedServerSkips(in stderr: String) -> Int {
        guard let match = stderr.firstMatch(of: #/skipped this client \d+ time\(s\), (\d+) frames/#) else { return 0 }
        return Int(match.1) ?? 0
    }

    /// The xruns jackhost reported at exit, from its stderr ("xruns: N, dropped frames: …");
    /// 0 when it reported none.
    static func reportedXruns(in stderr: String) -> Int {
        guard let match = stderr.firstMatch(of: #/xruns: (\d+), dropped frames/#) else { return 0 }
        return Int(match.1) ?? 0
    }

    /// For takes from an asynchronous server (`jackd` without `-S`), where the graph, not the
    /// recorder, decides what a late client sees: on a loaded 2-core VM the server now and then
    /// starts a cycle before a late client woke for the last one (the client's two wake-ups merge
    /// and it never sees that cycle), or a late client reads a period again. jackhost detects the
    /// first from the frame time and reports it as skipped frames; the server reports the second
    /// as an xrun. So this checks only what jackhost owns: no silence after the signal started
    /// (jackhost writes silence for frames it dropped), every frame aligned across channels, and
    /// every break in the sequence accounted for by what jackhost reported. Forward jumps are
    /// covered by the reported skipped frames (smallest first, so as many as possible); each
    /// break left over (a repeat, or a jump the skips cannot cover) needs a reported xrun of its
    /// own. A block jackhost itself dropped or repeated in a take without xruns still fails.
    ///
    /// A synchronous server (`-S`) never hands a client a period twice: an xrun there delays
    /// the cycle, and the frames it cost show as a frame-time jump. For such takes pass
    /// `xrunsExplainBreaks: false`, and only reported skipped frames may explain a break.
    ///
    /// - Returns: The frames the sequence jumped forward over, and why the take fails, if it does.
    static func verifyBesideServerSkips(
        _ channels: [[Float]], jackhostStderr: String, xrunsExplainBreaks: Bool = true
    ) -> (jumped: Int, failure: String?) {
        let gaps = verifyGapsFilledWithSilence(channels)
        // A jump backwards (a period read again) shows as a jump forward by nearly 2^32.
        let forward = gaps.jumps.filter { $0 < 1 << 31 }.sorted()
        let repeats = gaps.jumps.count - forward.count
        let jumped = forward.reduce(0, +)
        if let mismatch = gaps.mismatch { return (jumped, mismatch) }
        if gaps.silentFrames > 0 { return (jumped, "\(gaps.silentFrames) silent frames after the signal started") }
        let reported = reportedServerSkips(in: jackhostStderr)
        let xruns = xrunsExplainBreaks ? reportedXruns(in: jackhostStderr) : 0
        var budget = reported, covered = 0
        for jump in forward where jump <= budget {
            budget -= jump
            covered += 1
        }
        let uncovered = forward.count - covered + repeats
        if uncovered > xruns {
            return (
                jumped,
                "\(uncovered) break(s) in the sequence not accounted for: jumps \(forward), \(repeats) repeat(s); jackhost reported \(reported) skipped frames and \(xruns) xruns"
            )
        }
        if gaps.jumps.isEmpty, let mismatch = verify(channels).firstMismatch { return (0, mismatch) }
        return (jumped, nil)
    }

    /// For audio that crossed a network before jackhost saw it (a netjack2 slave): the slave's
    /// driver hands its server whole periods, and under a stalled master or a late packet it
    /// hands one again or skips one, upstream of any JACK client. So every period of the take
    /// must be intact (a contiguous run of the sequence, aligned across channels), and the
    /// sequence may change course only at a period boundary. Silence after the signal started
    /// (what jackhost writes for frames it dropped) or a break inside a period fails.
    ///
    /// - Returns: The file frames where the sequence changed course (all at period
    ///   boundaries), and why the take fails, if it does.
    static func verifyWholePeriods(_ channels: [[Float]], period: Int) -> (breaks: [Int], failure: String?) {
        guard let frames = channels.first?.count,
            let start = (0..<frames).first(where: { i in channels.allSatisfy { $0[i] != 0 } })
        else {
            return ([], "no frame where every channel carries signal")
        }
        var breaks: [Int] = [], expected: Int?
        for i in start..<frames {
            if channels.allSatisfy({ $0[i] == 0 }) { return (breaks, "silence at frame \(i), after the signal started") }
            let number = frame(at: i, in: channels)
            if let expected, number != expected {
                if i % period != 0 { return (breaks, "the sequence breaks inside a period, at frame \(i)") }
                breaks.append(i)
            }
            for c in channels.indices where channels[c][i].bitPattern != TestSignal.sequenceValue(channel: c, frame: number).bitPattern {
                return (breaks, "frame \(i) channel \(c) is not aligned with channels 0 and 1")
            }
            expected = (number + 1) & 0xFFFF_FFFF
        }
        return (breaks, nil)
    }

    /// How a take checked by ``verifyBesideServerSkips(_:jackhostStderr:xrunsExplainBreaks:)`` came out, for figures.
    static func exactness(jumped: Int) -> String {
        jumped == 0 ? "bit-exact" : "bit-exact but for \(jumped) frames the server skipped (reported)"
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
