import Foundation
import XCTest

/// Runs jackhost on a pseudo-terminal of its own, as a user at a terminal runs it: the terminal
/// is its controlling terminal and it is in the foreground, so it reads keys. Python's `pty.fork`
/// does the session and controlling-terminal set-up that Foundation's `Process` cannot.
///
/// The steps are done in order: `wait TEXT` (until the output shows TEXT, at most 15 s),
/// `sleep SECONDS`, `key C`, `signal INT`. The result is the output (the terminal merges stdout
/// and stderr), the exit status, and the terminal's local-mode flags while jackhost ran (after
/// the first `wait`) and after it exited.
enum TerminalRun {
    struct Result {
        var output: String
        var status: Int32
        /// `ICANON` and `ECHO` while it ran, and after.
        var canonicalWhileRunning: Bool
        var echoWhileRunning: Bool
        var canonicalAfter: Bool
        var echoAfter: Bool
        /// Seconds from the first `wait` to each `key`, in order.
        var keyTimes: [Double]
    }

    static func run(_ arguments: [String], steps: [String], directory: URL, timeout: Double = 60) throws -> Result {
        let script = directory.appendingPathComponent("terminal-run.py")
        try source.write(to: script, atomically: true, encoding: .utf8)
        let result = try JACKFixture.run(
            "/usr/bin/python3", [script.path, steps.joined(separator: "\n"), JackhostBinary.path] + arguments, timeout: timeout)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.last(where: { $0.hasPrefix("TERMINAL-RUN ") }) else {
            throw NSError(domain: "TerminalRun", code: 1, userInfo: [NSLocalizedDescriptionKey: result.stdout + result.stderr])
        }
        let fields = Dictionary(
            uniqueKeysWithValues: statusLine.dropFirst("TERMINAL-RUN ".count).split(separator: " ").map { field in
                let parts = field.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts.count > 1 ? parts[1] : ""))
            })
        let output = try String(contentsOf: directory.appendingPathComponent("terminal-run.out"), encoding: .utf8)
        return Result(
            output: output, status: Int32(fields["status"] ?? "") ?? -1,
            canonicalWhileRunning: fields["icanon_during"] == "1", echoWhileRunning: fields["echo_during"] == "1",
            canonicalAfter: fields["icanon_after"] == "1", echoAfter: fields["echo_after"] == "1",
            keyTimes: (fields["keys"] ?? "").split(separator: ",").compactMap { Double($0) })
    }

    private static let source = #"""
        import os, pty, select, signal, sys, termios, time
        steps = [s for s in sys.argv[1].split("\n") if s]
        argv = sys.argv[2:]
        outpath = os.path.join(os.path.dirname(os.path.abspath(__file__)), "terminal-run.out")
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["JACK_NO_START_SERVER"] = "1"
            os.execv(argv[0], argv)
        output = b""
        def pump(seconds):
            global output
            end = time.monotonic() + seconds
            while True:
                left = end - time.monotonic()
                if left <= 0: return
                ready, _, _ = select.select([fd], [], [], min(left, 0.02))
                if ready:
                    try:
                        data = os.read(fd, 4096)
                    except OSError:
                        return
                    if not data: return
                    output += data
        def flags():
            lflag = termios.tcgetattr(fd)[3]
            return int(bool(lflag & termios.ICANON)), int(bool(lflag & termios.ECHO))
        during = (-1, -1)
        started = None
        keys = []
        for step in steps:
            verb, _, arg = step.partition(" ")
            if verb == "wait":
                deadline = time.monotonic() + 15
                while arg.encode() not in output and time.monotonic() < deadline: pump(0.05)
                if started is None:
                    started = time.monotonic()
                    pump(0.1)
                    during = flags()
            elif verb == "sleep":
                pump(float(arg))
            elif verb == "key":
                keys.append("%.3f" % (time.monotonic() - (started or time.monotonic())))
                os.write(fd, arg.encode())
            elif verb == "signal":
                os.kill(pid, getattr(signal, "SIG" + arg))
        status = None
        deadline = time.monotonic() + 30
        while status is None and time.monotonic() < deadline:
            pump(0.05)
            done, code = os.waitpid(pid, os.WNOHANG)
            if done: status = os.waitstatus_to_exitcode(code)
        if status is None:
            os.kill(pid, signal.SIGKILL)
            status = -999
        pump(0.2)
        try:
            after = flags()
        except termios.error:
            after = (-1, -1)
        open(outpath, "wb").write(output)
        print("TERMINAL-RUN status=%d icanon_during=%d echo_during=%d icanon_after=%d echo_after=%d keys=%s"
              % (status, during[0], during[1], after[0], after[1], ",".join(keys)))
        """#
}
