import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// `--on-file-open`, `--on-file-close` and `--on-rotate` against a private server playing the
/// bit-exact sequence: each hook receives its arguments, failures are warnings and never end the
/// take, and a slow hook never stalls the recording.
final class HookTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Writes an executable shell script (the test's own; jackhost never runs a shell itself).
    private func script(_ name: String, _ body: String) throws -> String {
        let file = path(name)
        try "#!/bin/sh\n\(body)\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o755)
        return file
    }

    /// A hook that appends `EVENT|FILE|arg|arg…` to `log` and says something on its stdout.
    private func loggingHook(log: String) throws -> String {
        try script(
            "log-hook",
            """
            { printf '%s' "$JACKHOST_EVENT|$JACKHOST_FILE"; for a in "$@"; do printf '|%s' "$a"; done; echo; } >> '\(log)'
            echo hook-said-hello
            """)
    }

    private func logLines(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The log with each close line's XRUNS argument (the one before DROPS) replaced by `X`, and
    /// those arguments added up. Xruns are the server's (a loaded machine has some now and then),
    /// so the test holds them to jackhost's own total rather than to 0.
    private func logLinesWithXrunsMasked(_ log: String) -> (lines: [String], xruns: Int?) {
        var total: Int? = 0
        let lines = logLines(log).map { line -> String in
            guard line.hasPrefix("close|") else { return line }
            var fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let xruns = Int(fields[fields.count - 2]) else {
                total = nil
                return line
            }
            total = total.map { $0 + xruns }
            fields[fields.count - 2] = "X"
            return fields.joined(separator: "|")
        }
        return (lines, total)
    }

    /// The xruns in jackhost's summary line ("...; xruns N; ...").
    private func summaryXruns(_ stdout: String) -> Int? {
        stdout.firstMatch(of: #/; xruns (\d+);/#).flatMap { Int($0.1) }
    }

    private func frames(_ file: String) throws -> Int { try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(file)).frames }

    private func assertBitExact(_ file: String, line: UInt = #line) throws {
        let report = SequenceCheck.verify(try AudioFileCheck.readWithSox(file, channels: 2))
        XCTAssertNil(report.firstMismatch, "\(file): \(report)", line: line)
    }

    /// Open, rotate and close each run with the path, and at close the file's frames (as read
    /// back), xruns and drops; the command's own words come first. Hook output goes to stderr,
    /// never to stdout.
    func testEachHookReceivesItsArguments() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let log = path("hooks.log")
            let hook = try loggingHook(log: log)
            let take = path("take.wav")
            let result = try JackhostBinary.run([
                "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "2.5", "--split", "1s",
                "--on-file-open", "\(hook) opened", "--on-file-close", "\(hook)  closed ", "--on-rotate", hook,
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let segments = (1...3).map { TakeFilesNames.numbered(take, $0) }
            let counts = try segments.map(frames)
            XCTAssertEqual(counts, [48000, 48000, 24000])
            for segment in segments { try assertBitExact(segment) }
            let (one, two, three) = (segments[0], segments[1], segments[2])
            let masked = logLinesWithXrunsMasked(log)
            XCTAssertEqual(
                masked.lines,
                [
                    "open|\(one)|opened|\(one)",
                    "close|\(one)|closed|\(one)|\(counts[0])|X|0",
                    "open|\(two)|opened|\(two)",
                    "rotate|\(two)|\(one)|\(two)",
                    "close|\(two)|closed|\(two)|\(counts[1])|X|0",
                    "open|\(three)|opened|\(three)",
                    "rotate|\(three)|\(two)|\(three)",
                    "close|\(three)|closed|\(three)|\(counts[2])|X|0",
                ])
            let xruns = try XCTUnwrap(masked.xruns, "every close hook got a number of xruns: \(logLines(log))")
            XCTAssertLessThanOrEqual(xruns, try XCTUnwrap(summaryXruns(result.stdout)), "the files' xruns are the run's: \(result.stdout)")
            XCTAssertFalse(result.stdout.contains("hook-said-hello"), "a hook's output never goes to stdout:\n\(result.stdout)")
            XCTAssertEqual(result.stderr.components(separatedBy: "hook-said-hello").count - 1, 8, result.stderr)
            XCTAssertTrue(result.stdout.contains("hooks: 8 ran, 0 failed, 0 skipped"), result.stdout)
            XCTAssertFalse(result.stderr.contains("warning"), result.stderr)

            // `run --record` takes the same options.
            try FileManager.default.removeItem(atPath: log)
            let runTake = path("run.wav")
            let run = try JackhostBinary.run([
                "run", "--record", runTake, "--meter", "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.5",
                "--on-file-open", hook, "--on-file-close", hook,
            ])
            XCTAssertEqual(run.status, 0, run.stderr)
            let runMasked = logLinesWithXrunsMasked(log)
            XCTAssertEqual(runMasked.lines, ["open|\(runTake)|\(runTake)", "close|\(runTake)|\(runTake)|24000|X|0"])
            XCTAssertLessThanOrEqual(try XCTUnwrap(runMasked.xruns), try XCTUnwrap(summaryXruns(run.stdout)), run.stdout)
            XCTAssertEqual(try frames(runTake), 24000)
        }
    }

    /// A hook that exits 3, one killed by a signal, and one whose program vanished after the
    /// check: one warning line each, counted in the summary; the take succeeds, bit-exact.
    func testFailingHooksAreWarningsAndNeverEndTheTake() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let exits3 = try script("exits-3", "exit 3")
            let killed = try script("killed", "kill -KILL $$")
            let vanishes = try script("vanishes", "exit 0")
            let take = path("take.wav")
            let child = try JackhostBinary.start(
                [
                    "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1.5", "--split", "1s",
                    "--on-file-open", exits3, "--on-rotate", killed, "--on-file-close", vanishes,
                ], directory: workDirectory)
            // Checked at parse time, removed once the capture runs: the first close is at 1 s of audio.
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("capturing 2 channels") }, child.stderr)
            try FileManager.default.removeItem(atPath: vanishes)
            XCTAssertEqual(child.wait(timeout: 30), 0, child.stderr)
            let (one, two) = (TakeFilesNames.numbered(take, 1), TakeFilesNames.numbered(take, 2))
            XCTAssertEqual(try frames(one), 48000)
            XCTAssertEqual(try frames(two), 24000)
            try assertBitExact(one)
            try assertBitExact(two)
            let warnings = child.stderr.split(separator: "\n").filter { $0.contains("warning") }.map(String.init)
            XCTAssertEqual(
                warnings,
                [
                    "jackhost: warning: hook --on-file-open '\(exits3)' exited with status 3 for \(one)",
                    "jackhost: warning: hook --on-file-close '\(vanishes)' could not start for \(one): No such file or directory",
                    "jackhost: warning: hook --on-file-open '\(exits3)' exited with status 3 for \(two)",
                    "jackhost: warning: hook --on-rotate '\(killed)' was killed by SIGKILL for \(one) -> \(two)",
                    "jackhost: warning: hook --on-file-close '\(vanishes)' could not start for \(two): No such file or directory",
                ])
            XCTAssertTrue(child.stdout.contains("hooks: 5 ran, 5 failed, 0 skipped"), child.stdout)
        }
    }

    /// A hook that sleeps longer than the whole take: the recording goes on beside it, every
    /// segment complete and bit-exact with nothing dropped, and the queued hooks run after it.
    func testASlowHookDoesNotStallTheRecording() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let log = path("hooks.log")
            let take = path("take.wav")
            // The first open hook sleeps 5 s (the take lasts 4), then notes how many segments exist.
            let slow = try script(
                "slow",
                """
                case "$1" in *-0001.wav) sleep 5; ls '\(workDirectory.path)' | grep -c '^take-.*\\.wav$' > '\(path("seen"))';; esac
                echo "open $1" >> '\(log)'
                """)
            let close = try script("close", "echo \"close $1 $2\" >> '\(log)'")
            let result = try JackhostBinary.run([
                "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "4", "--split", "1s",
                "--on-file-open", slow, "--on-file-close", close,
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            let segments = (1...4).map { TakeFilesNames.numbered(take, $0) }
            for segment in segments {
                XCTAssertEqual(try frames(segment), 48000, segment)
                try assertBitExact(segment)
            }
            XCTAssertTrue(result.stdout.contains("silence inserted for 0 dropped frames"), result.stdout)
            // When the first hook woke, the whole take was already on disk.
            XCTAssertEqual(try String(contentsOfFile: path("seen"), encoding: .utf8), "4\n")
            // One at a time, in the order of the events; the first open held up the rest.
            XCTAssertEqual(logLines(log), segments.flatMap { ["open \($0)", "close \($0) 48000"] })
            XCTAssertTrue(result.stdout.contains("hooks: 8 ran, 0 failed, 0 skipped"), result.stdout)
            XCTAssertTrue(result.elapsed >= 5, "the exit waited for the queued hooks: \(result.elapsed) s")
        }
    }

    /// A hook that leaves a child behind holding its stdout and stderr (a `(sleep 20 &)`) never
    /// holds jackhost's caller: `jackhost … 2>&1` inside `$(…)` reads EOF as jackhost exits, not
    /// when the child does. The hook's output reaches jackhost's stderr through the relay, each
    /// line prefixed, and the hook sees only /dev/null, the relay and its own descriptors.
    func testAChildAHookLeavesBehindNeverHoldsTheCaller() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let sleeperPID = path("sleeper.pid")
            let descriptors = path("descriptors")
            let hook = try script(
                "leaves-a-child",
                """
                echo "hello from the hook for $1"
                echo "and to stderr" >&2
                ls -l /proc/self/fd > '\(descriptors)'
                (sleep 20 & echo $! > '\(sleeperPID)')
                exit 0
                """)
            defer { Self.killSleeper(pidFile: sleeperPID) }
            let take = path("take.wav")
            let run = try Self.runReadingToEOF(
                JackhostBinary.path,
                ["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1", "--on-file-close", hook])
            XCTAssertEqual(run.status, 0, run.output)
            XCTAssertTrue(FileManager.default.fileExists(atPath: sleeperPID), "the hook left its child: \(run.output)")
            let delay = run.eofSeconds - run.exitSeconds
            XCTAssertLessThan(delay, 3, "EOF \(delay) s after jackhost exited: \(run.output)")
            reliabilityFigures(
                "hook's left-behind child", "EOF \(max(0, delay).formatted(places: 2)) s after jackhost's exit (the child sleeps 20 s)")
            XCTAssertTrue(run.output.contains("jackhost: hook on-file-close: hello from the hook for \(take)\n"), run.output)
            XCTAssertTrue(run.output.contains("jackhost: hook on-file-close: and to stderr\n"), run.output)
            XCTAssertTrue(run.output.contains("hooks: 1 ran, 0 failed, 0 skipped"), run.output)
            // ls's own descriptors: stdin, the file it writes, stderr (the relay), the directory it lists.
            let listing = try String(contentsOfFile: descriptors, encoding: .utf8)
            let open = Self.openDescriptors(listing)
            XCTAssertEqual(open.keys.sorted(), [0, 1, 2, 3], listing)
            XCTAssertEqual(open[0], "/dev/null", listing)
            XCTAssertTrue(open[2]?.hasPrefix("pipe:") ?? false, listing)
        }
    }

    /// What a reader thread collected from a pipe, and when (seconds from the start) it read EOF.
    private final class PipeOutput: Sendable {
        let state = Mutex<(bytes: [UInt8], at: Double)>(([], 0))
    }

    /// `fd -> target` for each line of an `ls -l /proc/self/fd`.
    private static func openDescriptors(_ listing: String) -> [Int: String] {
        var open: [Int: String] = [:]
        for line in listing.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard let arrow = parts.firstIndex(of: "->"), arrow > 0, let number = Int(parts[arrow - 1]) else { continue }
            open[number] = parts[(arrow + 1)...].joined(separator: " ")
        }
        return open
    }

    /// Ends the child the hook left behind, by its pid.
    private static func killSleeper(pidFile: String) {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1
        else { return }
        kill(pid, SIGKILL)
    }

    /// Runs `program` with stdout and stderr on one pipe, as `$(program 2>&1)` does, reads the
    /// pipe to EOF, and says when the program exited and when EOF came (seconds from the start).
    private static func runReadingToEOF(
        _ program: String, _ arguments: [String]
    ) throws -> (
        status: Int32, output: String, exitSeconds: Double, eofSeconds: Double
    ) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_START_SERVER"] = "1"
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        let start = Date()
        var pid = pid_t()
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)
        }
        let reader = ends[0]
        let eof = DispatchSemaphore(value: 0)
        let collected = PipeOutput()
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                collected.state.withLock { $0.bytes += buffer[0..<count] }
            }
            collected.state.withLock { $0.at = Date().timeIntervalSince(start) }
            eof.signal()
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = Date().timeIntervalSince(start)
        _ = eof.wait(timeout: .now() + 30)
        close(reader)
        let (bytes, eofAt) = collected.state.withLock { ($0.bytes, $0.at) }
        return ((status >> 8) & 0xFF, String(decoding: bytes, as: UTF8.self), exited, eofAt == 0 ? 30 : eofAt)
    }

    /// An empty command, a program not in PATH, a path that is no program, a hook for standard
    /// output or a rotate hook without --split: status 2 and one line, before JACK is touched
    /// (the server named here does not exist, which would be status 1).
    /// A hook starts with every signal at its default action and none blocked, although jackhost
    /// itself catches or ignores most of them (SIGPIPE included: a shell pipeline in a hook must
    /// end as it would anywhere else).
    func testAHookStartsWithEverySignalAtItsDefault() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let hook = try script("signals", "grep -E '^Sig(Ign|Blk):' /proc/self/status")
            let result = try JackhostBinary.run([
                "record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.3", "--on-file-close", hook,
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            func mask(_ field: String) -> UInt64? {
                let prefix = "jackhost: hook on-file-close: \(field):\t"
                return result.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { UInt64($0.dropFirst(prefix.count), radix: 16) }
            }
            XCTAssertEqual(mask("SigBlk"), 0, "none blocked: \(result.stderr)")
            // glibc's posix_spawn itself leaves its two internal signals (32, 33) ignored in a child.
            let glibcInternal: UInt64 = (1 << 31) | (1 << 32)
            XCTAssertEqual(try XCTUnwrap(mask("SigIgn"), result.stderr) & ~glibcInternal, 0, "none of jackhost's ignored: \(result.stderr)")
        }
    }

    func testBadHookCommandsAreRefusedBeforeJACK() throws {
        let take = path("take.wav")
        let server = ["-s", "jhtest-no-such-server-\(getpid())"]
        let cases: [([String], String)] = [
            (["record", take, "--on-file-close", ""], "--on-file-close was given an empty command"),
            (["record", take, "--on-file-open", "   "], "--on-file-open was given an empty command"),
            (["record", take, "--on-file-close", "no-such-hook-program --x"], "program \"no-such-hook-program\" is not in PATH"),
            (["record", take, "--on-file-open", path("missing")], "is not an executable file"),
            (["record", "-", "--on-file-open", "true"], "--on-file-open needs a file; standard output has none"),
            (["record", take, "--on-rotate", "true"], "--on-rotate applies to --split"),
            (["run", "--meter", "--on-file-close", "true"], "--on-file-close applies to --record FILE"),
        ]
        for (arguments, message) in cases {
            let result = try JackhostBinary.run(arguments + server)
            let label = arguments.joined(separator: " ")
            XCTAssertEqual(result.status, 2, "\(label): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(label): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(label): \(result.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: take))
    }
}
