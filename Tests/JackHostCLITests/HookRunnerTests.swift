import Foundation
import JackHostConsumers
import Synchronization
import XCTest

@testable import JackHostCLI

/// The hook command's words, its checks, and the runner's queue and bounded wait, without JACK.
final class HookRunnerTests: XCTestCase {
    private final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    func testWordsAreSplitAtSpacesOnlyWithNoQuotingOrExpansion() {
        XCTAssertEqual(HookCommand.words(in: "flac --best"), ["flac", "--best"])
        XCTAssertEqual(HookCommand.words(in: "  a   b  "), ["a", "b"])
        XCTAssertEqual(HookCommand.words(in: "say 'two words' \"$HOME\" *.wav a\\ b"), ["say", "'two", "words'", "\"$HOME\"", "*.wav", "a\\", "b"])
        XCTAssertEqual(HookCommand.words(in: "a\tb;c|d"), ["a\tb;c|d"])
        XCTAssertEqual(HookCommand.words(in: ""), [])
        XCTAssertEqual(HookCommand.words(in: "   "), [])
    }

    func testCommandsAreCheckedAtParseTime() throws {
        let command = try HookCommand(kind: .close, parsing: "true --flag x", searchPath: "/usr/bin:/bin")
        XCTAssertEqual(command.words, ["true", "--flag", "x"])
        XCTAssertEqual(try HookCommand(kind: .open, parsing: "/bin/true").words, ["/bin/true"])
        for (text, message) in [
            ("", "--on-file-close was given an empty command"),
            ("   ", "--on-file-close was given an empty command"),
            ("no-such-hook-program a", "--on-file-close: program \"no-such-hook-program\" is not in PATH"),
            ("/nonexistent/hook", "--on-file-close: /nonexistent/hook is not an executable file"),
            ("/etc/passwd", "--on-file-close: /etc/passwd is not an executable file"),
            ("/tmp", "--on-file-close: /tmp is not an executable file"),
        ] {
            XCTAssertThrowsError(try HookCommand(kind: .close, parsing: text, searchPath: "/usr/bin:/bin"), text) { error in
                XCTAssertTrue((error as? UsageError)?.message.hasPrefix(message) ?? false, "\(text): \(error)")
            }
        }
        // Only PATH is searched: a program in the current directory needs ./ (unless PATH has an empty entry).
        XCTAssertNil(HookCommand.findProgram("true", searchPath: "/nonexistent"))
        XCTAssertNotNil(HookCommand.findProgram("true", searchPath: "/nonexistent::/bin"))
    }

    /// A hook that is no program is named by its whole path, however long, never cut to `…/noexec-ho...`.
    func testAHookThatIsNoProgramIsNamedByItsWholePath() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString)/a-rather-long-directory-name")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let script = directory.appendingPathComponent("noexec-hook-script.sh").path
        try "#!/bin/sh\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        XCTAssertGreaterThan(script.count, 60)
        XCTAssertThrowsError(try HookCommand(kind: .close, parsing: "\(script) --flag")) { error in
            XCTAssertEqual(
                (error as? UsageError)?.message,
                "--on-file-close: \(script) is not an executable file; give the path of a program or script")
        }
        let name = "no-such-program-with-a-name-longer-than-forty-characters"
        XCTAssertThrowsError(try HookCommand(kind: .open, parsing: name, searchPath: "/nonexistent")) { error in
            XCTAssertEqual(
                (error as? UsageError)?.message, "--on-file-open: program \"\(name)\" is not in PATH; give its full path, or install it")
        }
    }

    func testEventArguments() {
        XCTAssertEqual(HookCommand.arguments(for: .file(.opened(path: "a b.wav"))), ["a b.wav"])
        XCTAssertEqual(
            HookCommand.arguments(for: .file(.closed(RecorderFileSummary(path: "t.wav", frames: 48000, xruns: 2, droppedFrames: 7)))),
            ["t.wav", "48000", "2", "7"])
        XCTAssertEqual(HookCommand.arguments(for: .file(.rotated(closed: "t-0001.wav", opened: "t-0002.wav"))), ["t-0001.wav", "t-0002.wav"])
        let alarm = AlarmEvent(kind: .deadAir, raised: true, source: "1-2", position: 0, frameTime: 0, detail: "")
        XCTAssertEqual(
            HookCommand.arguments(for: .alarm(alarm, take: "log.wav", frame: 1_440_000)), ["dead-air", "raised", "1-2", "log.wav", "1440000"])
        XCTAssertEqual(HookCommand.arguments(for: .alarm(alarm, take: nil, frame: 0)), ["dead-air", "raised", "1-2", "-", "0"])
        XCTAssertNil(HookRunner.failure(status: 0))
        XCTAssertEqual(HookRunner.failure(status: 3 << 8), "exited with status 3")
        XCTAssertEqual(HookRunner.failure(status: SIGKILL), "was killed by SIGKILL")
        XCTAssertNil(HookRunner.summary(.init()))
        XCTAssertEqual(HookRunner.summary(.init(ran: 5, failed: 1, skipped: 2, leftRunning: 1)), "hooks: 5 ran, 1 failed, 2 skipped, 1 left running")
    }

    /// Arguments are passed as they are (spaces, quotes, dollars): no shell sees them.
    func testArgumentsReachTheProgramUnchangedAndFailuresAreReported() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("log").path
        let script = directory.appendingPathComponent("hook").path
        try "#!/bin/sh\nfor a in \"$JACKHOST_EVENT\" \"$JACKHOST_FILE\" \"$@\"; do printf '[%s]' \"$a\" >> '\(log)'; done\necho >> '\(log)'\nexit 3\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let lines = Lines()
        let runner = HookRunner(
            hooks: [try HookCommand(kind: .open, parsing: "\(script) tag"), try HookCommand(kind: .rotate, parsing: script)],
            report: { lines.append($0) })
        runner.handle(.opened(path: "it's $HOME; a b.wav"))
        runner.handle(.closed(RecorderFileSummary(path: "x.wav", frames: 1, xruns: 0, droppedFrames: 0)))  // no close hook
        runner.handle(.rotated(closed: "a.wav", opened: "b.wav"))
        let counts = runner.finish(timeout: 10)
        XCTAssertEqual(counts, .init(ran: 2, failed: 2, skipped: 0, leftRunning: 0))
        XCTAssertEqual(
            try String(contentsOfFile: log, encoding: .utf8),
            "[open][it's $HOME; a b.wav][tag][it's $HOME; a b.wav]\n[rotate][b.wav][a.wav][b.wav]\n")
        XCTAssertEqual(
            lines.all,
            [
                "hook --on-file-open '\(script) tag' exited with status 3 for it's $HOME; a b.wav",
                "hook --on-rotate '\(script)' exited with status 3 for a.wav -> b.wav",
            ])
    }

    /// A hook that never returns: the queue stays bounded, the rest is skipped and counted, and
    /// the wait at exit ends on time and leaves the hook running.
    func testAHungHookSkipsWhatOverflowsAndTheExitWaitIsBounded() throws {
        let lines = Lines()
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("hook-sleeps-\(UUID().uuidString)").path
        try "#!/bin/sh\nexec sleep 5\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let runner = HookRunner(hooks: [try HookCommand(kind: .open, parsing: script)], queueLimit: 3, report: { lines.append($0) })
        // The first run leaves the queue and starts; 3 wait; the rest are skipped.
        runner.handle(.opened(path: "take-1.wav"))
        XCTAssertTrue(waitUntil { runner.counts.ran == 1 })
        for index in 2...20 { runner.handle(.opened(path: "take-\(index).wav")) }
        let started = Date()
        let counts = runner.finish(timeout: 0.5)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(counts.ran, 1)
        XCTAssertEqual(counts.leftRunning, 1)
        XCTAssertEqual(counts.skipped, 19)
        XCTAssertEqual(counts.failed, 0)
        let all = lines.all
        XCTAssertTrue(
            all.contains { $0.hasPrefix("hook --on-file-open '\(script)' for take-1.wav still runs after 0.") && $0.contains("left running (pid ") },
            "\(all)")
        XCTAssertTrue(all.contains("3 queued hook run(s) were not started because jackhost is exiting"), "\(all)")
        XCTAssertTrue(all.contains { $0.hasPrefix("16 hook run(s) skipped: 3 were already waiting") }, "\(all)")
        // The hook is still there (left, not killed); end it now that the test is done.
        if let pid = all.lazy.compactMap({ $0.split(separator: "(pid ").last.flatMap { Int32($0.dropLast()) } }).first {
            XCTAssertEqual(kill(pid, 0), 0, "the hook was left running")
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    /// A program that disappears after the check: one warning, counted, and the runner goes on.
    func testAProgramThatCannotStartIsAWarning() throws {
        let lines = Lines()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("gone").path
        try "#!/bin/sh\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let runner = HookRunner(
            hooks: [try HookCommand(kind: .open, parsing: script), try HookCommand(kind: .close, parsing: "true")], report: { lines.append($0) })
        try FileManager.default.removeItem(atPath: script)
        runner.handle(.opened(path: "t.wav"))
        runner.handle(.closed(RecorderFileSummary(path: "t.wav", frames: 1, xruns: 0, droppedFrames: 0)))
        XCTAssertEqual(runner.finish(timeout: 10), .init(ran: 2, failed: 1, skipped: 0, leftRunning: 0))
        XCTAssertEqual(lines.all, ["hook --on-file-open '\(script)' could not start for t.wav: No such file or directory"])
    }

    /// Lines are cut at the limit (the cut said once), split across reads, freed of CR and
    /// control characters, and a last line without a newline is kept.
    func testHookOutputIsCutIntoBoundedPrintableLines() {
        var splitter = LineSplitter(limit: 8)
        XCTAssertEqual(splitter.feed(Array("one\ntw".utf8)[...]), ["one"])
        XCTAssertEqual(splitter.feed(Array("o\r\n0123456789abc\nok\n".utf8)[...]), ["two", "01234567 [cut at 8 bytes]", "ok"])
        XCTAssertEqual(splitter.feed(Array("a\u{1B}[2J\tb\n".utf8)[...]), ["a?[2J\tb"])
        XCTAssertEqual(splitter.feed([0x61, 0xFF, 0x0A][...]), ["a?"], "invalid UTF-8 is shown as ?")
        XCTAssertEqual(splitter.feed(Array("end".utf8)[...]), [])
        XCTAssertEqual(splitter.finish(), ["end"])
        XCTAssertEqual(splitter.finish(), [])
    }

    /// A hook's stdout and stderr come back through the relay, prefixed with its kind, in order,
    /// with the warning about its exit once; what it writes never reaches jackhost's own descriptors.
    func testHookOutputIsRelayedWithItsKindBeforeItsWarning() throws {
        let events = Lines()
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("hook-talks-\(UUID().uuidString)").path
        try "#!/bin/sh\necho out line\necho err line >&2\nprintf 'no newline'\nexit 4\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let runner = HookRunner(
            hooks: [try HookCommand(kind: .close, parsing: script)], report: { events.append("warning: \($0)") },
            output: { events.append($0) })
        runner.handle(.closed(RecorderFileSummary(path: "t.wav", frames: 1, xruns: 0, droppedFrames: 0)))
        XCTAssertEqual(runner.finish(timeout: 10), .init(ran: 1, failed: 1, skipped: 0, leftRunning: 0))
        // The relay gets up to 1 s after the hook's exit to print what it said before the
        // warning; on a machine too busy for that (a loaded suite run once was) the warning may
        // come first, but every line still arrives, whole and prefixed.
        let warning = "warning: hook --on-file-close '\(script)' exited with status 4 for t.wav"
        let lines = ["hook on-file-close: out line", "hook on-file-close: err line", "hook on-file-close: no newline"]
        XCTAssertEqual(events.all.filter { $0 != warning }, lines)
        XCTAssertEqual(events.all.filter { $0 == warning }.count, 1)

    }

    private func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
