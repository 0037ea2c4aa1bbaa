import Foundation
import JackHost
import JackHostTesting
import XCTest

/// jackhost recording an AES67-style stream (RTP L24/48 kHz announced by SAP) that PipeWire
/// 0.3.65 receives in another network namespace (``Aes67Environment``).
///
/// PipeWire's `module-rtp-source` keeps its buffer at the target latency by adapting its rate,
/// and its adapter then resamples: the samples jackhost gets are not the samples on the wire
/// (measured: bit-exact only until the rate controller's first correction, then every sample
/// interpolated, `resample.disable = true` or not). So the take is verified by content (the
/// frequency of each channel's tone) and, sample for sample, against `jack_capture` recording
/// the same ports at the same time: jackhost must record exactly what PipeWire delivers.
final class Aes67Tests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("jhaestest-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    func testSAPStreamIsRecordedByNameAndFollowedAcrossASenderRestart() throws {
        try JACKFixture.serialized {
            let aes = try Aes67Environment(sessionName: "Stage Left")
            defer { aes.stop() }
            // tones: 220 Hz on channel 1, 440 Hz on channel 2, amplitude 0.5.
            try aes.startSender(kind: "tones")

            // SAP discovery: the receiver makes a node named after the SDP session, whose JACK
            // client has the session's name, with the format the SDP announced.
            let ports = ["Stage Left:capture_FL", "Stage Left:capture_FR"]
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 20) { aes.receiverPorts() == ports }, "ports: \(aes.receiverPorts())")
            let node = try XCTUnwrap(aes.receiverNodes().first { $0["rtp.session"] as? String == "Stage Left" })
            XCTAssertEqual(node["rtp.fmt"] as? String, "L24/48000/2")
            XCTAssertEqual(node["node.name"] as? String, "Stage Left")

            // What the sender puts on the wire, read without PipeWire: 1 ms packets, none lost.
            let wire = try aes.listenOnTheWire(seconds: 2)
            XCTAssertEqual(wire["framesPerPacket"] as? [Int], [48], "\(wire)")
            XCTAssertEqual(wire["lostPackets"] as? Int, 0, "\(wire)")
            XCTAssertGreaterThan(wire["packets"] as? Int ?? 0, 1900, "\(wire)")

            try recordTenSeconds(aes)
            try listStreams(aes)
            try followSenderRestart(aes)
        }
    }

    /// 1 % of the packets dropped on the way in (nftables): PipeWire notices (its log), JACK
    /// clients can't; jackhost still records exactly what PipeWire delivers, as jack_capture does.
    func testPacketLossReachesNoJACKClientAndJackhostAddsNone() throws {
        try JACKFixture.serialized {
            let aes = try Aes67Environment(sessionName: "Stage Left")
            defer { aes.stop() }
            try aes.startSender(kind: "tones")
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 20) { aes.receiverPorts().count == 2 }, "ports: \(aes.receiverPorts())")
            try aes.dropPackets(percent: 1)
            let wire = try aes.listenOnTheWire(seconds: 3)
            let lost = wire["lostPackets"] as? Int ?? -1, packets = wire["packets"] as? Int ?? 0
            XCTAssertTrue((5...120).contains(lost), "about 1 % of \(packets) packets lost on the wire: \(wire)")
            let independentWav = work.appendingPathComponent("jack_capture.wav").path
            let independent = try startIndependentRecorder(aes.receiver, to: independentWav)
            defer { independent.stop() }
            let wav = work.appendingPathComponent("lossy.wav").path
            let record = try aes.receiver.run(
                JackhostBinary.path, ["record", wav, "-c", "2", "--connect", "Stage Left:capture_.*", "-d", "5", "--no-meter"])
            XCTAssertEqual(record.status, 0, record.stderr)
            XCTAssertTrue(record.stdout.contains("silence inserted for 0 dropped frames"), record.stdout)
            kill(independent.process.processIdentifier, SIGINT)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 15) { !independent.process.isRunning }, independent.log)
            let ours = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(wav)).channels
            let theirs = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(independentWav), independent.log).channels
            let start = try XCTUnwrap(Aes67Tests.soundingFrom(ours)) + 1024
            let comparison = Aes67Tests.compare(ours, with: theirs, from: start)
            XCTAssertEqual(comparison.mismatches, 0, "samples that differ from jack_capture's: \(comparison)")
            XCTAssertGreaterThan(comparison.compared, 200_000, "\(comparison)")
            let noticed = aes.receiver.pipewireLog.components(separatedBy: "unexpected seq").count - 1
            XCTAssertGreaterThan(noticed, 0, "PipeWire logs the lost packets")
            reliabilityFigures(
                "AES67, 1 % packet loss",
                "\(lost) of \(packets) packets lost on the wire in 3 s; PipeWire logged \(noticed) sequence breaks; jackhost 0 dropped and identical to jack_capture over \(comparison.compared) frames"
            )
        }
    }

    /// A 10 s take of the stream's ports, found by the stream's name, beside jack_capture.
    private func recordTenSeconds(_ aes: Aes67Environment) throws {
        let receiver = aes.receiver
        let independentWav = work.appendingPathComponent("jack_capture.wav").path
        let independent = try startIndependentRecorder(receiver, to: independentWav)
        defer { independent.stop() }
        let wav = work.appendingPathComponent("aes67.wav").path
        let record = try receiver.run(
            JackhostBinary.path, ["record", wav, "-c", "2", "--connect", "Stage Left:capture_.*", "-d", "10", "--sidecar", "--no-meter"])
        XCTAssertEqual(record.status, 0, record.stderr)
        JackhostBinary.assertNoSanitizerReport(record.stderr)
        XCTAssertTrue(record.stdout.contains("silence inserted for 0 dropped frames"), record.stdout)
        kill(independent.process.processIdentifier, SIGINT)
        XCTAssertTrue(JACKFixture.waitUntil(timeout: 15) { !independent.process.isRunning }, independent.log)

        XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(wav), .init(frames: 480_000, channels: 2, sampleRate: 48000))
        // Both read as float by libsndfile: sox's 32-bit integers would round the resampled
        // samples' low bits near zero, and the comparison is exact.
        let ours = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(wav)).channels
        let theirs = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(independentWav), independent.log).channels
        let start = try XCTUnwrap(Aes67Tests.soundingFrom(ours), "the take carries the stream") + 1024
        let comparison = Aes67Tests.compare(ours, with: theirs, from: start)
        XCTAssertNotNil(comparison.offset, "jackhost's take is found in jack_capture's")
        XCTAssertEqual(comparison.mismatches, 0, "samples that differ from jack_capture's on the same ports: \(comparison)")
        XCTAssertGreaterThan(comparison.compared, 400_000)

        // By content, read by sox: each channel's tone, second by second after the lead-in.
        // PipeWire's rate adaptation bends the pitch (measured at 100 ms target latency: the
        // rate hunts within 0.07 % over a 25 s period), so each second is allowed 0.5 %: a
        // swapped channel is 100 % off, a gap or a repeated block shows as a second far off.
        let bySox = try AudioFileCheck.readWithSox(wav, channels: 2)
        let frequencies = bySox.map { Aes67Tests.frequency(Array($0[start...]), rate: 48000) }
        let seconds = bySox.map { channel in
            stride(from: start, to: channel.count - 48000, by: 48000).map { Aes67Tests.frequency(Array(channel[$0..<$0 + 48000]), rate: 48000) }
        }
        for (channel, tone) in [(0, 220.0), (1, 440.0)] {
            let off = seconds[channel].filter { abs($0 - tone) > tone * 0.005 }
            XCTAssertEqual(off, [], "channel \(channel + 1) carries the sender's \(tone) Hz, second by second: \(seconds[channel])")
        }
        print("AES67 tones by second: \(seconds.map { $0.map { String(format: "%.2f", $0) } })")

        // The sidecar names the stream's ports as the inputs' sources.
        let sidecar = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: wav + ".json"))) as? [String: Any])
        let inputs = (sidecar["inputs"] as? [[String: Any]]) ?? []
        XCTAssertEqual(inputs.map { $0["connections"] as? [String] ?? [] }, [["Stage Left:capture_FL"], ["Stage Left:capture_FR"]])
        let silent = Aes67Tests.silentWindows(ours, from: start)
        reliabilityFigures(
            "AES67 (PipeWire 0.3.65 RTP, SAP)",
            "10 s take of L24/48 kHz: \(comparison.compared) frames identical to jack_capture's on the same ports; tones \(String(format: "%.3f", frequencies[0])) and \(String(format: "%.3f", frequencies[1])) Hz (220, 440 sent); \(silent) silent 10 ms window(s) after the lead-in"
        )
    }

    /// `jackhost info` lists the stream by its session name with its 2 channels, and a
    /// `--connect-stream` name that is on no client is refused in one line (status 1, as a
    /// `--connect` pattern that matches nothing).
    private func listStreams(_ aes: Aes67Environment) throws {
        let info = try aes.receiver.run(JackhostBinary.path, ["info", "--json"])
        XCTAssertEqual(info.status, 0, info.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any], info.stdout)
        let streams = try XCTUnwrap(object["streams"] as? [[String: Any]], info.stdout)
        let stream = try XCTUnwrap(streams.first { $0["name"] as? String == "Stage Left" }, info.stdout)
        XCTAssertEqual(stream["channels"] as? Int, 2)
        XCTAssertEqual(stream["ports"] as? [String], ["Stage Left:capture_FL", "Stage Left:capture_FR"])
        // PipeWire flags an Audio/Source node's ports physical, as a sound card's.
        XCTAssertEqual(stream["physical"] as? Bool, true)
        let text = try aes.receiver.run(JackhostBinary.path, ["info"])
        XCTAssertTrue(text.stdout.contains("Stage Left: FL FR (2 channels, physical)"), text.stdout)
        let unknown = try aes.receiver.run(
            JackhostBinary.path, ["record", work.appendingPathComponent("none.wav").path, "--connect-stream", "Stage Right", "-d", "1"])
        XCTAssertEqual(unknown.status, 1, unknown.stderr)
        let lines = unknown.stderr.split(separator: "\n").filter { $0.contains("Stage Right") }
        XCTAssertEqual(lines.count, 1, unknown.stderr)
        XCTAssertTrue(lines.first?.contains("is no JACK client with audio output ports") ?? false, unknown.stderr)
    }

    /// The stream recorded by its session name (`--connect-stream`, no channel count: one input
    /// per port); jackhost's inputs carry the stream's name and channel as pretty-names, read
    /// back with jack_property. Then the sender stops (SIGTERM: SAP deletion) and starts again;
    /// jackhost records on and reconnects the stream's returning ports.
    private func followSenderRestart(_ aes: Aes67Environment) throws {
        let wav = work.appendingPathComponent("restart.wav").path
        let take = try aes.receiver.start(
            "take", JackhostBinary.path, ["record", wav, "--connect-stream", "Stage Left", "--no-meter"])
        defer { take.stop() }
        XCTAssertTrue(JACKFixture.waitUntil { self.connections(aes.receiver) == ["Stage Left:capture_FL", "Stage Left:capture_FR"] }, take.log)
        XCTAssertTrue(take.log.contains("capturing 2 channels"), take.log)
        var pretty: [String?] = []
        let named = JACKFixture.waitUntil(timeout: 10) {
            pretty = (1...2).map { self.prettyName(aes.receiver, "jackhost:in_\($0)") }
            return pretty == ["Stage Left FL", "Stage Left FR"]
        }
        XCTAssertTrue(named, "pretty-names: \(pretty)\n\(take.log)")
        usleep(1_500_000)
        aes.stopSender()
        XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { aes.receiverPorts().isEmpty }, "the stream's ports go away with its SAP deletion")
        usleep(1_000_000)
        XCTAssertTrue(take.process.isRunning, "the take goes on without its source: \(take.log)")
        try aes.startSender(kind: "tones")
        XCTAssertTrue(
            JACKFixture.waitUntil(timeout: 20) { self.connections(aes.receiver) == ["Stage Left:capture_FL", "Stage Left:capture_FR"] },
            "jackhost reconnected the returning stream: \(connections(aes.receiver))\n\(take.log)")
        usleep(2_000_000)
        kill(take.process.processIdentifier, SIGINT)
        XCTAssertTrue(JACKFixture.waitUntil(timeout: 20) { !take.process.isRunning }, take.log)
        XCTAssertEqual(take.process.terminationStatus, 0, take.log)
        XCTAssertFalse(take.log.contains("not restored"), take.log)
        XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(wav)?.channels, 2, "one input per port of the stream")
        let channels = try AudioFileCheck.readWithSox(wav, channels: 2)
        let start = try XCTUnwrap(Aes67Tests.soundingFrom(channels)) + 1024
        // Sound, then the stream's absence (silence, as long as the sender was away), then sound.
        let gap = Aes67Tests.longestSilence(channels, from: start)
        XCTAssertGreaterThan(gap.length, 48000, "at least the second the sender was away is silent")
        let tail = channels.map { Array($0.suffix(48000)) }
        XCTAssertEqual(Aes67Tests.frequency(tail[0], rate: 48000), 220, accuracy: 1, "the returned stream's channel 1, recorded")
        XCTAssertEqual(Aes67Tests.frequency(tail[1], rate: 48000), 440, accuracy: 1, "and its channel 2")
        // Each input's source went away and came back, each said with the frames it was away; the
        // summary sums them. The counted absence lies inside the silence the take holds (which
        // also has the sender's last buffer draining and the receiver's latency after the return).
        let returns = take.log.split(separator: "\n").filter { $0.contains("is back on jackhost:in_") }
        XCTAssertEqual(returns.count, 2, take.log)
        let counted = returns.compactMap { line in Int(line.components(separatedBy: "reconnected after ").last?.split(separator: " ").first ?? "") }
        XCTAssertEqual(counted.count, 2, "\(returns)")
        for frames in counted {
            XCTAssertGreaterThan(frames, 24000, "the sender was away more than half a second: \(frames)")
            XCTAssertLessThanOrEqual(frames, gap.length + 4800, "counted within the silence the file holds (\(gap.length) frames)")
        }
        XCTAssertTrue(
            take.log.contains(
                "sources came back 2 time(s) after going away, reconnected each time; their inputs recorded \(counted.reduce(0, +)) frames of silence in all"
            ),
            take.log)
        reliabilityFigures(
            "AES67 sender restart",
            "ports gone on SAP deletion, back on the new announcement, reconnected; the absence is \(gap.length) silent frames, counted \(counted) per input"
        )
    }

    /// A port's pretty-name as `jack_property -p -l` (JACK's own tool) lists it: under
    /// pw-jack, `key: ...pretty-name value: Stage Left FL type: ` on one line.
    private func prettyName(_ pipewire: PipeWireEnvironment, _ port: String) -> String? {
        let listing = (try? pipewire.run("jack_property", ["-p", "-l", port]).stdout) ?? ""
        let line = listing.split(separator: "\n").first { $0.contains(JackClient.prettyNameKey) }
        let value = line?.components(separatedBy: " value: ").dropFirst().first
        return value?.components(separatedBy: " type:").first?.trimmingCharacters(in: .whitespaces)
    }

    /// jackhost's inputs' sources on the receiver, in input order.
    private func connections(_ pipewire: PipeWireEnvironment) -> [String] {
        (1...2).compactMap { input in
            let lines = (try? pipewire.run("jack_lsp", ["-c", "jackhost:in_\(input)"]).stdout) ?? ""
            return lines.split(separator: "\n").dropFirst().first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// jack_capture (an independent recorder) on the stream's two ports, as 32-bit float.
    private func startIndependentRecorder(_ pipewire: PipeWireEnvironment, to path: String) throws -> Daemon {
        guard let tool = PrivateJACKServer.findExecutable("jack_capture") else {
            try skipEnvironment("AES67 suite: jack_capture is missing; run scripts/setup --environments")
        }
        let recorder = try pipewire.start(
            "jack_capture", tool,
            ["-ns", "-dc", "-b", "FLOAT", "-d", "60", "--port", "Stage Left:capture_FL", "--port", "Stage Left:capture_FR", path])
        let connected = JACKFixture.waitUntil(timeout: 10) {
            ["FL", "FR"].allSatisfy { ((try? pipewire.run("jack_lsp", ["-c", "Stage Left:capture_\($0)"]).stdout) ?? "").contains("jack_capture") }
        }
        guard connected else { throw JackError.serverStartFailed(reason: "jack_capture never connected: \(recorder.log)") }
        return recorder
    }

    /// The first frame where both channels sound (the ports are connected after the take starts).
    static func soundingFrom(_ channels: [[Float]]) -> Int? {
        channels[0].indices.first { index in channels.allSatisfy { $0[index] != 0 } }
    }

    /// Finds `ours` in `theirs` (256 sounding frames from the middle of `ours`, matched exactly)
    /// and compares every frame both takes have from `start` on.
    static func compare(
        _ ours: [[Float]], with theirs: [[Float]], from start: Int
    ) -> (
        offset: Int?, compared: Int, mismatches: Int, firstMismatches: [Int]
    ) {
        let probe = 256
        let middle = (ours[0].count / 2..<ours[0].count - probe).first { i in (i..<i + probe).allSatisfy { ours[0][$0] != 0 } }
        guard let middle else { return (nil, 0, 0, []) }
        let found = (0..<max(0, theirs[0].count - probe)).first { j in
            (0..<probe).allSatisfy { k in ours[0][middle + k] == theirs[0][j + k] && ours[1][middle + k] == theirs[1][j + k] }
        }
        guard let found, found - middle + start >= 0 else { return (nil, 0, 0, []) }
        let offset = found - middle + start
        let end = min(ours[0].count, theirs[0].count - offset + start)
        let mismatches = (start..<end).filter { i in (0..<2).contains { ours[$0][i] != theirs[$0][i - start + offset] } }
        return (offset - start, end - start, mismatches.count, Array(mismatches.prefix(40)))
    }

    /// A tone's frequency from its rising zero crossings (linearly interpolated).
    static func frequency(_ samples: [Float], rate: Int) -> Double {
        var crossings: [Double] = []
        for i in 1..<samples.count where samples[i - 1] < 0 && samples[i] >= 0 {
            let fraction = Double(-samples[i - 1]) / Double(samples[i] - samples[i - 1])
            crossings.append(Double(i - 1) + fraction)
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / (last - first)
    }

    /// 10 ms windows (after `start`) in which both channels are silent.
    static func silentWindows(_ channels: [[Float]], from start: Int) -> Int {
        stride(from: start, to: channels[0].count - 480, by: 480).filter { w in
            channels.allSatisfy { $0[w..<w + 480].allSatisfy { $0 == 0 } }
        }.count
    }

    /// The longest run of frames (after `start`) in which both channels are silent.
    static func longestSilence(_ channels: [[Float]], from start: Int) -> (start: Int, length: Int) {
        var best = (start: 0, length: 0), runStart = start
        for i in start..<channels[0].count {
            if channels[0][i] != 0 || channels[1][i] != 0 {
                runStart = i + 1
            } else if i - runStart + 1 > best.length {
                best = (runStart, i - runStart + 1)
            }
        }
        return best
    }
}
