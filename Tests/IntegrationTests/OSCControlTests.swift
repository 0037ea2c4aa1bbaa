import Foundation
import JackHost
import JackHostTesting
import XCTest

/// `--osc`: takes started, marked, rotated, stopped and the run ended by OSC messages from
/// independent senders (liblo-tools' `oscsend`, and Python's socket module with hand-encoded
/// OSC for the status reply and the junk), against a private dummy server; the files are
/// read back with sox and libsndfile and checked frame by frame against the sequence.
final class OSCControlTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-osc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    private func takes() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasPrefix("take") && $0.hasSuffix(".wav") }.sorted()
    }

    /// Starts jackhost with `--osc ADDRESS:0` added and returns it with the port it bound
    /// (from its "OSC control at" note).
    private func start(_ arguments: [String], address: String = "127.0.0.1", launcher: [String] = []) throws -> (RunningJackhost, Int) {
        let child = try RunningJackhost(arguments: arguments + ["--osc", "\(address):0"], directory: workDirectory, launcher: launcher)
        XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("OSC control at") }, child.stderr)
        let line = child.stderr.split(separator: "\n").first { $0.contains("OSC control at") } ?? ""
        let port = Int(line.split(separator: ":").last?.filter(\.isNumber) ?? "") ?? 0
        XCTAssertGreaterThan(port, 0, child.stderr)
        return (child, port)
    }

    /// `oscsend 127.0.0.1 PORT PATH [TYPES ARGS...]` (127.0.0.1 rather than localhost, which
    /// may resolve to ::1 first; jackhost's socket is IPv4).
    private func oscsend(_ port: Int, _ path: String, _ arguments: [String] = [], launcher: [String] = []) throws {
        let command = launcher + ["/usr/bin/oscsend", "127.0.0.1", String(port), path] + arguments
        let result = try JACKFixture.run(command[0], Array(command.dropFirst()), timeout: 10)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// Runs the Python helper (`status PORT` or `flood PORT COUNT`) and returns its JSON.
    private func python(_ arguments: [String], launcher: [String] = []) throws -> [String: Any] {
        let command = launcher + ["/usr/bin/python3", "-c", Self.helper] + arguments
        let result = try JACKFixture.run(command[0], Array(command.dropFirst()), timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// `/jackhost/status` from a socket of the test's own; the reply's path and arguments.
    private func status(_ port: Int, launcher: [String] = []) throws -> [Any] {
        let reply = try python(["status", String(port)], launcher: launcher)
        XCTAssertEqual(reply["path"] as? String, "/jackhost/status", "\(reply)")
        XCTAssertEqual(reply["types"] as? String, "sshihhf", "\(reply)")
        return reply["arguments"] as? [Any] ?? []
    }

    func testOSCStartsMarksRotatesStopsAndEndsATake() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let (child, port) = try start([
                "run", "--record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--signal-trigger", "--sidecar",
                "--results", path("results.jsonl"),
            ])
            XCTAssertEqual(try status(port).first as? String, "armed", child.stderr)
            try oscsend(port, "/jack_capture/tm/start")
            usleep(600_000)
            try oscsend(port, "/jackhost/marker", ["s", "cough"])
            usleep(300_000)
            let recording = try status(port)
            XCTAssertEqual(recording.first as? String, "recording", child.stderr)
            XCTAssertTrue((recording[1] as? String)?.hasSuffix(".wav") == true, "\(recording)")
            XCTAssertGreaterThan(recording[2] as? Int ?? 0, 0, "frames written: \(recording)")
            try oscsend(port, "/jack_capture/rotate")
            usleep(600_000)
            try oscsend(port, "/jack_capture/tm/stop")
            usleep(300_000)
            XCTAssertEqual(try status(port).first as? String, "armed", child.stderr)
            try oscsend(port, "/jack_capture/stop")
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)

            let files = try takes()
            XCTAssertEqual(files.count, 2, "one take, rotated once: \(files)\n\(child.stderr)")
            let reads = try files.map { try AudioFileCheck.readWithSox(path($0), channels: 2) }
            for (name, channels) in zip(files, reads) {
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path(name)), name)
                XCTAssertEqual(header.frames, channels[0].count, "\(name) is complete: its header covers its data")
                XCTAssertGreaterThan(header.frames, 12000, name)
            }
            // The rotation lost and repeated nothing: the two files are one run of the sequence.
            let joined = (0..<2).map { c in reads.flatMap { $0[c] } }
            let report = SequenceCheck.verify(joined)
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertEqual(report.leadingSilence, 0, report.description)

            let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path(files[0]) + ".json"))) as? [String: Any]
            let markers = try XCTUnwrap(sidecar?["markers"] as? [[String: Any]], "\(String(describing: sidecar))")
            XCTAssertEqual(markers.compactMap { $0["label"] as? String }, ["cough"])
            XCTAssertEqual(markers.compactMap { $0["source"] as? String }, ["OSC"])
            // --results carries the marker once, with its file and frame.
            let results = try String(contentsOfFile: path("results.jsonl"), encoding: .utf8).split(separator: "\n")
            let markerLines = results.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .compactMap { $0["marker"] as? [String: Any] }
            XCTAssertEqual(markerLines.compactMap { $0["label"] as? String }, ["cough"], "\(results)")
            XCTAssertEqual(markerLines.first?["frame"] as? Int, markers.first?["frame"] as? Int)
            let output = child.stderr + child.stdout
            XCTAssertTrue(output.contains("OSC /jackhost/marker \"cough\" from 127.0.0.1:"), output)
            XCTAssertTrue(output.contains("OSC: 8 message(s) accepted, 0 refused"), output)
        }
    }

    /// The last explicit command wins over a level trigger until the next take: OSC stops a take
    /// while the input is loud, and no new take opens while it stays loud; OSC starts one again.
    func testAnExplicitStopWinsOverALevelTrigger() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhleveltone", server: server.name, channels: 2, signal: .sine(frequency: 440, amplitude: 0.5))
            defer { generator.stop() }
            let (child, port) = try start([
                "record", path("take.wav"), "-s", server.name, "--connect", "jhleveltone:out_.*", "--trigger", "-30", "--hold", "0.2",
                "--no-meter",
            ])
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { (try? self.status(port).first as? String) == "recording" }, child.stderr)
            usleep(500_000)
            try oscsend(port, "/jackhost/stop")
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { (try? self.status(port).first as? String) == "armed" }, child.stderr)
            usleep(1_000_000)
            XCTAssertEqual(try status(port).first as? String, "armed", "the loud input does not reopen the take")
            let firstTakes = try takes()
            XCTAssertEqual(firstTakes.count, 1, "\(firstTakes)")
            try oscsend(port, "/jackhost/start")
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { (try? self.status(port).first as? String) == "recording" }, child.stderr)
            usleep(300_000)
            try oscsend(port, "/jackhost/quit")
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            let files = try takes()
            XCTAssertEqual(files.count, 2, "the trigger's take, then the explicit one: \(files)\n\(child.stderr)")
            for name in files {
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path(name)), name)
                XCTAssertGreaterThan(header.frames, 4800, name)
            }
        }
    }

    /// `/jackhost/subscribe fi 10 PORT` from liblo's `oscsend`, received by liblo's `oscdump` on
    /// PORT for 3 s: 25 to 35 `/jackhost/meter` messages, each with the input count and a peak
    /// and RMS per input that match the generator's sine (0.5: -6.02 and -9.03 dBFS); after
    /// `/jackhost/unsubscribe i PORT`, none. A rate over 30 is capped, a rate of 0 refused.
    func testAMeterSubscriptionReachesOscdumpAtItsRate() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(
                name: "jhmetergen", server: server.name, channels: 2, signal: .sine(frequency: 1000, amplitude: 0.5))
            defer { generator.stop() }
            let (child, port) = try start(["meter", "-s", server.name, "--connect", "jhmetergen:out_.*"])
            let dump = try OSCDump(file: path("oscdump.txt"))
            defer { dump.stop() }
            let listenPort = dump.port
            func meters() -> [Substring] { dump.lines(of: "/jackhost/meter") }
            usleep(300_000)
            try oscsend(port, "/jackhost/subscribe", ["fi", "10", String(listenPort)])
            usleep(3_000_000)
            try oscsend(port, "/jackhost/unsubscribe", ["i", String(listenPort)])
            usleep(500_000)
            let during = meters()
            usleep(1_000_000)
            let after = meters()
            XCTAssertTrue((25...35).contains(during.count), "\(during.count) meter messages in 3 s at 10 Hz:\n\(during.suffix(3))")
            XCTAssertEqual(after.count, during.count, "meters went on after /jackhost/unsubscribe")
            // oscdump prints "TIMETAG /jackhost/meter iffff 2 -6.020600 -9.030900 -6.020600 -9.030900".
            let last = try XCTUnwrap(during.last).split(separator: " ")
            XCTAssertEqual(last.count, 8, "\(last)")
            XCTAssertEqual(last[2], "iffff")
            XCTAssertEqual(last[3], "2")
            for (index, want) in [(4, -6.02), (5, -9.03), (6, -6.02), (7, -9.03)] {
                XCTAssertEqual(Double(last[index]) ?? 0, want, accuracy: 0.1, "\(last)")
            }
            let refusal = try python(["send", String(port), "/jackhost/subscribe", "f", "0"])
            XCTAssertEqual(refusal["path"] as? String, "/jackhost/error", "\(refusal)")
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            let summary = child.stdout + child.stderr
            XCTAssertTrue(summary.contains("tick(s) left a flood for the next, \(during.count) meter message(s) sent"), summary)
        }
    }

    /// A script written for jack_capture (Tests/Peers/jack_capture_remote.sh: liblo's `oscsend`
    /// and jack_capture's paths only) runs unchanged against jack_capture itself and against
    /// jackhost: both record, rotate once and exit. jackhost's two files are one unbroken run of
    /// the sequence.
    func testAJackCaptureRemoteScriptDrivesJackCaptureAndJackhostAlike() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/jack_capture_remote.sh").path
        let jackCapture = try XCTUnwrap(PrivateJACKServer.findExecutable("jack_capture"), "jack_capture: run scripts/setup")
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            // jack_capture first, on a port of the test's choosing (it has no "any free port").
            let peerDirectory = workDirectory.appendingPathComponent("jack_capture")
            try FileManager.default.createDirectory(at: peerDirectory, withIntermediateDirectories: true)
            let peerPort = Self.freeUDPPort()
            let peer = Process()
            peer.executableURL = URL(fileURLWithPath: jackCapture)
            peer.arguments = ["--osc", String(peerPort), "--timemachine", "--no-stdin", "-c", "2", "-p", "jhgen:out_*"]
            peer.currentDirectoryURL = peerDirectory
            peer.environment = ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": server.name, "JACK_NO_START_SERVER": "1"]) { $1 }
            peer.standardOutput = FileHandle.nullDevice
            peer.standardError = FileHandle.nullDevice
            try peer.run()
            defer { if peer.isRunning { peer.terminate() } }
            usleep(1_500_000)
            let peerRun = try JACKFixture.run("/bin/sh", [script, String(peerPort)], timeout: 20)
            XCTAssertEqual(peerRun.status, 0, peerRun.stderr)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { !peer.isRunning }, "/jack_capture/stop ends jack_capture")
            let peerFiles = try FileManager.default.contentsOfDirectory(atPath: peerDirectory.path).filter { $0.hasSuffix(".wav") }
            let peerTakes = try peerFiles.filter {
                try AudioFileCheck.sndfileInfoHeader(peerDirectory.appendingPathComponent($0).path)?.frames ?? 0 > 0
            }
            XCTAssertEqual(peerTakes.count, 2, "jack_capture recorded and rotated once: \(peerFiles)")

            let (child, port) = try start([
                "run", "--record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--signal-trigger",
            ])
            let run = try JACKFixture.run("/bin/sh", [script, String(port)], timeout: 20)
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            let files = try takes()
            XCTAssertEqual(files.count, 2, "jackhost recorded and rotated once, as jack_capture did: \(files)\n\(child.stderr)")
            let reads = try files.map { try AudioFileCheck.readWithSox(path($0), channels: 2) }
            XCTAssertTrue(reads.allSatisfy { $0[0].count > 24000 }, "about a second in each file: \(reads.map { $0[0].count })")
            let report = SequenceCheck.verify((0..<2).map { c in reads.flatMap { $0[c] } })
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertEqual(report.leadingSilence, 0, report.description)
        }
    }

    /// Every `/jackhost/...` path from liblo's `oscsend`, the status replies received by liblo's
    /// `oscdump` (`/jackhost/status i PORT`): the state, the take's path, its frames, and the
    /// losses and disk time of a clean take on a real disk. The marker is read back from the
    /// file by the independent RIFF walker and from the sidecar, with its wall-clock time.
    func testLibloAloneDrivesEveryJackhostPathAndReadsTheStatus() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let dump = try OSCDump(file: path("oscdump.txt"))
            defer { dump.stop() }
            let (child, port) = try start([
                "run", "--record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--signal-trigger", "--sidecar",
            ])
            func status() throws -> [Substring] {
                let before = dump.lines(of: "/jackhost/status").count
                try oscsend(port, "/jackhost/status", ["i", String(dump.port)])
                XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { dump.lines(of: "/jackhost/status").count > before }, "no status reply")
                // "TIMETAG /jackhost/status sshihhf "recording" "/path/take.wav" 52224 0 0 0 123456.0"
                return dump.lines(of: "/jackhost/status").last?.split(separator: " ") ?? []
            }
            let armed = try status()
            XCTAssertEqual(armed.count, 10, "\(armed)")
            XCTAssertEqual(armed.dropFirst(2).prefix(2), ["sshihhf", "\"armed\""], "\(armed)")
            XCTAssertEqual(armed.dropFirst(4).first, "\"\(path("take.wav"))\"", "armed, the status names the --record template")
            XCTAssertEqual(armed.dropFirst(5).first, "0", "no frames written yet")
            try oscsend(port, "/jackhost/start")
            usleep(700_000)
            let markedAt = Date().timeIntervalSince1970
            try oscsend(port, "/jackhost/marker", ["s", "clap"])
            usleep(300_000)
            try oscsend(port, "/jackhost/rotate")
            usleep(700_000)
            let recording = try status()
            XCTAssertEqual(recording.count, 10, "\(recording)")
            XCTAssertEqual(recording[3], "\"recording\"")
            XCTAssertEqual(recording[4], "\"\(path("take-0002.wav"))\"", "the rotated file")
            XCTAssertGreaterThan(Int(recording[5]) ?? 0, 0, "frames written: \(recording)")
            XCTAssertEqual(recording[6...7], ["0", "0"], "no xrun and nothing dropped on a quiet dummy server: \(recording)")
            XCTAssertEqual(recording[8], "0", "nothing skipped: \(recording)")
            XCTAssertGreaterThan(Double(recording[9]) ?? -1, 60, "disk seconds left, measured: \(recording)")
            try oscsend(port, "/jackhost/stop")
            usleep(300_000)
            XCTAssertEqual(try status()[3], "\"armed\"")
            try oscsend(port, "/jackhost/quit")
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)

            let files = try takes()
            XCTAssertEqual(files, ["take-0001.wav", "take-0002.wav"], child.stderr)
            let cues = try IndependentCues.read(path("take-0001.wav"))
            XCTAssertEqual(cues.map(\.label), ["clap"], "the marker is in the first file's cue chunk")
            let sidecar =
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("take-0001.wav") + ".json"))) as? [String: Any]
            let marker = try XCTUnwrap((sidecar?["markers"] as? [[String: Any]])?.first, "\(String(describing: sidecar))")
            XCTAssertEqual(marker["frame"] as? Int, cues.first?.frame, "the sidecar and the file agree")
            XCTAssertEqual(marker["source"] as? String, "OSC")
            XCTAssertEqual(marker["unixTime"] as? Double ?? 0, markedAt, accuracy: 0.5, "the marker's wall-clock time: \(marker)")
            let wallClock = try XCTUnwrap(marker["wallClock"] as? String)
            let format = DateFormatter()
            format.locale = Locale(identifier: "en_US_POSIX")
            format.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXXXX"
            let parsed = format.date(from: wallClock)
            XCTAssertEqual(parsed?.timeIntervalSince1970 ?? 0, markedAt, accuracy: 0.5, "ISO 8601 wall clock: \(wallClock)")
            let reads = try files.map { try AudioFileCheck.readWithSox(path($0), channels: 2) }
            let report = SequenceCheck.verify((0..<2).map { c in reads.flatMap { $0[c] } })
            XCTAssertNil(report.firstMismatch, "/jackhost/rotate lost or repeated nothing: \(report.description)")
        }
    }

    /// 10,000 datagrams of junk (random bytes, and valid OSC to an unknown path) beside a take:
    /// the take is complete and bit-exact, every one is counted, and a burst over the per-tick
    /// limit waits for the next tick instead of being lost.
    func testJunkIsCountedAndAnsweredWhileTheTakeStaysExact() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let (child, port) = try start(["record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*"])
            let flood = try python(["flood", String(port), "10000"])
            let statuses = flood["statuses"] as? Int ?? -1
            XCTAssertEqual(flood["junk"] as? Int, 10000, "\(flood)")
            XCTAssertEqual(flood["errors"] as? Int, 5000, "every unknown path is answered with /jackhost/error: \(flood)")
            try oscsend(port, "/jackhost/quit")
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)

            let output = child.stderr + child.stdout
            XCTAssertTrue(output.contains("OSC: \(statuses + 1) message(s) accepted, 10000 refused"), output)
            // How many ticks left datagrams for the next one depends on the machine's timing; that
            // none was lost is what the counts above prove.
            print("OSCControlTests: 10000 junk datagrams; \(output.split(separator: "\n").first { $0.hasPrefix("OSC: ") } ?? "")")
            let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path("take.wav")))
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path("take.wav")))
            XCTAssertEqual(header.frames, read.header.frames)
            XCTAssertTrue(output.contains("recorded \(header.frames) frames"), "the file holds every frame recorded:\n\(output)")
            XCTAssertGreaterThan(header.frames, 48000, "the take ran through the flood")
            let report = SequenceCheck.verify(read.channels)
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertEqual(report.checkedFrames, header.frames - report.leadingSilence, report.description)
        }
    }

    /// Bound to every interface with `--osc-allow` naming another network, jackhost hears
    /// loopback but drops, unanswered, what comes from any other address. All of it happens in a
    /// network namespace the test makes (its loopback, plus 10.231.7.2 on it), so no packet
    /// touches a real interface; jackd stays outside (its sockets are files, not network).
    func testSendersOutsideTheAllowedNetworksAreDroppedAndCounted() throws {
        guard getuid() == 0 else { throw XCTSkip("a network namespace needs root (CI runs as root)") }
        let namespace = "jhosc-\(getpid())-\(Int.random(in: 1000...9999))"
        let ip = "/usr/sbin/ip"
        for arguments in [
            ["netns", "add", namespace], ["-n", namespace, "link", "set", "lo", "up"],
            ["-n", namespace, "addr", "add", "10.231.7.2/32", "dev", "lo"],
        ] {
            let result = try JACKFixture.run(ip, arguments)
            guard result.status == 0 else {
                _ = try? JACKFixture.run(ip, ["netns", "delete", namespace])
                if environmentsRequired { XCTFail("ip \(arguments): \(result.stderr)") }
                throw XCTSkip("no network namespace here: \(result.stderr)")
            }
        }
        defer { _ = try? JACKFixture.run(ip, ["netns", "delete", namespace]) }
        let inside = [ip, "netns", "exec", namespace]
        try JACKFixture.withServer(captureChannels: 2) { server in
            let (child, port) = try start(
                ["meter", "-s", server.name, "--no-auto-connect", "--osc-allow", "10.9.9.9"], address: "0.0.0.0", launcher: inside)
            let stranger = try python(["stranger", String(port), "10.231.7.2"], launcher: inside)
            XCTAssertEqual(stranger["replies"] as? Int, 0, "\(stranger)")
            XCTAssertEqual(try status(port, launcher: inside).first as? String, "recording", "loopback is still heard")
            try oscsend(port, "/jackhost/quit", launcher: inside)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            let output = child.stderr + child.stdout
            XCTAssertTrue(output.contains("OSC: 2 message(s) accepted, 0 refused (not OSC, unknown path or wrong types), 10 dropped"), output)
        }
    }

    /// Mistakes are one line and status 2 before anything starts; a port in use is one line
    /// and status 1 before JACK is touched (no server runs here at all), and no file is made.
    func testBadOptionsAndABusyPortAreOneLine() throws {
        let exposed = try JackhostBinary.run(["record", path("take.wav"), "--osc", "192.168.1.2:9000"])
        XCTAssertEqual(exposed.status, 2, exposed.stderr)
        XCTAssertEqual(exposed.stderr.split(separator: "\n").count, 1, exposed.stderr)
        XCTAssertTrue(exposed.stderr.contains("no authentication") && exposed.stderr.contains("--osc-allow"), exposed.stderr)
        let notAPort = try JackhostBinary.run(["record", path("take.wav"), "--osc", "notaport"])
        XCTAssertEqual(notAPort.status, 2, notAPort.stderr)
        XCTAssertEqual(notAPort.stderr.split(separator: "\n").count, 1, notAPort.stderr)
        let badNetwork = try JackhostBinary.run(["record", path("take.wav"), "--osc", "9000", "--osc-allow", "10.0.0.0/40"])
        XCTAssertEqual(badNetwork.status, 2, badNetwork.stderr)

        let (busy, port) = Self.boundLoopbackUDPSocket()
        defer { close(busy) }
        XCTAssertGreaterThan(port, 0)
        let result = try JackhostBinary.run(["record", path("take.wav"), "-s", "jhtest-none-\(getpid())", "--osc", "127.0.0.1:\(port)"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(
            result.stderr,
            "jackhost: --osc 127.0.0.1:\(port): cannot listen for OSC: the UDP port is in use; pick another (or 0 for any free one)\n")
        XCTAssertEqual(try takes(), [])
    }

    /// A UDP socket bound to a port on loopback that the kernel chose, and that port (0 when
    /// binding failed).
    private static func boundLoopbackUDPSocket() -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        return (descriptor, bound ? UInt16(bigEndian: address.sin_port) : 0)
    }

    /// A UDP port on loopback that was free a moment ago.
    private static func freeUDPPort() -> Int {
        let (descriptor, port) = boundLoopbackUDPSocket()
        close(descriptor)
        return Int(port)
    }

    /// liblo's own receiver, `oscdump -L PORT`, writing each message as a line to a file the
    /// test reads.
    private struct OSCDump {
        let port = OSCControlTests.freeUDPPort()
        let file: String
        private let process = Process()

        init(file: String) throws {
            self.file = file
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
            process.arguments = ["-L", String(port)]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            try process.run()
            usleep(200_000)
        }

        /// The lines received so far that carry `path`.
        func lines(of path: String) -> [Substring] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(path) }
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The Python side: hand-encoded OSC over a socket of its own.
    private static let helper = #"""
        import json, random, socket, struct, sys

        def pad(data):
            data += b"\0"
            return data + b"\0" * (-len(data) % 4)

        def message(path):
            return pad(path.encode()) + pad(b",")

        def read_string(data, offset):
            end = data.index(b"\0", offset)
            return data[offset:end].decode(), (end + 4) & ~3

        def decode(data):
            path, offset = read_string(data, 0)
            types, offset = read_string(data, offset)
            arguments = []
            for tag in types[1:]:
                if tag == "s":
                    value, offset = read_string(data, offset)
                elif tag == "i":
                    value, offset = struct.unpack(">i", data[offset:offset + 4])[0], offset + 4
                elif tag == "h":
                    value, offset = struct.unpack(">q", data[offset:offset + 8])[0], offset + 8
                elif tag == "f":
                    value, offset = struct.unpack(">f", data[offset:offset + 4])[0], offset + 4
                else:
                    raise ValueError("type " + tag)
                arguments.append(value)
            return {"path": path, "types": types[1:], "arguments": arguments}

        mode, port = sys.argv[1], int(sys.argv[2])
        target = ("127.0.0.1", port)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(5)
        errors = 0

        def status():
            # Every reply before the status's own is an error answer to earlier junk.
            global errors
            sock.sendto(message("/jackhost/status"), target)
            while True:
                reply = decode(sock.recv(65536))
                if reply["path"] == "/jackhost/status":
                    return reply
                assert reply["path"] == "/jackhost/error", reply
                errors += 1

        if mode == "status":
            print(json.dumps(status()))
            sys.exit(0)

        if mode == "send":
            # send PORT PATH TYPES ARGS...: one message, and the first reply.
            path, types, values = sys.argv[3], sys.argv[4], sys.argv[5:]
            packed = b"".join(struct.pack(">f", float(v)) if t == "f" else struct.pack(">i", int(v)) if t == "i" else pad(v.encode())
                              for t, v in zip(types, values))
            sock.sendto(pad(path.encode()) + pad(("," + types).encode()) + packed, target)
            print(json.dumps(decode(sock.recv(65536))))
            sys.exit(0)

        if mode == "stranger":
            # From the namespace's own non-loopback address, to itself.
            address = sys.argv[3]
            outside = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            outside.bind((address, 0))
            outside.settimeout(1)
            for _ in range(10):
                outside.sendto(message("/jackhost/status"), (address, port))
            replies = 0
            try:
                while True:
                    outside.recv(65536)
                    replies += 1
            except socket.timeout:
                pass
            print(json.dumps({"replies": replies, "address": address}))
            sys.exit(0)

        total = int(sys.argv[3])
        rng = random.Random(26)
        unknown = message("/jackhost/nothing")
        sent = statuses = 0
        batch = 150
        while sent < total:
            for _ in range(min(batch, total - sent)):
                if sent % 2 == 0:
                    junk = bytes([0xFF]) + bytes(rng.randrange(256) for _ in range(rng.randrange(3, 60)))
                    sock.sendto(junk, target)
                else:
                    sock.sendto(unknown, target)
                sent += 1
            # Wait until jackhost has read the batch: the socket's queue never overflows.
            status()
            statuses += 1
            batch = 100
        print(json.dumps({"junk": sent, "statuses": statuses, "errors": errors}))
        """#
}
