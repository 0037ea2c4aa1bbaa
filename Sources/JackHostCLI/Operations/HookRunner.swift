import CPosix
import CSignals
import Dispatch
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers

/// A command given to `--on-file-open`, `--on-file-close` or `--on-rotate`.
///
/// The command is split into words at spaces, and nothing else: no quoting, no variables, no
/// globbing, no shell. The first word is the program (found in `PATH` unless it contains a
/// `/`); the event's arguments follow the command's own words:
///
/// - open: `PATH`
/// - close: `PATH FRAMES XRUNS DROPS`
/// - rotate: `CLOSED_PATH NEW_PATH`
/// - alarm: `ALARM STATE SOURCE TAKE FRAME` (`dead-air raised 1-2 /srv/log/show.wav 1440000`;
///   TAKE is `-` and FRAME 0 without a take)
///
/// Anything more complex belongs in a script.
struct HookCommand: Equatable, Sendable {
    /// When a hook runs.
    enum Kind: String, CaseIterable, Sendable {
        /// A file was created (`--on-file-open`).
        case open
        /// A file was finalised (`--on-file-close`).
        case close
        /// `--split` ended a segment and started the next (`--on-rotate`).
        case rotate
        /// An alarm was raised or cleared (`--on-alarm`).
        case alarm

        /// The option that sets this hook, without the dashes.
        var option: String {
            switch self {
            case .open: "on-file-open"
            case .close: "on-file-close"
            case .rotate: "on-rotate"
            case .alarm: "on-alarm"
            }
        }

        /// The hooks of the recorder's files (the alarm's is the alarms' own).
        static let fileKinds: [Kind] = [.open, .close, .rotate]
    }

    /// When it runs.
    let kind: Kind
    /// The command as given, for messages.
    let text: String
    /// The program and its own arguments.
    let words: [String]

    /// Splits `text` into words at spaces (runs of spaces count as one); nothing is quoted or expanded.
    static func words(in text: String) -> [String] {
        text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }

    /// Reads and checks the command for `kind`: it must name a program that exists now,
    /// either an executable file (a word with a `/`) or one found in `searchPath`.
    init(kind: Kind, parsing text: String, searchPath: String? = HookCommand.environmentPath) throws(UsageError) {
        let words = Self.words(in: text)
        guard let program = words.first else {
            throw UsageError(
                "--\(kind.option) was given an empty command; name a program, e.g. --\(kind.option) /usr/local/bin/archive-take")
        }
        guard Self.findProgram(program, searchPath: searchPath) != nil else {
            let shown = ValueParsing.shownPath(program)
            if program.contains("/") {
                throw UsageError("--\(kind.option): \(shown) is not an executable file; give the path of a program or script")
            }
            throw UsageError("--\(kind.option): program \"\(shown)\" is not in PATH; give its full path, or install it")
        }
        self.kind = kind
        self.text = text
        self.words = words
    }

    /// `$PATH`, or the search path posix_spawnp uses when it is unset.
    static var environmentPath: String { getenv("PATH").map { String(cString: $0) } ?? "/bin:/usr/bin" }

    /// The file `program` names: itself when it contains a `/`, else the first executable
    /// regular file of that name in `searchPath`'s directories (an empty entry is the current
    /// directory), as posix_spawnp searches.
    static func findProgram(_ program: String, searchPath: String?) -> String? {
        if program.contains("/") { return isExecutableFile(program) ? program : nil }
        for directory in (searchPath ?? "/bin:/usr/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = directory.isEmpty ? program : "\(directory)/\(program)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// The arguments an event adds after the command's own words.
    static func arguments(for event: HookEvent) -> [String] {
        switch event {
        case .file(.opened(let path)): [path]
        case .file(.closed(let summary)): [summary.path, String(summary.frames), String(summary.xruns), String(summary.droppedFrames)]
        case .file(.rotated(let closed, let opened)): [closed, opened]
        case .alarm(let alarm, let take, let frame): [alarm.kind.rawValue, alarm.state, alarm.source, take ?? "-", String(frame)]
        }
    }

    /// The hook kind an event runs.
    static func kind(of event: HookEvent) -> Kind {
        switch event {
        case .file(.opened): .open
        case .file(.closed): .close
        case .file(.rotated): .rotate
        case .alarm: .alarm
        }
    }
}

/// What runs a hook: one of the recorder's file events, or an alarm (with the take's file and
/// its frame count when the alarm was reported, if a take is open).
enum HookEvent: Sendable {
    case file(RecorderFileEvent)
    case alarm(AlarmEvent, take: String?, frame: Int)
}

/// Runs the recorder's hooks on a thread of its own, one at a time and in order, so that no
/// audio or writer thread ever waits for a hook.
///
/// - ``handle(_:)`` (the recorder's `onFileEvent`, on its writer thread) only queues the event.
///   The queue holds ``queueLimit`` runs; while a hook hangs, later runs are skipped and
///   counted rather than held in memory without bound.
/// - A hook runs as an argument vector through posix_spawnp, never through a shell, in a
///   process group of its own (a Ctrl-C at the terminal stops jackhost, not the hook), with
///   stdin from /dev/null and its stdout and stderr on a pipe that ``HookOutputRelay`` copies
///   to jackhost's stderr, each line prefixed (stdout may carry audio; and a child the hook
///   leaves behind holds that pipe, never jackhost's own stdout or stderr). It gets
///   `JACKHOST_EVENT` (open, close or rotate) and `JACKHOST_FILE` (the file, for rotate the new
///   one) in its environment, and nothing else of jackhost's open files.
/// - A hook that cannot start, exits non-zero or is killed is reported in one warning line and
///   counted; it never ends the take.
/// - ``finish(timeout:abandonWhen:waiting:)`` waits a bounded time for the hooks still queued or
///   running, and leaves what is still running (it is never killed).
final class HookRunner: @unchecked Sendable {
    // @unchecked: `state` is guarded by `lock`; the rest is immutable after init.

    /// What the hooks did over a run.
    struct Counts: Equatable, Sendable {
        /// Runs started or attempted (including failures).
        var ran = 0
        /// Runs that could not start, exited non-zero or were killed.
        var failed = 0
        /// Runs never started: the queue was full, or jackhost exited first.
        var skipped = 0
        /// Hooks still running when jackhost stopped waiting (left running).
        var leftRunning = 0
    }

    /// How long jackhost waits at exit for hooks still queued or running, in seconds.
    static let exitWait = 10.0

    /// Queued runs beyond this are skipped (and counted).
    let queueLimit: Int
    private let hooks: [HookCommand.Kind: HookCommand]
    private let environment: [String]
    private let report: @Sendable (String) -> Void
    /// Carries the hooks' output to stderr; nil when no pipe could be made (output then goes to /dev/null).
    private let relay: HookOutputRelay?
    private let lock = Lock()
    private var state = State()
    private let wake = DispatchSemaphore(value: 0)

    private struct Job {
        let command: HookCommand
        let event: HookEvent
    }

    private struct State {
        var queue: [Job] = []
        /// The run in progress (set when it leaves the queue), and its process once started.
        var running: (job: Job, child: pid_t)?
        var counts = Counts()
        /// Skips not yet reported.
        var unreportedSkips = 0
        var closing = false
        var abandoned = false
        var threadDone = false
        /// Whether jackhost has said that a hook's output could not be shown.
        var saidOutputLost = false
    }

    /// Creates a runner for `hooks` (at most one per kind) and starts its thread.
    ///
    /// - Parameters:
    ///   - report: Receives each warning line (default: jackhost's stderr).
    ///   - output: Receives each line the hooks print, prefixed (default: jackhost's stderr).
    init(
        hooks: [HookCommand], queueLimit: Int = 64,
        report: @escaping @Sendable (String) -> Void = { printError("warning: \($0)") },
        output: @escaping @Sendable (String) -> Void = { printNote($0) }
    ) {
        self.hooks = Dictionary(hooks.map { ($0.kind, $0) }, uniquingKeysWith: { _, last in last })
        self.queueLimit = max(1, queueLimit)
        self.report = report
        relay = hooks.isEmpty ? nil : HookOutputRelay(emit: output)
        // Taken once, here on the main thread: the hooks see jackhost's environment as it started.
        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let variable = String(cString: pointer)
            if !variable.hasPrefix("JACKHOST_EVENT=") && !variable.hasPrefix("JACKHOST_FILE=") { environment.append(variable) }
            entry += 1
        }
        self.environment = environment
        WorkerThread.start(name: "jackhost-hooks") { [self] in runLoop() }
    }

    /// What the hooks did so far.
    var counts: Counts { lock.withLock { state.counts } }

    /// Queues the hook for `event`, if one is set; never waits. The recorder's `onFileEvent`.
    func handle(_ event: RecorderFileEvent) { queue(.file(event)) }

    /// Queues `--on-alarm` for `alarm`, if set; never waits.
    func handle(alarm: AlarmEvent, take: String?, frame: Int) { queue(.alarm(alarm, take: take, frame: frame)) }

    private func queue(_ event: HookEvent) {
        guard let command = hooks[HookCommand.kind(of: event)] else { return }
        let queued = lock.withLock {
            guard !state.abandoned else { return false }
            guard state.queue.count < queueLimit else {
                state.counts.skipped += 1
                state.unreportedSkips += 1
                return false
            }
            state.queue.append(Job(command: command, event: event))
            return true
        }
        if queued { wake.signal() }
    }

    /// Waits up to `timeout` seconds (or until `abandonWhen` says stop) for the queued and
    /// running hooks; reports what is left, leaves a running hook running, and returns the counts.
    ///
    /// - Parameter waiting: Called once if the hooks are still busy after a second (to say why
    ///   jackhost has not exited yet).
    func finish(timeout: Double = 10, abandonWhen: () -> Bool = { false }, waiting: (() -> Void)? = nil) -> Counts {
        lock.withLock { state.closing = true }
        wake.signal()
        let start = monotonicSeconds()
        var saidWaiting = false
        while lock.withLock({ !state.threadDone && (!state.queue.isEmpty || state.running != nil) }) {
            let elapsed = monotonicSeconds() - start
            if elapsed >= timeout || abandonWhen() {
                abandon(after: elapsed)
                break
            }
            if !saidWaiting && elapsed >= 1 {
                saidWaiting = true
                waiting?()
            }
            usleep(20_000)
        }
        reportSkips()
        return counts
    }

    /// The end-of-run summary line, or nil when no hook had anything to do.
    static func summary(_ counts: Counts) -> String? {
        guard counts.ran + counts.skipped > 0 else { return nil }
        var line = "hooks: \(counts.ran) ran, \(counts.failed) failed, \(counts.skipped) skipped"
        if counts.leftRunning > 0 { line += ", \(counts.leftRunning) left running" }
        return line
    }

    // MARK: The runner thread

    private func runLoop() {
        while true {
            wake.wait()
            let next: Job?? = lock.withLock {
                if state.abandoned { return .some(nil) }
                if state.queue.isEmpty { return state.closing ? .some(nil) : nil }
                let job = state.queue.removeFirst()
                state.running = (job, 0)
                return job
            }
            guard let next else { continue }
            guard let job = next else { break }
            run(job)
            reportSkips()
        }
        lock.withLock { state.threadDone = true }
    }

    private func run(_ job: Job) {
        let command = job.command
        let argv = (command.words + HookCommand.arguments(for: job.event)).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let subject = Self.subject(job.event)
        var environment = environment
        environment.append("JACKHOST_EVENT=\(command.kind.rawValue)")
        environment.append("JACKHOST_FILE=\(subject.file)")
        let envp = environment.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        let output = openOutput(for: command)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        Self.addStandardDescriptors(&actions, output: output?.writeEnd)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so a Ctrl-C meant for jackhost does not cut a hook short; the
        // signals jackhost handles or ignores (SIGPIPE) start at their defaults, none blocked.
        var defaults = sigset_t()
        csignals_handled_set(&defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let abandoned = lock.withLock {
            if state.abandoned { state.running = nil }
            return state.abandoned
        }
        guard !abandoned else {
            if let output { close(output.writeEnd) }
            return
        }
        var child = pid_t()
        let spawned = posix_spawnp(&child, command.words[0], &actions, &attributes, argv, envp)
        // Ours is closed at once: from now on only the hook and its children hold the pipe.
        if let output { close(output.writeEnd) }
        guard spawned == 0 else {
            lock.withLock {
                state.running = nil
                state.counts.ran += 1
                state.counts.failed += 1
            }
            report("\(Self.describe(command)) could not start for \(subject.shown): \(String(cString: strerror(spawned)))")
            return
        }
        lock.withLock {
            state.counts.ran += 1
            state.running = (job, child)
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        if let output { relay?.settle(output.id, timeout: 1.0) }
        let failure = Self.failure(status: status)
        let reportIt = lock.withLock {
            state.running = nil
            if failure != nil { state.counts.failed += 1 }
            // A hook that outlived the wait was reported as left running; its end is not news.
            return !state.abandoned
        }
        if let failure, reportIt { report("\(Self.describe(command)) \(failure) for \(subject.shown)") }
    }

    /// The hook's descriptors: stdin from /dev/null, stdout and stderr on `output` (the relay's
    /// pipe; /dev/null without one), and nothing else of jackhost's: not the take, not the JACK
    /// client's sockets, not jackhost's own stdout (it may carry audio) or stderr.
    private static func addStandardDescriptors(_ actions: inout posix_spawn_file_actions_t, output: Int32?) {
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, STDOUT_FILENO)
            posix_spawn_file_actions_adddup2(&actions, output, STDERR_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        }
        cposix_spawn_add_closefrom(&actions, 3)
    }

    /// A relay pipe for one run of `command`; nil, said once, when none can be had (too many
    /// outputs still held open by children hooks left behind, or no pipe).
    private func openOutput(for command: HookCommand) -> (id: Int, writeEnd: Int32)? {
        if let output = relay?.open(label: command.kind.option) { return output }
        let sayIt = lock.withLock {
            defer { state.saidOutputLost = true }
            return !state.saidOutputLost
        }
        if sayIt {
            let open = relay?.openCount ?? 0
            report(
                "the output of \(Self.describe(command)) is not shown: \(open) earlier hook outputs are still held open by children the hooks left running (said once; the hooks still run)"
            )
        }
        return nil
    }

    /// "exited with status 3" or "was killed by SIGKILL", or nil for success.
    static func failure(status: Int32) -> String? {
        let signal = status & 0x7F
        if signal != 0 {
            let name = cposix_signal_abbreviation(signal).map { "SIG" + String(cString: $0) } ?? "signal \(signal)"
            return "was killed by \(name)"
        }
        let code = (status >> 8) & 0xFF
        return code == 0 ? nil : "exited with status \(code)"
    }

    /// `hook --on-file-close 'CMD'`.
    private static func describe(_ command: HookCommand) -> String {
        "hook --\(command.kind.option) '\(command.text.replacingNewlines())'"
    }

    /// The file an event is about (for rotate, the new one; for an alarm, the take's, or none)
    /// and how messages name it.
    private static func subject(_ event: HookEvent) -> (file: String, shown: String) {
        switch event {
        case .file(.opened(let path)): (path, path)
        case .file(.closed(let summary)): (summary.path, summary.path)
        case .file(.rotated(let closed, let opened)): (opened, "\(closed) -> \(opened)")
        case .alarm(let alarm, let take, _): (take ?? "", "\(alarm.description), \(alarm.state)")
        }
    }

    private func reportSkips() {
        let skipped = lock.withLock {
            defer { state.unreportedSkips = 0 }
            return state.unreportedSkips
        }
        guard skipped > 0 else { return }
        report(
            "\(skipped) hook run(s) skipped: \(queueLimit) were already waiting behind a hook that had not returned; make the hook return sooner"
        )
    }

    /// Stops waiting: what is queued is skipped, what runs is left running.
    private func abandon(after seconds: Double) {
        let (running, notStarted) = lock.withLock {
            state.abandoned = true
            let notStarted = state.queue.count
            state.queue.removeAll()
            state.counts.skipped += notStarted
            if let running = state.running {
                // A run between the queue and its spawn is not started (``run(_:)`` checks).
                if running.child > 0 { state.counts.leftRunning += 1 } else { state.counts.skipped += 1 }
            }
            return (state.running, notStarted)
        }
        wake.signal()
        if let running, running.child > 0 {
            report(
                "\(Self.describe(running.job.command)) for \(Self.subject(running.job.event).shown) still runs after \(seconds.formatted(places: 1)) s; it is left running (pid \(running.child))"
            )
        }
        if notStarted > 0 { report("\(notStarted) queued hook run(s) were not started because jackhost is exiting") }
    }
}
