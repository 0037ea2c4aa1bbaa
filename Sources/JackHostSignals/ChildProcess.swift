// ChildProcess.swift
//
// Runs another program (jackd, for PrivateJACKServer) with posix_spawn: its output appended to
// a log file, its input from /dev/null, and waited for by pid. It replaces Foundation's
// Process so that the library needs FoundationEssentials only (see Lock.swift).

import JackHost

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process started by this one.
package final class ChildProcess: @unchecked Sendable {
    // @unchecked: the pid is immutable; the exit status is cached under `lock`.
    /// The child's process id.
    package let processIdentifier: pid_t
    private let lock = Lock()
    /// The wait status, once the child has been reaped.
    private var waitStatus: Int32?

    /// Starts `executable` (a full path) with `arguments` and exactly `environment`, its
    /// stdout and stderr appended to `outputPath` (created if missing), stdin from /dev/null.
    /// - Throws: the `errno` of the failure, as a message, when the program cannot be started.
    package init(executable: String, arguments: [String], environment: [String: String], outputPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        // strdup'ed C strings, NULL-terminated, freed after the spawn (the child has its copy).
        func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] { strings.map { strdup($0) } + [nil] }
        let argv = cStrings([executable] + arguments)
        let envp = cStrings(environment.map { "\($0.key)=\($0.value)" })
        defer { (argv + envp).forEach { free($0) } }

        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else {
            throw ChildProcessError(message: "could not run \(executable): \(String(cString: strerror(status)))")
        }
        processIdentifier = pid
    }

    deinit {
        if isRunning {
            signal(SIGKILL)
            waitUntilExit()
        }
    }

    /// Whether the child has not exited yet (reaps it without blocking when it has).
    package var isRunning: Bool {
        lock.withLock {
            if waitStatus != nil { return false }
            var status: Int32 = 0
            if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier { waitStatus = status }
            return waitStatus == nil
        }
    }

    /// The exit code, or 128 + the signal number when a signal ended it; nil while it runs.
    package var terminationStatus: Int32? {
        guard !isRunning, let status = lock.withLock({ waitStatus }) else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros, which Swift does not import.
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Sends `signal` to the child (nothing once it has been reaped: its pid may be reused).
    package func signal(_ signal: Int32) {
        lock.withLock { if waitStatus == nil { _ = kill(processIdentifier, signal) } }
    }

    /// Blocks until the child exits.
    package func waitUntilExit() {
        lock.withLock {
            guard waitStatus == nil else { return }
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
            waitStatus = status
        }
    }
}

/// Why a child process could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    /// One line naming the program and the system's reason.
    package let message: String
    package var description: String { message }
}
