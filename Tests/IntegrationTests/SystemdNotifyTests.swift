import Foundation
import JackHost
import JackHostTesting
import XCTest

/// jackhost under systemd (`Type=notify`): the sd_notify datagrams it sends to `$NOTIFY_SOCKET`,
/// received here on a test socket, as systemd would receive them. Each run is against a private
/// server with sine generators of known levels.
final class SystemdNotifyTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-notify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Two generators: `jhloud:out_1` at amplitude 0.5 (-6.0 dBFS) and `jhsoft:out_1` at 0.1 (-20.0 dBFS).
    private func withGenerators<T>(_ body: (PrivateJACKServer) throws -> T) throws -> T {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let loud = try TestSignalSource(name: "jhloud", server: server.name, channels: 1, signal: .sine(frequency: 1000, amplitude: 0.5))
            defer { loud.stop() }
            let soft = try TestSignalSource(name: "jhsoft", server: server.name, channels: 1, signal: .sine(frequency: 1000, amplitude: 0.1))
            defer { soft.stop() }
            return try body(server)
        }
    }

    private static let connections = ["--connect", "jhloud:out_1", "--connect", "jhsoft:out_1"]

    /// Runs jackhost to its end with `environment` added, and returns its status, stderr and pid.
    private func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String, pid: pid_t) {
        let child = try RunningJackhost(arguments: arguments, directory: workDirectory, environment: environment)
        let status = child.wait(timeout: 30)
        return (status, child.stderr, child.process.processIdentifier)
    }

    // MARK: What systemd hears

    /// A 2 s take: READY=1 first, a watchdog ping every WATCHDOG_USEC/2 (0.2 s), status lines with
    /// each channel's peak and the frames recorded, STOPPING=1 last; every datagram from jackhost itself.
    func testReadyWatchdogStatusAndStoppingOnAPathSocket() throws {
        let listener = try NotifyListener(path: workDirectory.appendingPathComponent("notify").path)
        let result = try withGenerators { server in
            try run(
                ["record", workDirectory.appendingPathComponent("take.wav").path, "-s", server.name, "-d", "2", "--quiet"] + Self.connections,
                environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"])
        }
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("warning"), result.stderr)
        let messages = listener.stop()
        let lines = messages.flatMap(\.lines)
        XCTAssertEqual(messages.first?.lines.first, "READY=1", "\(lines)")
        XCTAssertEqual(messages.last?.lines.first, "STOPPING=1", "\(lines)")
        XCTAssertEqual(lines.filter { $0 == "READY=1" }.count, 1)
        XCTAssertEqual(lines.filter { $0 == "STOPPING=1" }.count, 1)
        XCTAssertEqual(Set(messages.map(\.senderPID)), [result.pid], "only jackhost's own process notifies")

        // Pings: about one per 0.2 s over 2 s, never more than the 0.4 s timeout apart.
        let pings = messages.filter { $0.lines.contains("WATCHDOG=1") }.map(\.time)
        XCTAssertGreaterThanOrEqual(pings.count, 7, "\(lines)")
        XCTAssertLessThanOrEqual(pings.count, 14, "\(lines)")
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        XCTAssertLessThan(gaps.max() ?? 1, 0.4, "\(gaps)")
        XCTAssertGreaterThan(gaps.min() ?? 0, 0.15, "\(gaps)")

        // Status: at most once a second, the generators' peaks per channel, and frames recorded.
        let statuses = lines.filter { $0.hasPrefix("STATUS=") }
        let levels = statuses.filter { $0.contains("peak dBFS") }
        XCTAssertGreaterThanOrEqual(levels.count, 1, "\(statuses)")
        for line in levels {
            XCTAssertTrue(line.hasPrefix("STATUS=peak dBFS -6.0 -20.0 | "), line)
            XCTAssertTrue(line.contains(" frames recorded (0:00:0"), line)
            XCTAssertTrue(line.contains("xruns ") && line.contains("dropped "), line)
        }
        XCTAssertLessThanOrEqual(statuses.count, 5, "\(statuses)")
        XCTAssertFalse(lines.contains { $0.contains("\n") })
    }

    /// An abstract socket (`@name`, as some containers and older systemd hand out) works the same.
    func testAbstractSocket() throws {
        let listener = try NotifyListener(abstractName: "jhtest-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let result = try withGenerators { server in
            try run(
                ["meter", "-s", server.name, "-d", "1.5", "--quiet"] + Self.connections,
                environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"])
        }
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = listener.stop().flatMap(\.lines)
        XCTAssertEqual(lines.first, "READY=1", "\(lines)")
        XCTAssertGreaterThanOrEqual(lines.filter { $0 == "WATCHDOG=1" }.count, 5, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("STATUS=peak dBFS -6.0 -20.0 | ") && $0.contains("frames captured") }, "\(lines)")
        XCTAssertTrue(lines.contains("STOPPING=1"), "\(lines)")
    }

    /// WATCHDOG_PID names the process systemd watches; when it is another one, jackhost never pings.
    func testWatchdogForAnotherProcessSendsNoPings() throws {
        let listener = try NotifyListener(path: workDirectory.appendingPathComponent("notify").path)
        let result = try withGenerators { server in
            try run(
                ["meter", "-s", server.name, "-d", "1.2", "--quiet"] + Self.connections,
                environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"])
        }
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = listener.stop().flatMap(\.lines)
        XCTAssertTrue(lines.contains("READY=1") && lines.contains("STOPPING=1"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("STATUS=peak dBFS") }, "\(lines)")
        XCTAssertFalse(lines.contains("WATCHDOG=1"), "\(lines)")
    }

    /// A wedged capture lets the watchdog fire: with the server stopped (SIGSTOP) jackhost gets no
    /// cycles, and its pings stop while its status lines go on. Waiting for a server that went away
    /// (`--reconnect`) is not wedged: the pings go on, and the status says what it waits for.
    func testPingsStopWhileNoFramesArriveAndContinueWhileWaitingForTheServer() throws {
        let listener = try NotifyListener(path: workDirectory.appendingPathComponent("notify").path)
        var pid: pid_t = 0
        let (status, stderr, frozen) = try withGenerators { server in
            let child = try RunningJackhost(
                arguments: ["meter", "-s", server.name, "--quiet", "--reconnect"] + Self.connections, directory: workDirectory,
                environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"])
            pid = child.process.processIdentifier
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { listener.messages.contains { $0.lines.contains("WATCHDOG=1") } })
            let serverPID = try XCTUnwrap(server.processIdentifier)
            // Frozen for 1.5 s: no cycles, so no pings.
            kill(serverPID, SIGSTOP)
            let frozenFrom = monotonicNow()
            usleep(1_500_000)
            let frozen = (frozenFrom + 0.45, monotonicNow())
            kill(serverPID, SIGCONT)
            usleep(500_000)
            // Gone: jackhost waits for it, and pings.
            server.stop()
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 10) { listener.messages.contains { $0.lines.contains { $0.contains("waiting for the JACK server") } } }
            )
            usleep(1_200_000)
            child.signal(SIGINT)
            return (child.wait(timeout: 10), child.stderr, frozen)
        }
        XCTAssertEqual(status, 0, stderr)
        let messages = listener.stop()
        XCTAssertEqual(Set(messages.map(\.senderPID)), [pid])
        let pingTimes = messages.filter { $0.lines.contains("WATCHDOG=1") }.map(\.time)
        // The first ping after the freeze started may fall up to one interval (0.2 s) plus a tick into it.
        XCTAssertTrue(pingTimes.allSatisfy { $0 < frozen.0 || $0 > frozen.1 }, "pings while frozen: \(pingTimes) in \(frozen)")
        let statusWhileFrozen = messages.filter { $0.time > frozen.0 && $0.time < frozen.1 && $0.lines.contains { $0.hasPrefix("STATUS=") } }
        XCTAssertGreaterThanOrEqual(statusWhileFrozen.count, 1, "the main loop ran on while the server was frozen")
        let waiting = try XCTUnwrap(messages.firstIndex { $0.lines.contains { $0.contains("waiting for the JACK server") } })
        let pingsWhileWaiting = messages[waiting...].filter { $0.lines.contains("WATCHDOG=1") }.count
        XCTAssertGreaterThanOrEqual(pingsWhileWaiting, 4, "\(messages.map(\.lines))")
        XCTAssertEqual(messages.last?.lines.first, "STOPPING=1")
    }

    /// A child jackhost (an isolated plugin's process) inherits no NOTIFY_SOCKET: it never says
    /// READY=1 as if it were the service.
    func testIsolatedPluginProcessesDoNotNotify() throws {
        let source = workDirectory.appendingPathComponent("quiet.c")
        try PluginIsolationTests.faultySource.write(to: source, atomically: true, encoding: .utf8)
        let header = ExamplePlugins.repositoryRoot.appendingPathComponent("Sources/CJackHostPlugin/include").path
        let plugin = workDirectory.appendingPathComponent("libQuiet.so").path
        let built = try JACKFixture.run("cc", ["-shared", "-fPIC", "-O1", "-I", header, source.path, "-o", plugin])
        XCTAssertEqual(built.status, 0, built.stderr)
        let listener = try NotifyListener(path: workDirectory.appendingPathComponent("notify").path)
        let result = try withGenerators { server in
            try run(
                [
                    "run", "--record", workDirectory.appendingPathComponent("take.wav").path, "--plugin", "\(plugin):kind=1,after=1000000000",
                    "-s", server.name, "-d", "1.5", "--quiet",
                ] + Self.connections,
                environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"])
        }
        XCTAssertEqual(result.status, 0, result.stderr)
        let messages = listener.stop()
        XCTAssertEqual(messages.flatMap(\.lines).filter { $0 == "READY=1" }.count, 1)
        XCTAssertEqual(Set(messages.map(\.senderPID)), [result.pid])
    }

    /// A NOTIFY_SOCKET nobody listens on: one warning, and the take is unharmed.
    func testUnreachableSocketIsOneWarning() throws {
        let result = try withGenerators { server in
            try run(
                ["record", workDirectory.appendingPathComponent("take.wav").path, "-s", server.name, "-d", "1", "--quiet"] + Self.connections,
                environment: ["NOTIFY_SOCKET": workDirectory.appendingPathComponent("nobody").path, "WATCHDOG_USEC": "200000"])
        }
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "cannot notify systemd").count - 1, 1, result.stderr)
        XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(workDirectory.appendingPathComponent("take.wav").path)?.frames, 48000)
    }

    // MARK: The example unit

    /// Examples/systemd's unit is Type=notify with a watchdog, and every "%" meant for jackhost
    /// is written "%%": a single one is a systemd specifier (%Y is the unit file's directory).
    func testExampleUnitEscapesItsTemplate() throws {
        let unit = try String(
            contentsOf: ExamplePlugins.repositoryRoot.appendingPathComponent("Examples/systemd/jackhost-logger.service"), encoding: .utf8)
        let settings = unit.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        for required in ["Type=notify", "Restart=on-failure", "ExecStart=%h/.local/bin/jackhost record "] {
            XCTAssertTrue(settings.contains { $0.hasPrefix(required) }, required)
        }
        XCTAssertTrue(settings.contains { $0.hasPrefix("WatchdogSec=") })
        let commands = unit.split(separator: "\n").filter { $0.contains("ExecStart=") }
        XCTAssertEqual(commands.count, 2, "the command and its commented --server variant")
        for command in commands {
            XCTAssertTrue(command.contains("\"%h/recordings/log-%%Y%%m%%d-%%H%%M%%S.wav\" --split 1h --align --keep 7d"), String(command))
            // Every specifier is %h (home) or %% (a literal %).
            let specifiers = command.split(separator: "%%", omittingEmptySubsequences: false).joined().split(separator: "%").dropFirst()
            XCTAssertTrue(specifiers.allSatisfy { $0.hasPrefix("h/") }, String(command))
        }
        XCTAssertTrue(commands.contains { $0.contains("--server NAME") && $0.contains("--sidecar") })
    }

    /// The station logger's unit: its command, with %h a home of the test's own and %% a %,
    /// is one jackhost accepts (it fails only for want of a server: status 1, not 2), and its
    /// alarm script runs with the arguments jackhost gives it.
    func testTheStationLoggerUnitsCommandIsAccepted() throws {
        let examples = ExamplePlugins.repositoryRoot.appendingPathComponent("Examples/systemd")
        let unit = try String(contentsOf: examples.appendingPathComponent("jackhost-station-logger.service"), encoding: .utf8)
        let line = try XCTUnwrap(unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let home = workDirectory.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
        let script = home + "/.local/bin/jackhost-station-alarm"
        try FileManager.default.copyItem(atPath: examples.appendingPathComponent("jackhost-station-alarm").path, toPath: script)
        let words = line.dropFirst("ExecStart=".count).replacingOccurrences(of: "%h", with: home).replacingOccurrences(of: "%%", with: "%")
            .split(separator: " ").map { String($0).replacingOccurrences(of: "\"", with: "") }
        XCTAssertEqual(words.first, home + "/.local/bin/jackhost")
        for option in ["--utc", "--align", "--keep", "--sidecar", "--programme", "--silence", "--on-alarm"] {
            XCTAssertTrue(words.contains(option), option)
        }
        try FileManager.default.createDirectory(atPath: home + "/station-log", withIntermediateDirectories: true)
        let result = try JackhostBinary.run(Array(words.dropFirst()) + ["-s", "jhtest-no-such-server"])
        XCTAssertEqual(result.status, 1, "accepted; no server: \(result.stderr)")
        XCTAssertFalse(result.stderr.contains("usage"), result.stderr)
        let alarm = try JACKFixture.run(script, ["dead-air", "raised", "1-2", "/tmp/x.wav", "1440000"])
        XCTAssertEqual(alarm.status, 0, alarm.stderr)
    }
}

private func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// What systemd's end of `$NOTIFY_SOCKET` would see: datagrams, each with its arrival time and
/// the sender's pid (SO_PASSCRED: the kernel attaches the credentials, as systemd relies on).
final class NotifyListener: @unchecked Sendable {
    // @unchecked: `received` is guarded by `lock`; the descriptor is closed only after the thread ends.
    struct Message {
        var time: Double
        var senderPID: pid_t
        var lines: [String]
    }

    /// The value for NOTIFY_SOCKET.
    let address: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [Message] = []
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    convenience init(path: String) throws { try self.init(address: path) }
    convenience init(abstractName: String) throws { try self.init(address: "@" + abstractName) }

    private init(address: String) throws {
        self.address = address
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_PASSCRED, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 } else { bytes.append(0) }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) { receiveOne() }
            finished.signal()
        }
    }

    /// SCM_CREDENTIALS, which glibc hides behind _GNU_SOURCE (bits/socket.h).
    private static let credentialsType: Int32 = 2

    private func receiveOne() {
        var payload = [UInt8](repeating: 0, count: 4096)
        var control = [UInt8](repeating: 0, count: 64)
        let count = payload.withUnsafeMutableBytes { payloadBytes in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: payloadBytes.baseAddress, iov_len: payloadBytes.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    return recvmsg(descriptor, &header, 0)
                }
            }
        }
        guard count > 0 else { return }
        // One cmsghdr (size_t length, int level, int type: 16 bytes) followed by struct ucred.
        let level = control.withUnsafeBytes { $0.load(fromByteOffset: 8, as: Int32.self) }
        let type = control.withUnsafeBytes { $0.load(fromByteOffset: 12, as: Int32.self) }
        let pid = level == SOL_SOCKET && type == Self.credentialsType ? control.withUnsafeBytes { $0.load(fromByteOffset: 16, as: pid_t.self) } : -1
        let text = String(decoding: payload[..<count], as: UTF8.self)
        let message = Message(
            time: monotonicNow(), senderPID: pid, lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        lock.withLock { received.append(message) }
    }

    /// What has arrived so far.
    var messages: [Message] { lock.withLock { received } }

    /// Stops listening and returns everything received.
    func stop() -> [Message] {
        lock.withLock { running = false }
        finished.wait()
        close(descriptor)
        if address.hasPrefix("/") { unlink(address) }
        return messages
    }
}
