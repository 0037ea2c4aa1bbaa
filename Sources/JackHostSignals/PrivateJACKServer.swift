import FoundationEssentials
import Glibc
import JackHost

/// A private `jackd` this process starts and stops: for tests, CI and jackhost's
/// embedded first-use mode. It never touches the user's default server.
///
/// The server runs `--no-realtime` with the dummy backend unless told otherwise,
/// under a unique name. ``stop()`` sends SIGTERM to the pid it started and, when
/// jackd ignores it (as it may with internal clients loaded), SIGKILL after a grace period.
public final class PrivateJACKServer: @unchecked Sendable {
    // @unchecked: start() and stop() are called from one thread at a time (documented); the child process is itself thread-safe.
    /// The server name clients pass with `--server` / `JackServerName`.
    public let name: String
    /// The dummy backend's sample rate.
    public let sampleRate: Int
    /// The buffer size in frames (jackd's `-p`).
    public let bufferSize: Int
    /// The number of physical capture ports (`-C`), the reported channel count.
    public let captureChannels: Int
    /// The number of physical playback ports (`-P`).
    public let playbackChannels: Int
    /// Run jackd in synchronous mode (`-S`): each cycle waits for every client, so a client
    /// that is late on a loaded machine delays the cycle instead of leaving stale buffers.
    /// Tests use it for deterministic bit-exact checks.
    public let synchronous: Bool
    /// Run jackd with real-time scheduling (`-R -P 70`, where the machine allows it) instead of
    /// `--no-realtime`: for tests that judge timing or count xruns, and for tests that need the
    /// asynchronous graph to run other clients on time while one of them misbehaves.
    public let realtime: Bool
    /// The running jackd, nil when stopped. Package-wide so that JackHostTesting's `crash()`
    /// can kill it without the shipping binary carrying fault injection.
    package var process: ChildProcess?
    private let logURL: URL

    /// Describes a server; nothing runs until ``start(timeout:)``.
    public init(
        name: String = PrivateJACKServer.uniqueName(prefix: "jackhost"), sampleRate: Int = 48000,
        bufferSize: Int = 256, captureChannels: Int = 4, playbackChannels: Int = 2,
        synchronous: Bool = false, realtime: Bool = false
    ) {
        self.synchronous = synchronous
        self.realtime = realtime
        self.name = name
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize
        self.captureChannels = captureChannels
        self.playbackChannels = playbackChannels
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(name).jackd.log")
    }

    deinit { stop() }

    /// A server name no other process uses: prefix, pid and a random suffix.
    public static func uniqueName(prefix: String) -> String {
        "\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max) % 1_000_000)"
    }

    /// The process id of the running jackd, or nil.
    public var processIdentifier: Int32? { process.map { $0.processIdentifier } }

    /// What jackd printed, for diagnosing a failed start.
    public var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Starts jackd and waits until it accepts clients.
    /// - Throws: ``JackError/serverStartFailed(reason:)`` when jackd is missing, exits, or is not ready in time.
    public func start(timeout: Double = 10) throws {
        do {
            try launch(timeout: timeout)
        } catch JackError.serverStartFailed(let reason) where log.contains("Too many servers already active") {
            // Killed servers with other names hold every registry slot: free the stale ones
            // (servers no process runs any more) and try once more.
            let freed = Self.reclaimStaleRegistrySlots()
            guard freed > 0 else { throw JackError.serverStartFailed(reason: reason) }
            try launch(timeout: timeout)
        }
    }

    private func launch(timeout: Double) throws {
        guard process == nil else { return }
        guard let jackd = PrivateJACKServer.findExecutable("jackd") else {
            throw JackError.serverStartFailed(reason: "jackd is not installed; run scripts/setup or `apt-get install jackd2`")
        }
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let jackdArguments =
            ["-n", name] + (realtime ? ["-R", "-P", "70"] : ["--no-realtime"]) + (synchronous ? ["-S"] : []) + [
                "-d", "dummy", "-r", String(sampleRate),
                "-p", String(bufferSize), "-C", String(captureChannels), "-P", String(playbackChannels),
            ]
        var executable = jackd
        var arguments = jackdArguments
        if let setpriv = PrivateJACKServer.findExecutable("setpriv") {
            // If this process dies without stopping the server (a crash, SIGKILL), the kernel
            // kills jackd too: setpriv sets PR_SET_PDEATHSIG and then execs jackd in place.
            executable = setpriv
            arguments = ["--pdeathsig", "KILL", "--", jackd] + jackdArguments
        }
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_NO_START_SERVER"] = "1"
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: executable, arguments: arguments, environment: environment,
                outputPath: logURL.path)
        } catch {
            throw JackError.serverStartFailed(reason: "could not run \(jackd): \(error)")
        }
        self.process = process
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !process.isRunning {
                self.process = nil
                throw JackError.serverStartFailed(reason: "jackd exited with status \(process.terminationStatus ?? -1): \(lastLine(of: self.log))")
            }
            if PrivateJACKServer.isRunning(name) { return }
            usleep(50_000)
        }
        stop()
        throw JackError.serverStartFailed(reason: "jackd -n \(name) did not accept clients within \(timeout) s")
    }

    /// Stops the server by the pid that was started: SIGTERM, then SIGKILL after `grace` seconds.
    public func stop(grace: Double = 3) {
        guard let process else { return }
        self.process = nil
        process.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
            // A killed jackd leaves its registry entry behind: free it now, not at the ninth start.
            Self.reclaimRegistrySlot(name: name)
        }
    }

    /// Frees jackd's registry entry for a server that was killed (SIGKILL), by starting the
    /// same name once and stopping it cleanly.
    ///
    /// jackd's registry holds eight servers and reuses an entry only for the same name, so
    /// crashed servers with unique names eventually make every start fail with "Too many
    /// servers already active".
    public static func reclaimRegistrySlot(name: String) {
        let server = PrivateJACKServer(name: name, captureChannels: 1, playbackChannels: 1)
        // launch, not start: a reclaim must never itself go reclaiming.
        try? server.launch(timeout: 5)
        server.stop()
    }

    /// Frees the registry entries of servers no process runs any more (as `scripts/reclaim-jack-slots`
    /// does); returns how many it freed. Names come from the registry itself ("jack-0:NAME:").
    @discardableResult
    public static func reclaimStaleRegistrySlots() -> Int {
        guard let registry = FileManager.default.contents(atPath: "/dev/shm/jack-shm-registry") else { return 0 }
        // Printable runs of the binary registry, as `strings` finds them.
        var names: [String] = []
        var run: [UInt8] = []
        for byte in registry + [0] {
            if (0x20..<0x7F).contains(byte) {
                run.append(byte)
                continue
            }
            let text = String(decoding: run, as: UTF8.self)
            run.removeAll()
            guard text.hasPrefix("jack-"), text.hasSuffix(":"), let colon = text.firstIndex(of: ":") else { continue }
            let name = String(text[text.index(after: colon)..<text.index(before: text.endIndex)])
            if !name.isEmpty { names.append(name) }
        }
        let running = runningServerNames()
        var freed = 0
        for name in names where !running.contains(name) {
            reclaimRegistrySlot(name: name)
            freed += 1
        }
        return freed
    }

    /// The `-n NAME` of every jackd process on the machine.
    private static func runningServerNames() -> Set<String> {
        var names: Set<String> = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.allSatisfy(\.isNumber) {
            guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard words.contains(where: { $0.hasSuffix("jackd") }), let flag = words.firstIndex(of: "-n"), flag + 1 < words.count else { continue }
            names.insert(words[flag + 1])
        }
        return names
    }

    /// Whether a server with this name (nil: the default) accepts clients right now.
    ///
    /// Opens and closes a short-lived client; never starts a server.
    public static func isRunning(_ server: String?) -> Bool {
        guard let probe = try? JackClient(name: "jackhost-probe-\(getpid())", server: server) else { return false }
        probe.close()
        return true
    }

    /// The full path of an executable on `PATH`, or nil.
    public static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    private func lastLine(of text: String) -> String {
        text.split(separator: "\n").last.map(String.init) ?? "no output"
    }
}
