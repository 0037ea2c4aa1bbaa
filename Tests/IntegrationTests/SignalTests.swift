import Foundation
import JackHost
import JackHostConsumers
import JackHostTesting
import XCTest

/// Every catchable signal, at every moment of a run: 0, 10, 50 and 200 ms after launch and
/// mid-take, to `record`, `record --signal-trigger` and `stream`. A signal whose default action
/// would end the process finalises the take (exit 0) or is ignored and the take runs to its end;
/// no run may die of a signal once jackhost's handlers exist (read from /proc/PID/status just
/// before sending), and every file left behind is complete: its header holds exactly the frames
/// the summary reports, sox reads it, and the test sequence in it is intact.
///
/// Before, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU and the rest killed a take (its file as of
/// the last header rewrite), SIGQUIT froze the client into a split take, and a signal in the first
/// 50 ms (before the server connection) killed jackhost or was lost.
final class SignalTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-signals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Waits for exit and returns the status and the seconds since `since`.
    private func exit(
        of child: RunningJackhost, since: Date, limit: Double = 5,
        file: StaticString = #filePath, line: UInt = #line
    ) -> (status: Int32, seconds: Double) {
        let status = child.wait(timeout: limit, file: file, line: line)
        return (status, Date().timeIntervalSince(since))
    }

    /// What jackhost does with a signal (docs/RELIABILITY.md).
    enum Action {
        /// Finalise and stop, as SIGTERM does.
        case stops
        /// The take goes on (a progress line, a trigger, a note, or nothing).
        case continues
    }

    /// The signals of the matrix: every one whose default action ends a process, except the
    /// crash signals (left to the Swift runtime) and SIGKILL/SIGSTOP (uncatchable).
    static let signals: [(name: String, number: Int32, action: Action)] = [
        ("INT", SIGINT, .stops), ("TERM", SIGTERM, .stops), ("HUP", SIGHUP, .stops), ("QUIT", SIGQUIT, .stops),
        ("ALRM", SIGALRM, .stops), ("VTALRM", SIGVTALRM, .stops), ("PROF", SIGPROF, .stops), ("XCPU", SIGXCPU, .stops),
        ("PWR", SIGPWR, .stops), ("STKFLT", SIGSTKFLT, .stops), ("IO", SIGIO, .stops),
        ("RTMIN", 34, .stops), ("RTMAX", 64, .stops),
        ("USR1", SIGUSR1, .continues), ("USR2", SIGUSR2, .continues), ("PIPE", SIGPIPE, .continues),
        ("XFSZ", SIGXFSZ, .continues), ("TTOU", SIGTTOU, .continues),
    ]

    /// When the signal is sent: milliseconds after launch, or nil for mid-take (once audio flows).
    static let moments: [Int?] = [0, 10, 50, 200, nil]

    /// The three commands under test.
    enum Mode: String {
        case record, trigger, stream
    }

    func testRecordHandlesEverySignalAtEveryMoment() throws { try runMatrix(.record) }

    func testSignalTriggeredRecordHandlesEverySignalAtEveryMoment() throws { try runMatrix(.trigger) }

    func testStreamHandlesEverySignalAtEveryMoment() throws { try runMatrix(.stream) }

    /// The README's example, as a script would run it: SIGUSR1 as soon as jackhost can catch it
    /// (before it has even connected to the server) starts a take with its pre-roll.
    func testSignalTriggerExampleFromTheReadmeGivesATake() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = workDirectory.appendingPathComponent("take.wav").path
            let child = try JackhostBinary.start(
                [
                    "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter", "--signal-trigger", "--pre-roll", "0.5",
                    "--duration", "1.5",
                ], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { Self.catches(child.process.processIdentifier, SIGUSR1) })
            child.signal(SIGUSR1)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)
            let files = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(".wav") }
            XCTAssertEqual(files.count, 1, "one take: \(files) \(child.stderr)")
            print("SignalTests: SIGUSR1 sent as soon as the handler existed, before the server connection: \(files.count) take")
        }
    }

    /// The matrix sends a sample of the real-time range; this reads the whole disposition table
    /// of a running take instead. Every signal whose default action ends the process (all but
    /// SIGKILL, SIGSTOP, the crash signals left to the Swift runtime, and the ones ignored or
    /// stopping by default) is caught or ignored, every real-time signal from SIGRTMIN to
    /// SIGRTMAX included.
    func testEveryTerminatingSignalIsCaughtOrIgnoredDuringATake() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = path("take.wav")
            let child = try JackhostBinary.start(
                ["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter", "--duration", "3"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { Self.size(take) > 8192 }, child.stderr)
            let pid = child.process.processIdentifier
            let crashes: Set<Int32> = [SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS]
            let notTerminating: Set<Int32> = [SIGCHLD, SIGCONT, SIGURG, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU]
            // 32 and 33 are glibc's own (thread cancellation, set*id), never sent to a program.
            let glibc: Set<Int32> = [32, 33]
            let terminating = (Int32(1)...64).filter { !crashes.contains($0) && !notTerminating.contains($0) && !glibc.contains($0) }
            let uncovered = terminating.filter { !(Self.catches(pid, $0) || Self.ignores(pid, $0)) }
            XCTAssertEqual(uncovered, [], "signals that would still kill a take at their default action")
            child.signal(SIGTERM)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)
            print("SignalTests: all \(terminating.count) terminating signals of 1-64 caught or ignored mid-take")
        }
    }

    // MARK: SIGINT, SIGTERM and SIGKILL finalise the take

    func testSigintFinalisesTheFile() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("interrupted.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
            usleep(1_500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
            XCTAssertGreaterThan(header.frames, 48000)
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(reported, header.frames, "the report and the header agree: \(child.stdout)")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
            reliabilityFigures("SIGINT mid-take", "exit 0; header \(header.frames) frames = reported \(reported ?? -1); bit-exact")
        }
    }

    /// SIGTERM finalises like SIGINT; a second SIGINT while finalising changes nothing.
    func testSigtermAndARepeatedSigintFinaliseTheFile() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            for signals in [[SIGTERM], [SIGINT, SIGINT, SIGINT]] {
                let path = workDirectory.appendingPathComponent("signal-\(signals.count).wav").path
                let child = try JackhostBinary.start(
                    ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                    directory: workDirectory)
                XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
                usleep(1_000_000)
                for signal in signals { child.signal(signal) }
                XCTAssertEqual(child.wait(), 0, child.stderr)
                let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
                let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                XCTAssertEqual(reported, header.frames)
                XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
                reliabilityFigures(
                    signals.count == 1 ? "SIGTERM mid-take" : "3 x SIGINT mid-take",
                    "exit 0; header \(header.frames) frames = reported \(reported ?? -1); bit-exact")
            }
        }
    }

    func testSigkillLeavesAReadableFileMissingAtMostOneSecond() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("killed.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { generator.client.portExists("jackhost:in_2") }, child.stderr)
            let started = Date()
            usleep(3_000_000)
            child.signal(SIGKILL)
            let elapsed = Date().timeIntervalSince(started)
            _ = child.wait()
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "sndfile-info cannot read the killed take")
            XCTAssertGreaterThanOrEqual(Double(header.frames), (elapsed - 1.0) * 48000, "lost more than 1 s")
            let sox = try AudioFileCheck.readWithSox(path, channels: 2)
            XCTAssertEqual(sox.first?.count, header.frames)
            XCTAssertNil(SequenceCheck.verify(sox).firstMismatch)
            reliabilityFigures(
                "SIGKILL mid-take",
                String(
                    format: "killed after %.2f s; sndfile-info and sox read %d frames (%.2f s); lost at most %.2f s", elapsed, header.frames,
                    Double(header.frames) / 48000, elapsed - Double(header.frames) / 48000))
        }
    }

    // MARK: Every waiting state ends within a second of a signal

    /// Waiting for a FIFO's reader: before, open(2) blocked and SA_RESTART restarted it, so
    /// only SIGKILL ended jackhost.
    func testSignalsEndTheWaitForAFIFOReader() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            for signal in [SIGTERM, SIGINT, SIGHUP] {
                let fifo = path("fifo-\(signal)")
                XCTAssertEqual(mkfifo(fifo, 0o644), 0)
                let child = try JackhostBinary.start(["stream", "-s", server.name, "-o", fifo], directory: workDirectory)
                usleep(700_000)
                XCTAssertTrue(child.process.isRunning, "waiting for a reader: \(child.stderr)")
                let sent = Date()
                child.signal(signal)
                let ended = exit(of: child, since: sent)
                XCTAssertEqual(ended.status, 0, child.stderr)
                XCTAssertLessThan(ended.seconds, 1, "signal \(signal) while waiting for a FIFO reader")
                XCTAssertTrue(child.stderr.contains("stopped while waiting for a reader"), child.stderr)
                reliabilityFigures("signal \(signal) while waiting for a FIFO reader", "exit 0 after \(ended.seconds.formatted(places: 3)) s")
            }
        }
    }

    /// SIGHUP (an ssh session that drops) finalises the take, as SIGINT does; SIGUSR1 prints
    /// progress and the take goes on. Before, both killed jackhost with the header unwritten.
    func testHangupFinalisesTheTakeAndUser1PrintsProgress() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = path("hangup.wav")
            let child = try JackhostBinary.start(
                ["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(700_000)
            child.signal(SIGUSR1)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 3) { child.stderr.contains("status: ") }, child.stderr)
            XCTAssertTrue(child.process.isRunning, "SIGUSR1 does not stop the take")
            usleep(500_000)
            let sent = Date()
            child.signal(SIGHUP)
            let ended = exit(of: child, since: sent)
            XCTAssertEqual(ended.status, 0, child.stderr)
            XCTAssertLessThan(ended.seconds, 1)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(header.frames, reported, "the header holds every frame reported: \(child.stdout)")
            XCTAssertGreaterThan(header.frames, 48000)
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGHUP mid-take (SIGUSR1 before it)",
                "progress line printed, take went on; exit 0 after \(ended.seconds.formatted(places: 3)) s; header \(header.frames) frames = reported; bit-exact"
            )
        }
    }

    /// Waiting for a lost server to return (--reconnect): SIGINT ends it within a second and
    /// the take recorded before the loss stays valid.
    func testSignalWhileWaitingForTheServerToReturn() throws {
        try JACKFixture.serialized {
            let name = PrivateJACKServer.uniqueName(prefix: "jhtest-wait")
            let server = PrivateJACKServer(name: name, captureChannels: 2, synchronous: true)
            try server.start()
            defer {
                server.stop()
                // The crash below leaves the server's registry slot behind.
                PrivateJACKServer.reclaimRegistrySlot(name: name)
            }
            let generator = try TestSignalSource(name: "jhgen", server: name, channels: 2, signal: .sequence)
            let take = path("lost.wav")
            let child = try JackhostBinary.start(
                ["record", take, "-s", name, "--connect", "jhgen:out_.*", "--reconnect", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(800_000)
            server.crash()
            generator.abandon()
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { child.stderr.contains("waiting for it to return") }, child.stderr)
            usleep(500_000)
            let sent = Date()
            child.signal(SIGINT)
            let ended = exit(of: child, since: sent)
            XCTAssertEqual(ended.status, 0, child.stderr)
            XCTAssertLessThan(ended.seconds, 1, "SIGINT while waiting for the server")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            XCTAssertGreaterThan(header.frames, 24000)
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGINT while waiting for a lost server",
                "exit 0 after \(ended.seconds.formatted(places: 3)) s; the take before the loss holds \(header.frames) frames, bit-exact")
        }
    }

    /// A deferred plugin that needs 100 ms per 5.3 ms block. Before, exit waited for its ring to
    /// drain (40 s for a 3 s take) and ignored SIGINT; now a signal ends the run within a second,
    /// the recording is finalised, and what the slow consumer never got is reported by name.
    func testSlowConsumerCannotHoldTheExitHostage() throws {
        let plugin = try SlowPlugin.build(in: workDirectory)
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }

            // 1. SIGINT while it runs.
            let take = path("slow.wav")
            let child = try JackhostBinary.start(
                [
                    // In jackhost's own process: its drain limit is what this checks. (Isolated,
                    // the plugin's process has the same limit; see PluginIsolationTests.)
                    "run", "--record", take, "--plugin", plugin, "--plugin-isolation", "none", "-s", server.name,
                    "--connect", "jhgen:out_.*",
                ], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(1_500_000)
            var sent = Date()
            child.signal(SIGINT)
            var ended = exit(of: child, since: sent)
            XCTAssertLessThan(ended.seconds, 1, "SIGINT with a slow consumer: \(child.stderr)")
            XCTAssertEqual(ended.status, 1, "frames a consumer never received make it a failure: \(child.stderr)")
            XCTAssertTrue(child.stderr.contains("still queued for consumer \"SlowPlugin\""), child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            XCTAssertGreaterThan(header.frames, 48000, "the recorder's own take is complete and finalised")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGINT with a deferred plugin 19x slower than real time",
                "exit 1 after \(ended.seconds.formatted(places: 3)) s; the recorder's take \(header.frames) frames, bit-exact; \(child.stderr.split(separator: "\n").first { $0.contains("gave up") } ?? "")"
            )

            // 2. --duration ends: the drain gets 5 s, then what is left is given up and reported.
            let started = Date()
            let timed = try JackhostBinary.run(["run", "--plugin", plugin, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"])
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(timed.status, 1, timed.stderr)
            XCTAssertLessThan(seconds, 9, "a 1 s take with a slow consumer ends after its 5 s drain limit")
            let abandoned = timed.stderr.components(separatedBy: "gave up ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            XCTAssertGreaterThan(abandoned ?? 0, 20_000, timed.stderr)
            reliabilityFigures(
                "1 s take with the same plugin",
                "exit 1 after \(seconds.formatted(places: 2)) s (drain limit 5 s); \(abandoned ?? -1) frames given up, reported by consumer")

            // 3. A second signal during that drain ends it at once.
            let drained = try JackhostBinary.start(
                ["run", "--plugin", plugin, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"],
                directory: workDirectory)
            usleep(2_500_000)  // the 1 s take is over; the drain is under way
            XCTAssertTrue(drained.process.isRunning)
            sent = Date()
            drained.signal(SIGTERM)
            ended = exit(of: drained, since: sent)
            XCTAssertLessThan(ended.seconds, 1, "a signal during the drain: \(drained.stderr)")
            XCTAssertTrue(drained.stderr.contains("gave up"), drained.stderr)
            reliabilityFigures("SIGTERM during that drain", "exit after \(ended.seconds.formatted(places: 3)) s")
        }
    }

    // MARK: The matrix

    private func runMatrix(_ mode: Mode) throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            var early: [String: Int] = [:]
            var runs = 0
            for moment in Self.moments {
                for signal in Self.signals {
                    let label = "\(mode.rawValue) SIG\(signal.name) at \(moment.map { "\($0) ms" } ?? "mid-take")"
                    if try !runOnce(mode, signal: signal, moment: moment, server: server.name, label: label) {
                        early[moment.map { "\($0) ms" } ?? "mid-take", default: 0] += 1
                    }
                    runs += 1
                }
            }
            let counts = Self.moments.map { m in
                let key = m.map { "\($0) ms" } ?? "mid-take"
                return "\(key) \(early[key] ?? 0)"
            }
            print(
                "SignalTests \(mode.rawValue): \(runs) runs; sent before jackhost's handlers existed (default action, allowed), of \(Self.signals.count) each: \(counts.joined(separator: ", "))"
            )
        }
    }

    /// One run. Returns false when the signal went out before jackhost could catch it (the
    /// loader was still mapping its libraries): then only the default action is checked.
    private func runOnce(
        _ mode: Mode, signal: (name: String, number: Int32, action: Action), moment: Int?, server: String, label: String
    ) throws -> Bool {
        let directory = workDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let take = directory.appendingPathComponent("take.wav").path
        var arguments: [String]
        switch mode {
        case .record: arguments = ["record", take, "--no-meter"]
        case .trigger: arguments = ["record", take, "--no-meter", "--signal-trigger", "--pre-roll", "0.1"]
        case .stream: arguments = ["stream"]
        }
        arguments += ["-s", server, "--connect", "jhgen:out_.*", "--duration", "0.6"]
        let child = try RunningJackhost(arguments: arguments, directory: directory)
        let pid = child.process.processIdentifier
        if let moment {
            if moment > 0 { usleep(UInt32(moment) * 1000) }
        } else {
            let started = JACKFixture.waitUntil(timeout: 5) {
                mode == .stream
                    ? Self.size(child.stdoutURL.path) > 8192
                    : Self.size(take) > 8192
                        || (mode == .trigger && child.stderr.contains("capturing"))
            }
            XCTAssertTrue(started, "\(label): audio never flowed: \(child.stderr)")
        }
        let handled =
            signal.action == .stops || signal.number == SIGUSR1 || signal.number == SIGUSR2
            ? Self.catches(pid, signal.number) : Self.ignores(pid, signal.number)
        // Once audio flows, jackhost has long been past its first instruction: every signal must
        // meet its handler or its ignore there. (Before the trust issue, SIGUSR2, SIGALRM and the
        // like were still at their default mid-take and killed it; that must fail here.)
        if moment == nil {
            XCTAssertTrue(handled, "\(label): mid-take, jackhost neither catches nor ignores this signal")
        }
        kill(pid, signal.number)
        // SIGTTOU's default stops a process rather than ending it: continue one that it stopped.
        if signal.number == SIGTTOU && !handled {
            usleep(50_000)
            kill(pid, SIGCONT)
        }
        // A continuing signal in trigger mode: end the take that SIGUSR1 started, or the wait.
        let status = child.wait(timeout: 15)
        if child.process.terminationReason == .uncaughtSignal {
            XCTAssertFalse(handled, "\(label): killed by signal \(status) although its handler was installed: \(child.stderr)")
            XCTAssertEqual(status, signal.number, "\(label): died of another signal")
            return false
        }
        XCTAssertEqual(status, 0, "\(label): exit status: \(child.stderr)")
        XCTAssertFalse(child.stderr.contains("Backtrace"), "\(label): the Swift runtime's backtracer ran: \(child.stderr)")
        XCTAssertFalse(child.stderr.contains("segment"), "\(label): the take was split: \(child.stderr)")
        switch mode {
        case .stream: try checkStream(child, signal: signal, label: label)
        case .record, .trigger: try checkTakes(in: directory, child: child, mode: mode, signal: signal, label: label)
        }
        return true
    }

    /// A stream ends on whole frames, and a continuing signal lets it run to its duration.
    private func checkStream(_ child: RunningJackhost, signal: (name: String, number: Int32, action: Action), label: String) throws {
        let bytes = Self.size(child.stdoutURL.path)
        XCTAssertEqual(bytes % 8, 0, "\(label): the stream ends on a whole frame (\(bytes) bytes)")
        if signal.action == .continues {
            XCTAssertEqual(bytes, 28_800 * 8, "\(label): the stream ran its whole duration: \(child.stderr)")
        }
    }

    /// Every file is complete and holds what the summary says; a continuing signal leaves the
    /// plain take at its full duration.
    private func checkTakes(
        in directory: URL, child: RunningJackhost, mode: Mode, signal: (name: String, number: Int32, action: Action), label: String
    ) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".wav") }.sorted()
        let reported = Self.reportedFrames(child.stdout)
        var total = 0
        for file in files {
            let path = directory.appendingPathComponent(file).path
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "\(label): sndfile-info cannot read \(file)")
            total += header.frames
            let channels = try AudioFileCheck.readWithSox(path, channels: 2)
            XCTAssertEqual(channels.first?.count, header.frames, "\(label): sox reads every frame of \(file)")
            // A take stopped while jackhost was still connecting its inputs holds the silence it
            // captured before them: each channel is checked from its own first sound.
            if channels.allSatisfy({ $0.contains { $0 != 0 } }) {
                XCTAssertNil(SequenceCheck.verify(channels).firstMismatch, "\(label): \(file) is the sequence, intact")
            } else {
                XCTAssertLessThan(header.frames, 48000, "\(label): only a take cut short while connecting has a silent input")
            }
        }
        XCTAssertEqual(total, reported ?? 0, "\(label): header against the summary: \(child.stdout) \(child.stderr)")
        if mode == .record && signal.action == .continues {
            XCTAssertEqual(total, 28_800, "\(label): the take ran its whole duration: \(child.stderr)")
        }
        if mode == .trigger && signal.number == SIGUSR1 {
            XCTAssertEqual(files.count, 1, "\(label): SIGUSR1 started a take: \(child.stderr)")
        }
        if mode == .trigger && signal.number != SIGUSR1 {
            XCTAssertTrue(files.isEmpty, "\(label): no take without SIGUSR1: \(files)")
        }
        if signal.number == SIGUSR2 && mode == .record {
            XCTAssertTrue(child.stderr.contains("SIGUSR2 ignored"), "\(label): SIGUSR2 is reported: \(child.stderr)")
        }
    }

    /// The frames the summary line reports (`recorded N frames …`), or nil without one.
    static func reportedFrames(_ stdout: String) -> Int? {
        for line in stdout.split(separator: "\n") where line.hasPrefix("recorded ") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Whether process `pid` has a handler for `signal` (the SigCgt mask of /proc/PID/status).
    static func catches(_ pid: Int32, _ signal: Int32) -> Bool { mask(pid, "SigCgt:", signal) }

    /// Whether process `pid` ignores `signal` (the SigIgn mask).
    static func ignores(_ pid: Int32, _ signal: Int32) -> Bool { mask(pid, "SigIgn:", signal) }

    private static func mask(_ pid: Int32, _ field: String, _ signal: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let bits = UInt64(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return bits & (1 << UInt64(signal - 1)) != 0
    }
}
