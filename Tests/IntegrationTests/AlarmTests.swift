import Foundation
import JackHostSignals
import XCTest

/// Dead-air and clip alarms (`--silence`, `--clip`, `--on-alarm`) on a private dummy server in
/// real time: the generator goes silent for 35 s, the alarm is raised between 30 and 31 s of
/// silence (by the wall clock and by the take's own frames), its hook gets the documented
/// arguments, the take carries a marker where it was raised (read by an independent RIFF
/// walker), and it clears after sound returns; a clipping sine raises the clip alarm.
final class AlarmTests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-alarm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    /// A hook that appends its arguments and the time to `log`, one line a run.
    private func hookScript(_ log: String) throws -> String {
        let script = work.appendingPathComponent("on-alarm.sh").path
        try "#!/bin/sh\necho \"$@ $(date +%s.%N)\" >> \(log)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        return script
    }

    private func lines(_ path: String) -> [[String]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    func testDeadAirIsRaisedAfterThirtySecondsOfSilenceAndClearsWhenSoundReturns() throws {
        try JACKFixture.withServer(captureChannels: 2, realtime: true) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sine(frequency: 440, amplitude: 0.1))
            defer { generator.stop() }
            let take = work.appendingPathComponent("log.wav").path
            let hookLog = work.appendingPathComponent("hook.log").path
            let child = try RunningJackhost(
                arguments: [
                    "record", take, "-s", server.name, "--connect", "jhgen:out_.*", "--programme", "1-2", "--silence", "-50dBFS", "--after", "30s",
                    "--on-alarm", try hookScript(hookLog), "--no-meter",
                ], directory: work)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("capturing 2 channels") }, child.stderr)
            usleep(1_500_000)
            generator.isMuted = true
            let silenceStarted = Date()
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 40) { self.lines(hookLog).contains { $0.count > 1 && $0[1] == "raised" } }, child.stderr)
            let raisedAfter = (Double(lines(hookLog).first?.last ?? "") ?? 0) - silenceStarted.timeIntervalSince1970
            while Date().timeIntervalSince(silenceStarted) < 35 { usleep(10_000) }
            generator.isMuted = false
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { self.lines(hookLog).count >= 2 }, child.stderr)
            usleep(500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)

            let runs = lines(hookLog)
            XCTAssertEqual(runs.count, 2, "raised and cleared: \(runs)")
            XCTAssertEqual(Array(runs.first?.prefix(4) ?? []), ["dead-air", "raised", "1-2", take], "\(runs)")
            XCTAssertGreaterThan(Int(runs.first?[4] ?? "") ?? 0, 30 * 48000, "FRAME: the take's frames when it was raised")
            XCTAssertEqual(Array(runs.last?.prefix(4) ?? []), ["dead-air", "cleared", "1-2", take], "\(runs)")
            XCTAssertGreaterThanOrEqual(raisedAfter, 29.9, "raised after 30 s of silence by the wall clock")
            XCTAssertLessThan(raisedAfter, 31, "and within a second of it")
            XCTAssertEqual(child.stderr.components(separatedBy: "ALARM: dead air on 1-2 (below -50.0 dBFS for 30.0 s)").count - 1, 1, child.stderr)
            XCTAssertEqual(child.stderr.components(separatedBy: "alarm cleared: dead air on 1-2").count - 1, 1, child.stderr)
            XCTAssertTrue(child.stdout.contains("alarms: dead air raised 1, cleared 1"), child.stdout)

            // By the take's own frames: the marker sits 30 s (plus at most a window and a tick)
            // after the first silent frame, and the clear 2 s after the sound's return.
            let channels = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take)).channels
            let silentFrom = try XCTUnwrap(Self.firstSilentRun(channels[0], from: 0, seconds: 1))
            let soundFrom = try XCTUnwrap(channels[0][silentFrom...].firstIndex { $0 != 0 })
            XCTAssertEqual(Double(soundFrom - silentFrom) / 48000, 35, accuracy: 0.3, "35 s of dead air in the take")
            let cues = try IndependentCues.read(take)
            XCTAssertEqual(cues.map(\.label), ["dead-air raised 1-2", "dead-air cleared 1-2"], "\(cues)")
            let raisedAt = Double((cues.first?.frame ?? 0) - silentFrom) / 48000
            XCTAssertGreaterThanOrEqual(raisedAt, 30, "by the take's frames")
            XCTAssertLessThan(raisedAt, 30.25)
            let clearedAt = Double((cues.last?.frame ?? 0) - soundFrom) / 48000
            XCTAssertEqual(clearedAt, 2.0, accuracy: 0.15, "--clear-after 2s, to a window")
            reliabilityFigures(
                "dead air, 35 s of silence with --silence -50dBFS --after 30s",
                "raised after \(raisedAfter.formatted(places: 2)) s by the wall clock, \(raisedAt.formatted(places: 3)) s by the take's frames; cleared \(clearedAt.formatted(places: 3)) s after sound returned"
            )
        }
    }

    func testAClippingSineRaisesTheClipAlarm() throws {
        try JACKFixture.withServer(captureChannels: 1) { server in
            // A 0.95 full-scale sine: true peak -0.45 dBTP, over -1 dBTP in every window.
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 1, signal: .sine(frequency: 997, amplitude: 0.95))
            defer { generator.stop() }
            let result = try JackhostBinary.run(["meter", "-s", server.name, "--connect", "jhgen:out_1", "--clip", "5", "-d", "2", "-q"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(
                result.stderr.contains("ALARM: clipping on in_1 (true peak over -1 dBTP in 5 windows of 100 ms within a minute)"), result.stderr)
            XCTAssertEqual(result.stderr.components(separatedBy: "ALARM:").count - 1, 1, "raised once, not every window")
        }
    }

    func testAlarmOptionsAreCheckedBeforeJACK() throws {
        for (arguments, line) in [
            (["--silence", "-50"], nil as String?), (["--silence", "loud"], "--silence loud is not a level from -120 to 0 dBFS"),
            (["--after", "30s"], "--after applies to --silence LEVEL"),
            (["--silence", "-50dBFS", "--after", "0.5s"], "--after 0.5s is not a duration"),
            (["--clip", "0"], "--clip 0 is out of range"), (["--on-alarm", "true"], "--on-alarm runs on an alarm"),
            (["--clip", "3", "--on-alarm", "/no/such/program"], "--on-alarm: /no/such/program is not an executable file"),
        ] {
            let result = try JackhostBinary.run(["meter", "-s", "no-such-server"] + arguments)
            if let line {
                XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(line), "\(arguments): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            } else {
                XCTAssertEqual(result.status, 1, "accepted, then no server: \(result.stderr)")
            }
        }
    }

    /// The first frame from `from` that starts at least `seconds` of exact zeros.
    private static func firstSilentRun(_ samples: [Float], from: Int, seconds: Double) -> Int? {
        let needed = Int(seconds * 48000)
        var run = 0
        for index in from..<samples.count {
            run = samples[index] == 0 ? run + 1 : 0
            if run == needed { return index - needed + 1 }
        }
        return nil
    }
}

/// `--trigger START --release STOP --hold`, `--min-take`, `--max-take` against a generator whose
/// level moves in real time: exactly the takes expected, each read back by libsndfile.
final class LevelTriggerTests: XCTestCase {
    func testHysteresisMakesExactlyTheTakesExpected() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-hyst-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        try JACKFixture.withServer(captureChannels: 1, realtime: true) { server in
            // The sine's crest is 0.5 (-6 dBFS); gains put it above -20, between, or below -40.
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 1, signal: .sine(frequency: 440, amplitude: 0.5))
            defer { generator.stop() }
            generator.gain = 0.001  // -66 dBFS
            let child = try RunningJackhost(
                arguments: [
                    "record", work.appendingPathComponent("take.wav").path, "-s", server.name, "--connect", "jhgen:out_1", "--trigger", "-20dBFS",
                    "--release", "-40dBFS", "--hold", "0.5s", "--min-take", "0.3s", "--no-meter",
                ], directory: work)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("capturing 1 channels") }, child.stderr)
            // (gain, seconds): below; a 0.1 s cough (no take, shorter than --min-take); below;
            // loud (take 1); between (-30 dBFS: the take goes on); below (it stops after the
            // hold); between (no new take); loud (take 2); below.
            var changes: [Date] = []
            for (gain, seconds) in [(0.001, 0.5), (1, 0.1), (0.001, 1.0), (1, 1.0), (0.06, 1.0), (0.001, 1.0), (0.06, 1.0), (1, 1.0), (0.001, 1.0)] {
                generator.gain = Float(gain)
                changes.append(Date())
                usleep(useconds_t(seconds * 1_000_000))
            }
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
            let takes = ((try? FileManager.default.contentsOfDirectory(atPath: work.path)) ?? []).filter { $0.hasSuffix(".wav") }.sorted()
            XCTAssertEqual(takes, ["take-0001.wav", "take-0002.wav"], child.stdout + child.stderr)
            let first = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(work.appendingPathComponent("take-0001.wav").path))
            // Loud, then between, then the 0.5 s hold below the release (by the wall clock of the changes).
            let firstExpected = changes[5].timeIntervalSince(changes[3]) + 0.5
            XCTAssertEqual(Double(first.header.frames) / 48000, firstExpected, accuracy: 0.1, "the take spans the level between the two")
            let second = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(work.appendingPathComponent("take-0002.wav").path))
            XCTAssertEqual(Double(second.header.frames) / 48000, changes[8].timeIntervalSince(changes[7]) + 0.5, accuracy: 0.1)
        }
    }
}
