import Foundation
import JackHost
import JackHostTesting
import XCTest

/// `--midi-control`: MIDI Machine Control from an independent JACK MIDI client (Tests/Peers/
/// midi_send.c, compiled here) starts and stops a take at the cycle being captured when each
/// command reaches the recorder (after the event, within the loop's tick and a few cycles), a note
/// drops a marker, and MMC to another device is ignored. The take is read back with sox and
/// checked against the sequence; its start frame comes from the sidecar.
final class MIDIControlTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-midi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Builds the sender with the system's C compiler and libjack.
    private func buildSender() throws -> String {
        let source = ExamplePlugins.repositoryRoot.appendingPathComponent("Tests/Peers/midi_send.c").path
        let output = path("midi_send")
        let result = try JACKFixture.run("cc", ["-O2", "-Wall", source, "-o", output, "-ljack"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return output
    }

    func testMachineControlStartsAndStopsATakeAndANoteMarksIt() throws {
        let sender = try buildSender()
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhmidigen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try RunningJackhost(
                arguments: [
                    "record", path("take.wav"), "-s", server.name, "--connect", "jhmidigen:out_.*", "--signal-trigger", "--sidecar",
                    "--no-meter", "--midi-control", "--midi-marker", "note:60",
                ], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("MIDI control at jackhost:control") }, child.stderr)
            // Record Strobe at frame 17 of its cycle, note 60, MMC Stop to device 1 (not ours:
            // ignored), then Stop at frame 40 of its cycle.
            let sent = try JACKFixture.run(
                sender, [server.name, "jackhost:control", "300:17:f07f7f0606f7", "400:5:903c64", "100:9:f07f010601f7", "400:40:f07f7f0601f7"],
                timeout: 20)
            XCTAssertEqual(sent.status, 0, sent.stderr)
            let frames = sent.stdout.split(separator: "\n").compactMap { UInt32($0.split(separator: " ").last ?? "") }
            XCTAssertEqual(frames.count, 4, sent.stdout)
            usleep(500_000)
            child.signal(SIGTERM)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)

            let takes = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(".wav") }.sorted()
            XCTAssertEqual(takes.count, 1, "\(takes)\n\(child.stderr)")
            guard frames.count == 4, let take = takes.first else { return }
            let sidecar = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path(take) + ".json"))) as? [String: Any])
            let first = try XCTUnwrap(sidecar["firstSample"] as? [String: Any])
            // Commands act at the first frame of the cycle captured when they reach the recorder: the
            // event's own cycle (which starts up to a period before it) or a later one, by at most
            // the loop's 20 ms tick and the writer's lag (a quarter second allows for load).
            let lateness = 48000 / 4, period = 4096
            let startFrame = try XCTUnwrap(first["jackFrameTime"] as? Int)
            let startLate = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: startFrame) &- frames[0]))
            XCTAssertTrue((-period...lateness).contains(startLate), "the take starts \(startLate) frames after the Record Strobe")
            let length = try XCTUnwrap(sidecar["frames"] as? Int)
            let stopLate = Int(Int32(bitPattern: UInt32(truncatingIfNeeded: startFrame + length) &- frames[3]))
            XCTAssertTrue((-period...lateness).contains(stopLate), "the take ends \(stopLate) frames after the Stop")
            let channels = try AudioFileCheck.readWithSox(path(take), channels: 2)
            XCTAssertEqual(channels[0].count, length, "sox reads the sidecar's length")
            let report = SequenceCheck.verify(channels)
            XCTAssertNil(report.firstMismatch, report.description)
            // The marker: placed at the first frame of the cycle being captured when the controller
            // acted: the note's cycle (it may start before the note) or a later one.
            let markers = try XCTUnwrap(sidecar["markers"] as? [[String: Any]], "\(sidecar)")
            XCTAssertEqual(markers.count, 1, "\(markers)")
            let markerFrame = markers.first?["frame"] as? Int ?? -1
            let noteFrame = Int(Int32(bitPattern: frames[1] &- UInt32(truncatingIfNeeded: startFrame)))
            XCTAssertTrue((noteFrame - period...noteFrame + lateness).contains(markerFrame), "marker at \(markerFrame), note at \(noteFrame)")
            XCTAssertEqual(markers.first?["source"] as? String, "MIDI note 60")
            let output = child.stdout + child.stderr
            XCTAssertTrue(output.contains("MIDI control: 4 event(s) read, 3 command(s) or marker(s), 0 lost"), output)
        }
    }

    func testOptionsThatNeedMIDIControlAreOneLine() throws {
        for (arguments, expected) in [
            (["--mmc-id", "3"], "--mmc-id needs --midi-control"),
            (["--midi-control", "--midi-marker", "pedal:64"], "give note:N or cc:N"),
            (["--midi-control", "--mmc-id", "127"], "mmc-id"),
        ] {
            let child = try RunningJackhost(arguments: ["record", path("x.wav"), "-s", "nowhere"] + arguments, directory: workDirectory)
            XCTAssertEqual(child.wait(timeout: 10), 2, child.stderr)
            XCTAssertTrue(child.stderr.contains(expected), child.stderr)
            XCTAssertEqual(child.stderr.split(separator: "\n").count, 1, child.stderr)
        }
    }
}
