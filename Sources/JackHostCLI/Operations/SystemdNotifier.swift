// SystemdNotifier.swift
//
// Tells systemd how a capture is doing, when systemd asked to be told: readiness, a watchdog
// heartbeat, and the levels in the unit's status line (`systemctl --user status` shows it).
//
// This is sd_notify(3)'s documented socket protocol, written out rather than linked from
// libsystemd: one datagram per message, sent to the AF_UNIX socket named by $NOTIFY_SOCKET (a
// path, or a Linux abstract-namespace name when it starts with "@"), its payload newline-separated
// KEY=VALUE lines. The socket is part of systemd's interface stability promise, so a libsystemd
// dependency would buy nothing but a package.
//
// Everything here runs on the capture session's main loop, an ordinary thread, never the JACK
// real-time thread. Sends never block (MSG_DONTWAIT) and a failing send is reported once and
// otherwise ignored: a recorder keeps recording when its supervisor cannot hear it.

import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers

/// Sends sd_notify messages to systemd: `READY=1`, `STATUS=…`, `WATCHDOG=1` and `STOPPING=1`.
///
/// The watchdog policy: `WATCHDOG=1` goes out every `WATCHDOG_USEC / 2`, but only while the
/// capture makes progress, that is while captured frames advance or while jackhost deliberately
/// waits for a lost server (`--reconnect`). A jackhost that is connected but gets no cycles (a
/// wedged client or server), or whose main loop hangs, stops pinging, so systemd's watchdog
/// fires and `Restart=on-failure` starts it again. Waiting for a lost server is not a fault:
/// restarting would only wait again, and would lose what the elastic buffer still holds. A stalled
/// disk is not a fault either: frames still arrive and the elastic buffer holds them.
final class SystemdNotifier {
    /// What the notifier reads from the environment systemd gives a service.
    struct Settings: Equatable {
        /// `$NOTIFY_SOCKET` as given: a path, or `@name` for an abstract socket.
        var socket: String
        /// Seconds between watchdog pings (half of `WATCHDOG_USEC`), or nil when systemd asked for none.
        var watchdogInterval: Double?

        /// Reads the three variables sd_notify(3) and sd_watchdog_enabled(3) read. Nil when
        /// `notifySocket` is unset or empty. The watchdog is off when `WATCHDOG_USEC` is not a
        /// positive integer, or when `WATCHDOG_PID` is set and names another process.
        static func parse(notifySocket: String?, watchdogMicroseconds: String?, watchdogPID: String?, ownPID: pid_t) -> Settings? {
            guard let notifySocket, !notifySocket.isEmpty else { return nil }
            var interval: Double?
            if let text = watchdogMicroseconds, let usec = UInt64(text), usec > 0,
                watchdogPID.map({ pid_t($0) == ownPID }) ?? true
            {
                interval = Double(usec) / 2_000_000
            }
            return Settings(socket: notifySocket, watchdogInterval: interval)
        }
    }

    /// What the status line and the watchdog look at, read from the host once per check.
    struct Progress {
        /// Frames captured since the start, over every reconnection (the watchdog's measure of progress).
        var capturedFrames: Int
        /// Frames written to files, when recording; nil when nothing is recorded.
        var recordedFrames: Int?
        /// The session's sample rate.
        var sampleRate: Double
        /// Xruns the server reported.
        var xruns: Int
        /// Frames the fullest consumer lost.
        var droppedFrames: Int
        /// Whether jackhost is waiting for a lost server to return (`--reconnect`).
        var isWaitingForServer: Bool
        /// The alarms raised now (`--silence`, `--clip`), each in words; the status starts with them.
        var alarms: [String] = []
    }

    /// When to ping: a pure policy, driven by the clock and the frame count, so tests can run it without systemd.
    struct WatchdogPolicy {
        /// Seconds between pings.
        let interval: Double
        private var lastPing: Double
        private var framesAtLastPing: Int

        /// Starts counting at `now`, from `frames` captured.
        init(interval: Double, now: Double, frames: Int) {
            self.interval = interval
            lastPing = now
            framesAtLastPing = frames
        }

        /// Whether the next check may need the host's counters (a ping is due).
        func isDue(now: Double) -> Bool { now - lastPing >= interval }

        /// Whether to send `WATCHDOG=1` now. A due ping waits (checked again on the next call)
        /// until frames have advanced since the last one, or the capture waits for its server.
        mutating func shouldPing(now: Double, frames: Int, isWaitingForServer: Bool) -> Bool {
            guard isDue(now: now), frames != framesAtLastPing || isWaitingForServer else { return false }
            lastPing = now
            framesAtLastPing = frames
            return true
        }
    }

    /// Seconds between `STATUS=` updates.
    static let statusInterval = 1.0
    /// Channels the status line lists one by one; more are summarised by their loudest peak.
    static let listedChannels = 16

    /// The environment it was created from.
    let settings: Settings
    /// The notifier's own meter, added to the host as a real-time consumer: its windows are the
    /// status line's, untouched by the terminal meter's.
    let meter = LevelMeter()
    /// Reads the host's counters; set before ``ready(now:)``.
    var readProgress: () -> Progress = { Progress(capturedFrames: 0, sampleRate: 48000, xruns: 0, droppedFrames: 0, isWaitingForServer: false) }

    private let descriptor: Int32
    private var address = sockaddr_un()
    private var addressLength = socklen_t(0)
    private var warned = false
    private var watchdog: WatchdogPolicy?
    private var nextStatus = 0.0
    private var stopped = false

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID`, and removes them from the
    /// environment, so no child (an isolated plugin's process, a hook) notifies systemd as if it
    /// were jackhost. Nil when systemd asked for no notifications, or the socket cannot be used
    /// (said once on stderr). Call it before any thread starts: unsetenv is not thread-safe.
    static func fromEnvironment() -> SystemdNotifier? {
        let names = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]
        let values = names.map { getenv($0).map { String(cString: $0) } }
        guard values[0] != nil else { return nil }
        for name in names { unsetenv(name) }
        guard let settings = Settings.parse(notifySocket: values[0], watchdogMicroseconds: values[1], watchdogPID: values[2], ownPID: getpid())
        else { return nil }
        do {
            return try SystemdNotifier(settings: settings)
        } catch {
            printError("warning: \(error.message)")
            return nil
        }
    }

    /// Why the socket cannot be used.
    struct SetupError: Error {
        /// One line for stderr.
        var message: String
    }

    /// Opens an unbound datagram socket for `settings.socket`.
    init(settings: Settings) throws(SetupError) {
        self.settings = settings
        let socketName = settings.socket
        var bytes = Array(socketName.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        guard isAbstract || bytes.first == UInt8(ascii: "/") else {
            throw SetupError(
                message:
                    "NOTIFY_SOCKET=\(socketName) is neither a path nor an @abstract name; jackhost sends systemd no readiness or watchdog messages")
        }
        // An abstract name is a leading NUL and no terminator; a path is NUL-terminated.
        if isAbstract { bytes[0] = 0 } else { bytes.append(0) }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count <= capacity else {
            throw SetupError(message: "NOTIFY_SOCKET=\(socketName) is longer than a socket address can hold (\(capacity) bytes)")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        addressLength = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        // Linux's SOCK_DGRAM (2) and SOCK_CLOEXEC (O_CLOEXEC) by value: once libmicrohttpd's header
        // (CMicroHTTPD, through JackHostLiveView) pulls in <sys/socket.h>, Swift files that do not
        // import it may lose these names.
        descriptor = socket(AF_UNIX, 2 | O_CLOEXEC, 0)
        guard descriptor >= 0 else {
            throw SetupError(message: "cannot create a socket for NOTIFY_SOCKET: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Sends `READY=1` with the first status line, and starts the watchdog. Call once capturing has started.
    func ready(now: Double = monotonicSeconds()) {
        let progress = readProgress()
        if let interval = settings.watchdogInterval {
            watchdog = WatchdogPolicy(interval: interval, now: now, frames: progress.capturedFrames)
        }
        nextStatus = now + Self.statusInterval
        _ = meter.takeSnapshot()
        send(["READY=1", "STATUS=" + Self.statusLine(peaks: [], progress: progress)])
    }

    /// Called from the main loop (every 20 ms): pings the watchdog when due and the capture
    /// progresses, and updates the status line at most once per ``statusInterval``.
    func tick(now: Double = monotonicSeconds()) {
        guard !stopped else { return }
        let statusDue = now >= nextStatus
        guard statusDue || watchdog?.isDue(now: now) == true else { return }
        let progress = readProgress()
        var lines: [String] = []
        if watchdog?.shouldPing(now: now, frames: progress.capturedFrames, isWaitingForServer: progress.isWaitingForServer) == true {
            lines.append("WATCHDOG=1")
        }
        if statusDue {
            nextStatus = max(nextStatus + Self.statusInterval, now)
            lines.append("STATUS=" + Self.statusLine(peaks: meter.takeSnapshot().map(\.peak), progress: progress))
        }
        if !lines.isEmpty { send(lines) }
    }

    /// Sends `STOPPING=1`, once; no watchdog pings follow. Call when the capture loop ends.
    func stopping() {
        guard !stopped else { return }
        stopped = true
        send(["STOPPING=1", "STATUS=stopping: finalising files"])
    }

    /// The status line: each channel's peak over the last window, then the counters:
    /// `peak dBFS -6.0 -12.5 -inf | 96000 frames recorded (0:00:02), xruns 0, dropped 0`.
    static func statusLine(peaks: [Float], progress: Progress) -> String {
        func db(_ linear: Float) -> String {
            let value = LevelMeter.dB(linear)
            return value.isFinite ? value.formatted(places: 1) : "-inf"
        }
        var parts: [String] = progress.alarms.map { "ALARM \($0)" }
        if progress.isWaitingForServer {
            parts.append("waiting for the JACK server to return")
        } else if !peaks.isEmpty {
            var levels = peaks.prefix(listedChannels).map(db).joined(separator: " ")
            if peaks.count > listedChannels {
                levels += " (+\(peaks.count - listedChannels) channels, loudest \(db(peaks.dropFirst(listedChannels).max() ?? 0)))"
            }
            parts.append("peak dBFS " + levels)
        }
        let frames = progress.recordedFrames ?? progress.capturedFrames
        let seconds = Int(Double(frames) / max(progress.sampleRate, 1))
        let clock = "\(seconds / 3600):\((seconds / 60 % 60).zeroPadded(to: 2)):\((seconds % 60).zeroPadded(to: 2))"
        parts.append(
            "\(frames) frames \(progress.recordedFrames == nil ? "captured" : "recorded") (\(clock)), xruns \(progress.xruns), dropped \(progress.droppedFrames)"
        )
        return parts.joined(separator: " | ")
    }

    /// Sends one datagram of newline-separated messages. A failure is said once on stderr and
    /// then ignored; a status line with a newline in it could not be parsed, so none may have one.
    private func send(_ lines: [String]) {
        let message = Array(lines.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes {
                    sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, addressLength)
                }
            }
        }
        if sent < 0 && !warned {
            warned = true
            printError(
                "warning: cannot notify systemd through NOTIFY_SOCKET=\(settings.socket): \(String(cString: strerror(errno))); capturing goes on, but systemd may see no readiness or heartbeat"
            )
        }
    }
}
