import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Whether a missing environment (packages, root) must fail rather than skip: CI sets it.
let environmentsRequired = ProcessInfo.processInfo.environment["JACKHOST_REQUIRE_ENVIRONMENTS"] == "1"

/// Skips loudly, or fails when ``environmentsRequired``.
func skipEnvironment(_ reason: String) throws -> Never {
    let line = "SKIPPED LOUDLY: \(reason)"
    print(String(repeating: "!", count: line.count))
    print(line)
    print(String(repeating: "!", count: line.count))
    if environmentsRequired { XCTFail("required environment missing: \(reason)") }
    throw XCTSkip(reason)
}

/// A long-running child process that is always stopped (SIGTERM, then SIGKILL).
final class Daemon {
    let process = Process()
    let name: String
    let logURL: URL

    init(_ name: String, _ executable: String, _ arguments: [String], environment: [String: String], logDirectory: URL) throws {
        self.name = name
        logURL = logDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let log = try FileHandle(forWritingTo: logURL)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func stop(grace: Double = 3) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// A headless PipeWire in a private runtime directory: dbus, pipewire and wireplumber.
/// JACK clients run under `pw-jack`, so they load PipeWire's libjack.
final class PipeWireEnvironment {
    let runtimeDirectory: URL
    let environment: [String: String]
    private var daemons: [Daemon] = []

    static let tools = ["/usr/bin/pw-jack", "/usr/bin/pipewire", "/usr/bin/wireplumber", "/usr/bin/dbus-daemon", "/usr/bin/pw-cli"]

    /// The network namespace pipewire runs in (nil: the test's own). Its socket is a path in
    /// the runtime directory, which namespaces do not separate, so clients run anywhere.
    let namespace: String?

    /// Starts dbus, pipewire and, unless `sessionManager` is false, wireplumber (see
    /// ``startSessionManager()``: a session that brings it up late). With `namespace`, pipewire
    /// runs in that network namespace (for its network modules); `configuration`, when given,
    /// is written to `pipewire.conf.d/` of a private XDG_CONFIG_HOME, which pipewire reads on top
    /// of its own pipewire.conf.
    init(sessionManager: Bool = true, namespace: String? = nil, configuration: String? = nil) throws {
        self.namespace = namespace
        for tool in PipeWireEnvironment.tools where !FileManager.default.isExecutableFile(atPath: tool) {
            try skipEnvironment("PipeWire suite: \(tool) is missing; run scripts/setup --environments")
        }
        runtimeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jhpw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: runtimeDirectory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtimeDirectory.path)/bus"
        environment["JACK_NO_START_SERVER"] = "1"
        environment.removeValue(forKey: "JACK_DEFAULT_SERVER")
        if let configuration {
            let directory = runtimeDirectory.appendingPathComponent("config/pipewire/pipewire.conf.d")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try configuration.write(to: directory.appendingPathComponent("jackhost-test.conf"), atomically: true, encoding: .utf8)
            environment["XDG_CONFIG_HOME"] = runtimeDirectory.appendingPathComponent("config").path
        }
        self.environment = environment
        do {
            daemons.append(
                try Daemon(
                    "dbus", "/usr/bin/dbus-daemon",
                    ["--session", "--address=unix:path=\(runtimeDirectory.path)/bus", "--nofork"],
                    environment: environment, logDirectory: runtimeDirectory))
            guard JACKFixture.waitUntil(timeout: 5, { FileManager.default.fileExists(atPath: runtimeDirectory.path + "/bus") }) else {
                throw JackError.serverStartFailed(reason: "dbus did not start: \(daemons[0].log)")
            }
            let launcher = namespace.map { ["netns", "exec", $0, "/usr/bin/pipewire"] }
            daemons.append(
                try Daemon(
                    "pipewire", launcher == nil ? "/usr/bin/pipewire" : "/usr/sbin/ip", launcher ?? [],
                    environment: environment, logDirectory: runtimeDirectory))
            // wireplumber gives up at once ("Failed to connect to PipeWire") when it starts before
            // pipewire's socket exists, which a pipewire started through `ip netns exec` made happen.
            let socket = runtimeDirectory.appendingPathComponent("pipewire-0").path
            guard JACKFixture.waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: socket) }) else {
                throw JackError.serverStartFailed(reason: "pipewire made no socket: \(daemons[1].log)")
            }
            if sessionManager { try startSessionManager() }
            let ready = JACKFixture.waitUntil(timeout: 15) {
                ((try? self.run("jack_lsp", [], timeout: 5))?.status ?? 1) == 0
            }
            guard ready else { throw JackError.serverStartFailed(reason: "PipeWire's JACK did not answer: \(daemons[1].log)") }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// PipeWire's process id, while it runs.
    var pipewirePid: pid_t? { daemons.first { $0.name == "pipewire" && $0.process.isRunning }?.process.processIdentifier }

    /// PipeWire's own log (warnings and errors).
    var pipewireLog: String { daemons.first { $0.name == "pipewire" }?.log ?? "" }

    /// The last lines of every daemon's log, for failure messages.
    var diagnostics: String {
        daemons.map { "\($0.name):\n" + $0.log.split(separator: "\n").suffix(10).joined(separator: "\n") }.joined(separator: "\n")
    }

    /// Starts wireplumber, which among other things creates PipeWire's "default" metadata
    /// object: until then no JACK client can set port metadata.
    func startSessionManager() throws {
        daemons.append(try Daemon("wireplumber", "/usr/bin/wireplumber", [], environment: environment, logDirectory: runtimeDirectory))
    }

    /// Stops wireplumber, pipewire and dbus, and removes the runtime directory.
    func stop() {
        daemons.reversed().forEach { $0.stop() }
        daemons = []
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    /// Runs a JACK tool under pw-jack and waits for it.
    @discardableResult
    func run(_ tool: String, _ arguments: [String], timeout: Double = 30) throws -> JACKFixture.ToolResult {
        let path = tool.hasPrefix("/") ? tool : (PrivateJACKServer.findExecutable(tool) ?? tool)
        return try JACKFixture.run("/usr/bin/pw-jack", [path] + arguments, timeout: timeout, environment: environment)
    }

    /// Starts a JACK tool under pw-jack in the background.
    func start(_ name: String, _ tool: String, _ arguments: [String]) throws -> Daemon {
        try Daemon(name, "/usr/bin/pw-jack", [tool] + arguments, environment: environment, logDirectory: runtimeDirectory)
    }

    /// What PipeWire's JACK reports for rate and period, read with JACK's own tools.
    func reportedRateAndPeriod() throws -> (rate: Int, period: Int) {
        let rate = try run("jack_samplerate", []).stdout.filter(\.isNumber)
        let period = try run("jack_bufsize", []).stdout.filter(\.isNumber)
        return (Int(rate) ?? -1, Int(period) ?? -1)
    }
}

/// A netjack2 master and slave on two network namespaces joined by a veth pair, so the two
/// "machines" have separate network stacks. All traffic stays on that pair (unicast).
final class NetJackEnvironment {
    let masterNamespace: String
    let slaveNamespace: String
    /// The master's server name; a restarted master gets a new one (see killMaster).
    private(set) var masterServer: String
    private var masterGeneration = 1
    let slaveServer: String
    let slaveNetName = "jhslave"
    let masterAddress = "10.77.0.1"
    let captureChannels: Int
    private let logDirectory: URL
    private var master: Daemon?
    private var slave: Daemon?
    private let suffix = "\(getpid() % 100000)"

    init(captureChannels: Int = 2) throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/sbin/ip")
        else {
            try skipEnvironment("netjack2 suite: needs root and iproute2 for network namespaces")
        }
        self.captureChannels = captureChannels
        masterNamespace = "jhmaster\(suffix)"
        slaveNamespace = "jhslave\(suffix)"
        masterServer = "jhnetmaster\(suffix)"
        slaveServer = "jhnetslave\(suffix)"
        logDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jhnet-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let ip = FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip"
        let veth = ("jhva\(suffix)", "jhvb\(suffix)")
        let steps: [[String]] = [
            ["netns", "add", masterNamespace], ["netns", "add", slaveNamespace],
            ["link", "add", veth.0, "type", "veth", "peer", "name", veth.1],
            ["link", "set", veth.0, "netns", masterNamespace], ["link", "set", veth.1, "netns", slaveNamespace],
            ["-n", masterNamespace, "addr", "add", "\(masterAddress)/30", "dev", veth.0],
            ["-n", slaveNamespace, "addr", "add", "10.77.0.2/30", "dev", veth.1],
            ["-n", masterNamespace, "link", "set", veth.0, "up"], ["-n", slaveNamespace, "link", "set", veth.1, "up"],
            ["-n", masterNamespace, "link", "set", "lo", "up"], ["-n", slaveNamespace, "link", "set", "lo", "up"],
        ]
        for step in steps {
            let result = try JACKFixture.run(ip, step)
            if result.status != 0 {
                teardownNamespaces()
                try skipEnvironment("netjack2 suite: `ip \(step.joined(separator: " "))` failed: \(result.stderr)")
            }
        }
        do {
            try startMaster()
            slave = try Daemon(
                "slave", "/usr/sbin/ip",
                [
                    // Synchronous (-S): each cycle waits for every client, so every client of the
                    // slave reads the same buffers in the same cycle, and a recording that differs
                    // from the generator differs the same way in every recorder (netjack2's own
                    // repeated, skipped or torn periods) unless the recorder itself went wrong.
                    "netns", "exec", slaveNamespace, "jackd", "-n", slaveServer, "--no-realtime", "-S",
                    "-d", "net", "-a", masterAddress, "-n", slaveNetName,
                    "-C", String(captureChannels), "-P", "2",
                ],
                environment: ProcessInfo.processInfo.environment, logDirectory: logDirectory)
            // Under load the first handshake can fail (the slave joins, times out on a late packet
            // and restarts its driver): a fresh master, as after a hung netmanager, twice more.
            var joined = JACKFixture.waitUntil(timeout: 20, { self.masterPorts().contains("\(self.slaveNetName):to_slave_1") })
            if !joined {
                killMaster()
                joined = try restartMasterUntilSlaveRejoins(attempts: 2, timeout: 20).rejoined
            }
            guard joined else {
                throw JackError.serverStartFailed(reason: "the slave never joined the master (3 masters): \(slave?.log ?? "")")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Starts the master: a dummy jackd plus the netmanager internal client, unicast only.
    func startMaster() throws {
        master = try Daemon(
            "master", "/usr/sbin/ip",
            [
                // Real-time (-R): the slave times out and restarts its driver when the master's
                // packets come late, which a busy machine made a master without real-time
                // scheduling do (the loaded suite's first run: "Recv connection lost error").
                "netns", "exec", masterNamespace, "jackd", "-n", masterServer,
                "-R", "-d", "dummy", "-r", "48000", "-p", "256", "-C", "2", "-P", "2",
            ],
            environment: ProcessInfo.processInfo.environment, logDirectory: logDirectory)
        guard JACKFixture.waitUntil(timeout: 10, { PrivateJACKServer.isRunning(self.masterServer) }) else {
            throw JackError.serverStartFailed(reason: "master jackd: \(master?.log ?? "")")
        }
        let load = try runInMaster("jack_load", ["-s", masterServer, "netmanager", "-i", "-a \(masterAddress)"])
        guard load.status == 0 else { throw JackError.serverStartFailed(reason: "netmanager: \(load.stderr)") }
    }

    /// Kills the master (a jackd with netmanager loaded may ignore SIGTERM, so SIGKILL).
    func killMaster() {
        if let master {
            kill(master.process.processIdentifier, SIGKILL)
            master.process.waitUntilExit()
        }
        master = nil
        let killed = masterServer
        PrivateJACKServer.reclaimRegistrySlot(name: killed)
        // The next master gets a new name. Under the old one, a new jackd sometimes picked up
        // the killed one's leftovers in /dev/shm (the slave's futex "already deallocated",
        // then "Cannot create new client"), and the slave never rejoined.
        masterGeneration += 1
        masterServer = "jhnetmaster\(suffix)-\(masterGeneration)"
        removeSemaphores(of: killed)
    }

    /// Starts the master again and waits for the slave to rejoin it; tries again with a fresh
    /// master (up to `attempts` in all) when the two never finish their handshake. jack2's
    /// netmanager sometimes hangs after "Sending parameters" to a slave that restarted its
    /// driver, with the master's server refusing clients and the slave "Waiting for a master".
    /// Returns whether the slave rejoined, and how many masters it took.
    func restartMasterUntilSlaveRejoins(attempts: Int = 3, timeout: Double = 15) throws -> (rejoined: Bool, masters: Int) {
        for attempt in 1...attempts {
            if attempt > 1 { killMaster() }
            try startMaster()
            if JACKFixture.waitUntil(timeout: timeout, { self.masterPorts().contains("\(self.slaveNetName):to_slave_1") }) {
                return (true, attempt)
            }
        }
        return (false, attempts)
    }

    /// Deletes jack2's futex files of a dead server (`/dev/shm/jack_sem.UID_SERVER_CLIENT`).
    private func removeSemaphores(of server: String) {
        let shm = "/dev/shm"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: shm)) ?? []
        where entry.hasPrefix("jack_sem.") && entry.contains("_\(server)_") {
            try? FileManager.default.removeItem(atPath: "\(shm)/\(entry)")
        }
    }

    /// The last lines of the master's and the slave's jackd logs, for failure messages.
    var diagnostics: String {
        func tail(_ text: String?) -> String { (text ?? "(none)").split(separator: "\n").suffix(15).joined(separator: "\n") }
        return "master log:\n\(tail(master?.log))\nslave log:\n\(tail(slave?.log))"
    }

    /// The master's ports; none while it does not answer (a master hung in jack2's netjack
    /// handshake, which ``restartMasterUntilSlaveRejoins(attempts:timeout:)`` replaces).
    func masterPorts() -> [String] {
        (try? JACKFixture.run("jack_lsp", ["-s", masterServer], timeout: 5, timeoutFails: false).stdout.split(separator: "\n").map(String.init)) ?? []
    }

    func runInMaster(_ tool: String, _ arguments: [String], timeout: Double = 30) throws -> JACKFixture.ToolResult {
        try JACKFixture.run("/usr/sbin/ip", ["netns", "exec", masterNamespace, tool] + arguments, timeout: timeout)
    }

    func runInSlave(_ tool: String, _ arguments: [String], timeout: Double = 60) throws -> JACKFixture.ToolResult {
        try JACKFixture.run("/usr/sbin/ip", ["netns", "exec", slaveNamespace, tool] + arguments, timeout: timeout)
    }

    func startInMaster(_ name: String, _ tool: String, _ arguments: [String]) throws -> Daemon {
        try Daemon(
            name, "/usr/sbin/ip", ["netns", "exec", masterNamespace, tool] + arguments,
            environment: ProcessInfo.processInfo.environment, logDirectory: logDirectory)
    }

    func startInSlave(_ name: String, _ tool: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Daemon {
        try Daemon(
            name, "/usr/sbin/ip", ["netns", "exec", slaveNamespace, tool] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(extra) { _, new in new }, logDirectory: logDirectory)
    }

    /// Starts `jack_capture` (Debian's jack-capture, an independent recorder) on the slave,
    /// recording the slave's capture ports to `path` as 32-bit float, and waits until it is
    /// connected to all of them. Stop it with SIGINT; it finalises its file on the way out.
    /// Skips (or fails, where environments are required) when jack_capture is missing.
    func startIndependentRecorder(_ name: String, to path: String) throws -> Daemon {
        guard let tool = PrivateJACKServer.findExecutable("jack_capture") else {
            try skipEnvironment("netjack2 suite: jack_capture is missing; run scripts/setup --environments")
        }
        let ports = (1...captureChannels).flatMap { ["--port", "system:capture_\($0)"] }
        // -d bounds it if the test never stops it; -ns: no console to read; -dc: no meter.
        let recorder = try startInSlave(
            name, tool, ["-ns", "-dc", "-b", "FLOAT", "-d", "120"] + ports + [path],
            environment: ["JACK_DEFAULT_SERVER": slaveServer, "JACK_NO_START_SERVER": "1"])
        let connected = JACKFixture.waitUntil(timeout: 10) {
            (1...self.captureChannels).allSatisfy { c in
                let lines = (try? self.runInSlave("jack_lsp", ["-s", self.slaveServer, "-c", "system:capture_\(c)"]).stdout) ?? ""
                return lines.contains("jack_capture")
            }
        }
        guard connected else { throw JackError.serverStartFailed(reason: "jack_capture never connected: \(recorder.log)") }
        return recorder
    }

    /// Stops an independent recorder started by ``startIndependentRecorder(_:to:)`` with SIGINT
    /// and waits (up to `timeout` seconds) for it to finish writing; returns whether it did.
    @discardableResult
    func stopIndependentRecorder(_ recorder: Daemon, timeout: Double = 15) -> Bool {
        guard recorder.process.isRunning else { return true }
        kill(recorder.process.processIdentifier, SIGINT)
        return JACKFixture.waitUntil(timeout: timeout) { !recorder.process.isRunning }
    }

    /// Stops both servers and removes the namespaces (which removes the veth pair).
    func stop() {
        slave?.stop()
        slave = nil
        if master != nil { killMaster() }
        PrivateJACKServer.reclaimRegistrySlot(name: slaveServer)
        teardownNamespaces()
        try? FileManager.default.removeItem(at: logDirectory)
    }

    private func teardownNamespaces() {
        _ = try? JACKFixture.run("/usr/sbin/ip", ["netns", "del", masterNamespace])
        _ = try? JACKFixture.run("/usr/sbin/ip", ["netns", "del", slaveNamespace])
    }
}
