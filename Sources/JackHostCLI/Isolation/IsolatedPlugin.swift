import CPosix
import CSignals
import Dispatch
import FoundationEssentials
import Glibc
import JackHost
import JackHostPlugins
import Synchronization

/// A plugin run in its own process, as its own JACK client connected to the same sources as
/// the recording: JACK's graph is the boundary, so a plugin that crashes, hangs or overruns
/// costs the recording nothing (jackd2 runs the other clients of a cycle whatever one of them
/// does; measured: a client stuck forever in its process callback left a 5 s take beside it
/// bit-exact).
///
/// The child is this same executable running `jackhost run --plugin SPEC --plugin-isolation none
/// --supervisor-fd 3`. Over a socket pair it says when it is ready and how many frames its plugin
/// has taken; it ends normally when the socket closes (and so when this process dies). A
/// supervision thread watches it and reports its fate in one line: a crash (the signal), an exit,
/// or a hang (its progress lags the recording by ``hangSeconds``; a zombified client looks the
/// same), then restarts it after a backoff, up to ``maximumRestarts`` times.
final class IsolatedPlugin: @unchecked Sendable {
    // @unchecked: `state` is guarded by `lock`; the rest is immutable after init.

    /// What happened to a plugin over the run, for the summary and the exit status.
    struct Fate: Sendable {
        var crashes = 0
        var hangs = 0
        var restarts = 0
        var gaveUp = false
        /// The child ended with status 4: its own watchdog bypassed the plugin.
        var bypassed = false
        /// One line per failure, as reported when it happened.
        var events: [String] = []
        /// Frames the plugin took in, over every child it ran in (a restart counts from 0 again).
        var processedFrames = 0
        /// Frames of the take the plugin never took in (filled in by ``IsolatedPlugin/stop(signalled:takeFrames:)``).
        var missedFrames = 0
        var failed: Bool { crashes + hangs > 0 || gaveUp || bypassed || missedFrames > 0 }
    }

    /// The plugin's name for messages: the file's stem without `lib` until the child, which
    /// loaded the plugin, says the name the plugin gives itself.
    var displayName: String { lock.withLock { state.name } }
    let clientName: String
    private let executable: String
    private let arguments: [String]
    private let standardOutput: Int32
    /// The recording's progress in frames, to tell a hung plugin from a stopped server.
    private let recordingFrames: @Sendable () -> Int
    private let sampleRate: @Sendable () -> Double
    private let lock = Lock()
    private var state = State()
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphoreBox()

    private struct State {
        var child: pid_t = 0
        var socket: Int32 = -1
        var fate = Fate()
        var name = ""
        /// The plugin's latest results, as its process forwarded them, in the order first seen.
        var results: [PublishedResult] = []
    }

    /// The plugin's latest results (ABI 2), forwarded by its process.
    func latestResults() -> [PublishedResult] { lock.withLock { state.results } }

    private func noteResult(_ line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, let bits = UInt64(parts[2], radix: 16) else { return }
        let result = PublishedResult(
            name: String(parts[1]), unit: parts.count > 3 ? String(parts[3]) : "", value: Double(bitPattern: bits))
        lock.withLock {
            if let index = state.results.firstIndex(where: { $0.name == result.name }) {
                state.results[index] = result
            } else {
                state.results.append(result)
            }
        }
    }

    /// A plugin whose progress lags the recording by this long is hung (or zombified by the server).
    static let hangSeconds = 3.0
    /// Restarts before giving up; the waits between them double from ``firstBackoff``.
    static let maximumRestarts = 3
    static let firstBackoff = 0.25
    /// How long a child may take to end after its socket closes: its own 5 s drain, and a margin.
    static let stopGrace = 7.0

    /// - Parameters:
    ///   - specification: the `--plugin` value as the user gave it.
    ///   - childArguments: the `run` options the child shares with the recording (server,
    ///     connections, channels, reconnect), without `--plugin` and `--name`.
    init(
        specification: String, path: String, clientName: String, childArguments: [String], standardOutput: Int32,
        recordingFrames: @escaping @Sendable () -> Int, sampleRate: @escaping @Sendable () -> Double
    ) {
        state.name = Self.displayName(path: path)
        self.clientName = clientName
        executable = Self.currentExecutable()
        arguments =
            ["run", "--plugin", specification, "--plugin-isolation", "none", "--name", clientName, "--supervisor-fd", "3", "--quiet"]
            + childArguments
        self.standardOutput = standardOutput
        self.recordingFrames = recordingFrames
        self.sampleRate = sampleRate
    }

    private static func environment() -> [String] {
        var result: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            result.append(String(cString: pointer))
            entry += 1
        }
        return result
    }

    /// `libFrequencyEstimator.so` -> `FrequencyEstimator`.
    static func displayName(path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasPrefix("lib") { name.removeFirst(3) }
        if let dot = name.firstIndex(of: ".") { name = String(name[..<dot]) }
        return name.isEmpty ? "plugin" : name
    }

    private static func currentExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// What the first start ended with.
    enum Startup: Equatable {
        case ready
        /// The child exited before it was ready, with this status (it printed why).
        case failed(Int32)
    }

    /// Starts the child and waits until it is capturing (or has failed: a bad option, a format
    /// it refuses). Then a supervision thread takes over.
    func start(timeout: Double = 15) -> Startup {
        guard let socket = spawn() else { return .failed(ExitStatus.failure.rawValue) }
        let result = awaitReady(socket: socket, timeout: timeout)
        if result != .ready { return result }
        WorkerThread.start(name: "jackhost-isolate") { [self] in
            supervise()
            finished.signal()
        }
        return .ready
    }

    /// Ends the child and waits for it, killing it after ``stopGrace``. Returns the plugin's
    /// fate over the run.
    ///
    /// - Parameter signalled: The take was stopped by a signal: the child gets SIGTERM and, like
    ///   jackhost itself, drains for at most half a second. Otherwise its link closes and it
    ///   ends as after `--duration`, draining for up to 5 s.
    ///
    /// - Parameter takeFrames: The frames the take captured: whatever the plugin did not take in
    ///   of those (it hung, crashed, fell behind or was bypassed, even for less than
    ///   ``hangSeconds`` before the end) is its ``Fate/missedFrames``, and its results are partial.
    func stop(signalled: Bool = false, takeFrames: Int = 0) -> Fate {
        stopRequested.store(true, ordering: .releasing)
        let (socket, child) = lock.withLock { (state.socket, state.child) }
        if signalled && child > 0 { kill(child, SIGTERM) }
        // Only our sending side: the child still reports its final progress after its drain.
        if socket >= 0 { shutdown(socket, Int32(SHUT_WR)) }
        if !finished.wait(seconds: Self.stopGrace + 1) {
            if child > 0 { kill(child, SIGKILL) }
            _ = finished.wait(seconds: 2)
        }
        return lock.withLock {
            state.fate.missedFrames = max(state.fate.missedFrames, takeFrames - state.fate.processedFrames)
            return state.fate
        }
    }

    /// Whether the plugin's results cover less than the whole take so far: it crashed, hung, was
    /// bypassed or given up, or (once stopped) missed frames.
    var resultsArePartial: Bool { lock.withLock { state.fate.failed } }

    /// The frames of the take the plugin missed, once ``stop(signalled:takeFrames:)`` has run.
    var missedFrames: Int { lock.withLock { state.fate.missedFrames } }

    // MARK: The child

    /// Spawns the child with one end of a socket pair on its descriptor 3; returns our end.
    private func spawn() -> Int32? {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            report("could not start \(displayName) in its own process: socketpair: \(String(cString: strerror(errno)))")
            return nil
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 3)
        if standardOutput != STDOUT_FILENO { posix_spawn_file_actions_adddup2(&actions, standardOutput, STDOUT_FILENO) }
        // Nothing else of ours leaks into the plugin's process: not the take, not our JACK client.
        cposix_spawn_add_closefrom(&actions, 4)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The Swift runtime's multi-page backtrace of a crashing plugin would bury the take's
        // own report; the one-line fate says what happened. SWIFT_BACKTRACE set by the user wins.
        var environment = Self.environment()
        if !environment.contains(where: { $0.hasPrefix("SWIFT_BACKTRACE=") }) { environment.append("SWIFT_BACKTRACE=enable=no") }
        let envp = environment.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var child = pid_t()
        let status = posix_spawn(&child, executable, &actions, nil, argv, envp)
        close(ends[1])
        guard status == 0 else {
            close(ends[0])
            report("could not start \(displayName) in its own process: \(String(cString: strerror(status)))")
            return nil
        }
        lock.withLock {
            state.child = child
            state.socket = ends[0]
        }
        return ends[0]
    }

    private enum Message {
        case ready
        case progress(Int)
        case closed
        case nothing
    }

    /// Reads what the child said within `timeout` seconds; the last progress count wins.
    private func read(socket: Int32, timeout: Double, pending: inout [UInt8]) -> Message {
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return .nothing }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, 0)
        if count <= 0 { return count < 0 && errno == EINTR ? .nothing : .closed }
        pending += buffer[..<count]
        var message = Message.nothing
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeSubrange(...newline)
            if line.hasPrefix("result ") {
                noteResult(Substring(line))
            } else if line.hasPrefix("ready") {
                let name = String(line.dropFirst("ready".count).drop(while: { $0 == " " }))
                if !name.isEmpty { lock.withLock { state.name = name } }
                message = .ready
            } else if let frames = Int(line) {
                if case .ready = message { continue }
                message = .progress(frames)
            }
        }
        return message
    }

    private func awaitReady(socket: Int32, timeout: Double) -> Startup {
        var pending: [UInt8] = []
        let deadline = Self.now() + timeout
        while Self.now() < deadline {
            switch read(socket: socket, timeout: 0.1, pending: &pending) {
            case .ready: return .ready
            case .closed: return .failed(reap().exitStatus)
            default: continue
            }
        }
        report("\(displayName) did not start within \(Int(timeout)) s in its own process; stopping it")
        return .failed(killAndReap().exitStatus)
    }

    /// Watches the running child until a stop; restarts it after a crash, an exit or a hang.
    private func supervise() {
        var restarts = 0
        while true {
            let socket = lock.withLock { state.socket }
            let startedAt = Self.now()
            let ending = watch(socket: socket)
            close(socket)
            lock.withLock { state.socket = -1 }
            // A stop signal reaches the whole process group: the child may end before we ask it to.
            if csignals_stop_requests() > 0 { stopRequested.store(true, ordering: .releasing) }
            if stopRequested.load(ordering: .acquiring), case .exited(let end) = ending {
                if end.exitStatus == ExitStatus.pluginFailed.rawValue { lock.withLock { state.fate.bypassed = true } }
                if end.exitStatus == 0 || end.exitStatus == ExitStatus.pluginFailed.rawValue { return }
            }
            let at = (Double(recordingFrames()) / max(sampleRate(), 1)).formatted(places: 1)
            var line: String
            switch ending {
            case .hung:
                line = "\(displayName) stopped taking audio for \(Int(Self.hangSeconds)) s (hung, or dropped by the server) at \(at) s; killed it"
                lock.withLock { state.fate.hangs += 1 }
            case .exited(let how):
                line = "\(displayName) \(how.description) at \(at) s"
                lock.withLock { state.fate.crashes += 1 }
            }
            if stopRequested.load(ordering: .acquiring) {
                record(line + "; the recording is unaffected")
                return
            }
            // A child that ran well for a while earns a fresh set of restarts.
            if Self.now() - startedAt > 60 { restarts = 0 }
            guard restarts < Self.maximumRestarts else {
                record(line + "; gave up after \(restarts) restarts; the recording continues without it")
                lock.withLock { state.fate.gaveUp = true }
                return
            }
            restarts += 1
            let backoff = Self.firstBackoff * Double(1 << (restarts - 1))
            record(
                line + "; restarting it in \(backoff.formatted(places: 2)) s (\(restarts) of \(Self.maximumRestarts)); the recording is unaffected")
            if waitUnlessStopped(backoff) { return }
            guard let next = spawn() else { continue }
            if awaitReady(socket: next, timeout: 15) != .ready {
                lock.withLock { state.socket = -1 }
                close(next)
                continue
            }
            lock.withLock { state.fate.restarts += 1 }
        }
    }

    private enum Ending {
        case exited(ChildEnd)
        case hung
    }

    /// Follows the child's progress until it exits or hangs.
    private func watch(socket: Int32) -> Ending {
        var pending: [UInt8] = []
        var lastProgress = -1
        var recordingAtLastProgress = recordingFrames()
        // What earlier children of this plugin took in; this child counts from 0.
        let before = lock.withLock { state.fate.processedFrames }
        while true {
            switch read(socket: socket, timeout: 0.25, pending: &pending) {
            case .closed: return .exited(reap())
            case .progress(let frames) where frames != lastProgress:
                lastProgress = frames
                recordingAtLastProgress = recordingFrames()
                lock.withLock { state.fate.processedFrames = before + frames }
            default: break
            }
            // Hung: the recording moved on by hangSeconds while the plugin took nothing. (A
            // server that stopped, or a take that ended, moves neither: no false alarm.)
            let lag = Double(recordingFrames() - recordingAtLastProgress) / max(sampleRate(), 1)
            if lag >= Self.hangSeconds && !stopRequested.load(ordering: .acquiring) {
                _ = killAndReap()
                return .hung
            }
        }
    }

    private func waitUnlessStopped(_ seconds: Double) -> Bool {
        let deadline = Self.now() + seconds
        while Self.now() < deadline {
            if stopRequested.load(ordering: .acquiring) { return true }
            usleep(20_000)
        }
        return stopRequested.load(ordering: .acquiring)
    }

    /// How a child ended.
    struct ChildEnd: CustomStringConvertible {
        let status: Int32
        var signal: Int32 { status & 0x7F }
        var exitStatus: Int32 { signal == 0 ? (status >> 8) & 0xFF : 128 + signal }
        var description: String {
            if signal != 0 {
                let name = cposix_signal_abbreviation(signal).map { "SIG" + String(cString: $0) } ?? "signal \(signal)"
                return "crashed (\(name))"
            }
            return "exited with status \(exitStatus)"
        }
    }

    private func reap() -> ChildEnd {
        let child = lock.withLock { state.child }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return ChildEnd(status: status)
    }

    private func killAndReap() -> ChildEnd {
        let child = lock.withLock { state.child }
        kill(child, SIGKILL)
        return reap()
    }

    private func record(_ line: String) {
        lock.withLock { state.fate.events.append(line) }
        report(line)
    }

    private func report(_ line: String) { printError("plugin \(line)") }

    private static func now() -> Double { monotonicSeconds() }
}

/// A semaphore with a timeout in seconds (Dispatch's, behind a small name).
private struct DispatchSemaphoreBox: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func signal() { semaphore.signal() }
    func wait(seconds: Double) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}
