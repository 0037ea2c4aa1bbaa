import Glibc
import XCTest

@testable import JackHostCLI

/// The sd_notify messages' text and the watchdog policy, without systemd or JACK.
final class SystemdNotifierTests: XCTestCase {
    private func progress(
        captured: Int = 96000, recorded: Int? = nil, xruns: Int = 0, dropped: Int = 0, waiting: Bool = false
    ) -> SystemdNotifier.Progress {
        .init(
            capturedFrames: captured, recordedFrames: recorded, sampleRate: 48000, xruns: xruns, droppedFrames: dropped, isWaitingForServer: waiting)
    }

    func testStatusLine() {
        XCTAssertEqual(
            SystemdNotifier.statusLine(peaks: [0.5, 0.1, 0], progress: progress(recorded: 96000)),
            "peak dBFS -6.0 -20.0 -inf | 96000 frames recorded (0:00:02), xruns 0, dropped 0")
        XCTAssertEqual(
            SystemdNotifier.statusLine(peaks: [1], progress: progress(captured: 48000 * 90061, xruns: 3, dropped: 512)),
            "peak dBFS 0.0 | 4322928000 frames captured (25:01:01), xruns 3, dropped 512")
        XCTAssertEqual(
            SystemdNotifier.statusLine(peaks: [], progress: progress(captured: 0)),
            "0 frames captured (0:00:00), xruns 0, dropped 0")
        XCTAssertEqual(
            SystemdNotifier.statusLine(peaks: [0.5], progress: progress(recorded: 48000 * 3600, waiting: true)),
            "waiting for the JACK server to return | 172800000 frames recorded (1:00:00), xruns 0, dropped 0")
        // A raised alarm leads the line, while the rest stays as it is.
        var alarmed = progress(recorded: 96000)
        alarmed.alarms = ["dead air on 1-2 (below -50.0 dBFS for 30.0 s)"]
        XCTAssertEqual(
            SystemdNotifier.statusLine(peaks: [0.5], progress: alarmed),
            "ALARM dead air on 1-2 (below -50.0 dBFS for 30.0 s) | peak dBFS -6.0 | 96000 frames recorded (0:00:02), xruns 0, dropped 0")
        // Many channels: the first 16, then the loudest of the rest.
        let many = SystemdNotifier.statusLine(peaks: Array(repeating: 0.1, count: 16) + [0.01, 0.5, 0], progress: progress())
        XCTAssertTrue(
            many.hasPrefix("peak dBFS " + Array(repeating: "-20.0", count: 16).joined(separator: " ") + " (+3 channels, loudest -6.0) | "), many)
    }

    func testSettings() {
        let me = getpid()
        XCTAssertNil(SystemdNotifier.Settings.parse(notifySocket: nil, watchdogMicroseconds: "1000000", watchdogPID: nil, ownPID: me))
        XCTAssertNil(SystemdNotifier.Settings.parse(notifySocket: "", watchdogMicroseconds: nil, watchdogPID: nil, ownPID: me))
        XCTAssertEqual(
            SystemdNotifier.Settings.parse(
                notifySocket: "/run/user/1000/systemd/notify", watchdogMicroseconds: "30000000", watchdogPID: nil, ownPID: me),
            .init(socket: "/run/user/1000/systemd/notify", watchdogInterval: 15))
        XCTAssertEqual(
            SystemdNotifier.Settings.parse(notifySocket: "@x", watchdogMicroseconds: "400000", watchdogPID: String(me), ownPID: me)?.watchdogInterval,
            0.2)
        for (usec, pid) in [("400000", "1"), ("400000", "x"), ("0", nil), ("-5", nil), ("1e6", nil), (nil, String(me))] as [(String?, String?)] {
            XCTAssertEqual(
                SystemdNotifier.Settings.parse(notifySocket: "@x", watchdogMicroseconds: usec, watchdogPID: pid, ownPID: me)?.watchdogInterval, .none,
                "\(String(describing: usec)) \(String(describing: pid))")
        }
    }

    func testSocketAddressesThatCannotWork() {
        XCTAssertThrowsError(try SystemdNotifier(settings: .init(socket: "vsock:2:1234", watchdogInterval: nil)))
        XCTAssertThrowsError(try SystemdNotifier(settings: .init(socket: "/" + String(repeating: "a", count: 200), watchdogInterval: nil)))
        XCTAssertNoThrow(try SystemdNotifier(settings: .init(socket: "@" + String(repeating: "a", count: 107), watchdogInterval: nil)))
        XCTAssertNoThrow(try SystemdNotifier(settings: .init(socket: "/" + String(repeating: "a", count: 106), watchdogInterval: nil)))
    }

    /// Pings every interval while frames advance; none while they stand still (the first one as
    /// soon as they move again); always while waiting for a lost server.
    func testWatchdogPolicy() {
        var policy = SystemdNotifier.WatchdogPolicy(interval: 0.2, now: 0, frames: 0)
        XCTAssertFalse(policy.shouldPing(now: 0.1, frames: 4800, isWaitingForServer: false), "not due")
        XCTAssertTrue(policy.shouldPing(now: 0.2, frames: 9600, isWaitingForServer: false))
        XCTAssertFalse(policy.shouldPing(now: 0.3, frames: 14400, isWaitingForServer: false), "not due again yet")
        XCTAssertTrue(policy.shouldPing(now: 0.42, frames: 19200, isWaitingForServer: false))
        // Wedged: due, but the frames stand still.
        for now in stride(from: 0.62, to: 2, by: 0.02) {
            XCTAssertFalse(policy.shouldPing(now: now, frames: 19200, isWaitingForServer: false), "\(now)")
        }
        XCTAssertTrue(policy.shouldPing(now: 2.0, frames: 19456, isWaitingForServer: false), "moving again")
        // Waiting for the server: no frames, still pinging.
        XCTAssertTrue(policy.shouldPing(now: 2.2, frames: 19456, isWaitingForServer: true))
        XCTAssertTrue(policy.shouldPing(now: 2.41, frames: 19456, isWaitingForServer: true))
    }
}
