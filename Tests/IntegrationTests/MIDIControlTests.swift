import Foundation
import JackHost
import JackHostTesting
import XCTest

/// `--midi-control`: MIDI Machine Control from an independent JACK MIDI client (Tests/Peers/
/// midi_send.c, compiled here) starts and stops a take at the frame of each event, a note drops a
/// marker at its frame, and MMC to another device is ignored. The sender reports each event's
/// JACK frame time; the take is read back with sox and checked against the sequence, its first
/// frame and length come from the sidecar, and the marker also from the WAV's cue chunk, read by
/// an independent RIFF walker.
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

    func testMachineControlStartsAndStopsATakeAndANoteMarksItInWAV() throws { try machineControlTake(extension: "wav") }

    func testMachineControlStartsAndStopsATakeAndANoteMarksItInRF64() throws { try machineControlTake(extension: "rf64") }

    /// W64 keeps its markers before the audio, in room reserved for them (Wave64Writer).
    func testMachineControlStartsAndStopsATakeAndANoteMarksItInW64() throws { try machineControlTake(extension: "w64") }

    /// A private server with the sequence on `jhmidigen:out_*`, and `record FILE --signal-trigger
    /// --sidecar --midi-control` with `options` added, once its control input is up; `body` gets
    /// the server, jackhost and the built sender.
    private func withMIDIControlledTake(
        _ file: String, _ options: [String], _ body: (PrivateJACKServer, RunningJackhost, String) throws -> Void
    ) throws {
        let sender = try buildSender()
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhmidigen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try RunningJackhost(
                arguments: [
                    "record", path(file), "-s", server.name, "--connect", "jhmidigen:out_.*", "--signal-trigger", "--sidecar",
                    "--no-meter", "--midi-control",
                ] + options, directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("MIDI control at jackhost:control") }, child.stderr)
            try body(server, child, sender)
        }
    }

    /// A take driven by MMC and a note, in the container `extension` names, checked to the frame.
    private func machineControlTake(extension: String) throws {
        try withMIDIControlledTake("take.\(`extension`)", ["--midi-marker", "note:60"]) { server, child, sender in
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

            let takes = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(".\(`extension`)") }.sorted()
            XCTAssertEqual(takes.count, 1, "\(takes)\n\(child.stderr)")
            guard frames.count == 4, let take = takes.first else { return }
            let sidecar = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path(take) + ".json"))) as? [String: Any])
            let first = try XCTUnwrap(sidecar["firstSample"] as? [String: Any])
            // To the frame: the take's first frame is the Record Strobe's, and its end the Stop's.
            let startFrame = try XCTUnwrap(first["jackFrameTime"] as? Int)
            XCTAssertEqual(UInt32(truncatingIfNeeded: startFrame), frames[0], "the take starts at the Record Strobe's frame")
            let length = try XCTUnwrap(sidecar["frames"] as? Int)
            XCTAssertEqual(UInt32(truncatingIfNeeded: startFrame + length), frames[3], "the take ends at the Stop's frame")
            XCTAssertFalse(child.stderr.contains("passed it"), child.stderr)
            let channels = try AudioFileCheck.readWithSox(path(take), channels: 2)
            XCTAssertEqual(channels[0].count, length, "sox reads the sidecar's length")
            let report = SequenceCheck.verify(channels)
            XCTAssertNil(report.firstMismatch, report.description)
            // The marker, at the note's frame, in the sidecar and in the file's cue chunk.
            let markers = try XCTUnwrap(sidecar["markers"] as? [[String: Any]], "\(sidecar)")
            XCTAssertEqual(markers.count, 1, "\(markers)")
            let noteFrame = Int(Int32(bitPattern: frames[1] &- UInt32(truncatingIfNeeded: startFrame)))
            XCTAssertEqual(markers.first?["frame"] as? Int, noteFrame, "the marker is at the note's frame")
            XCTAssertEqual(try IndependentCues.read(path(take)).map(\.frame), [noteFrame], "the cue chunk, read independently")
            XCTAssertEqual(markers.first?["source"] as? String, "MIDI note 60")
            let output = child.stdout + child.stderr
            XCTAssertTrue(output.contains("MIDI control: 4 event(s) read, 3 command(s) or marker(s), 0 lost"), output)
        }
    }

    /// The rest of MMC from the same independent client, with `--mmc-id 5` and a controller as
    /// the marker: Play to device 5 starts a take and Record Exit ends it, each at its event's
    /// frame; a controller marks once per rise past 64 (a held or a repeated high value does
    /// not mark again); a broadcast Record Strobe starts the second take and a Stop to device 5
    /// ends it.
    func testPlayRecordExitADeviceIDAndAControllerMarker() throws {
        try withMIDIControlledTake("take.wav", ["--mmc-id", "5", "--midi-marker", "cc:20"]) { server, child, sender in
            let events = [
                "300:11:f07f050602f7",  // Play, device 5: take 1 starts
                "200:3:b0147f", "100:5:b01464",  // CC 20 rises (a marker), stays high (none)
                "100:7:b01400", "100:9:b0147f",  // falls, rises again (a second marker)
                "200:30:f07f050607f7",  // Record Exit, device 5: take 1 ends
                "300:2:f07f7f0606f7",  // Record Strobe, all devices: take 2 starts
                "300:44:f07f050601f7",  // Stop, device 5: take 2 ends
            ]
            let sent = try JACKFixture.run(sender, [server.name, "jackhost:control"] + events, timeout: 20)
            XCTAssertEqual(sent.status, 0, sent.stderr)
            let frames = sent.stdout.split(separator: "\n").compactMap { UInt32($0.split(separator: " ").last ?? "") }
            XCTAssertEqual(frames.count, events.count, sent.stdout)
            usleep(500_000)
            child.signal(SIGTERM)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)
            guard frames.count == events.count else { return }

            let takes = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasSuffix(".wav") }
            XCTAssertEqual(takes.count, 2, "\(takes)\n\(child.stderr)")
            let sidecars = try takes.map {
                try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path($0) + ".json"))) as? [String: Any])
            }
            func span(_ sidecar: [String: Any]) -> (start: UInt32, end: UInt32) {
                let start = ((sidecar["firstSample"] as? [String: Any])?["jackFrameTime"] as? Int) ?? -1
                return (UInt32(truncatingIfNeeded: start), UInt32(truncatingIfNeeded: start + ((sidecar["frames"] as? Int) ?? 0)))
            }
            let spans = sidecars.map(span).sorted { Int32(bitPattern: $0.start &- $1.start) < 0 }
            guard spans.count == 2 else { return }
            XCTAssertEqual(spans[0].start, frames[0], "take 1 starts at Play's frame")
            XCTAssertEqual(spans[0].end, frames[5], "take 1 ends at Record Exit's frame")
            XCTAssertEqual(spans[1].start, frames[6], "take 2 starts at the broadcast Record Strobe's frame")
            XCTAssertEqual(spans[1].end, frames[7], "take 2 ends at the Stop to device 5")
            let first = try XCTUnwrap(sidecars.first { span($0).start == spans[0].start })
            let firstName = try XCTUnwrap(takes.first { (try? IndependentCues.read(path($0)).isEmpty) == false }, "a take with markers")
            let wanted = [frames[1], frames[4]].map { Int(Int32(bitPattern: $0 &- spans[0].start)) }
            XCTAssertEqual((first["markers"] as? [[String: Any]])?.compactMap { $0["frame"] as? Int }, wanted, "one marker per rise")
            XCTAssertEqual(try IndependentCues.read(path(firstName)).map(\.frame), wanted, "the cue chunk, read independently")
            for take in takes {
                let report = SequenceCheck.verify(try AudioFileCheck.readWithSox(path(take), channels: 2))
                XCTAssertNil(report.firstMismatch, "\(take): \(report.description)")
            }
            let output = child.stdout + child.stderr
            XCTAssertTrue(output.contains("MIDI control: 8 event(s) read, 6 command(s) or marker(s), 0 lost"), output)
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
