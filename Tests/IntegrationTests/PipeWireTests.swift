import Foundation
import JackHost
import JackHostSignals
import XCTest

/// jackhost under PipeWire's JACK, unchanged: every JACK client here is a child process
/// started with `pw-jack`, so it loads PipeWire's libjack instead of jackd's.
final class PipeWireTests: XCTestCase {
    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("jhpwtest-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    func testEverythingUnderPipeWire() throws {
        try JACKFixture.serialized {
            let pipewire = try PipeWireEnvironment()
            defer { pipewire.stop() }
            let jackhost = JackhostBinary.path

            // info reports what PipeWire reports (virtual nodes are not physical: 0 channels).
            let (rate, period) = try pipewire.reportedRateAndPeriod()
            let info = try pipewire.run(jackhost, ["info", "--json"])
            XCTAssertEqual(info.status, 0, info.stderr)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(object["sampleRate"] as? Double, Double(rate))
            XCTAssertEqual(object["bufferFrames"] as? Int, period)
            print("PipeWire reports \(rate) Hz, \(period) frames; jackhost info agrees")

            // Ports and their metadata look the same to patchbays as under jackd.
            let running = try pipewire.start("host", jackhost, ["meter", "-c", "2", "-q", "-d", "30"])
            XCTAssertTrue(
                JACKFixture.waitUntil { (try? pipewire.run("jack_lsp", []).stdout.contains("jackhost:in_2")) ?? false },
                running.log)
            // The port appears when it is registered; its metadata is set just after (a moment
            // that the RealtimeSanitizer build, slower, once made visible): wait for it.
            var metadata = try pipewire.run("jack_property", ["-p", "-l", "jackhost:in_2"])
            XCTAssertTrue(
                JACKFixture.waitUntil {
                    metadata = (try? pipewire.run("jack_property", ["-p", "-l", "jackhost:in_2"])) ?? metadata
                    return metadata.stdout.contains("Input 2")
                }, "\(metadata.stdout)\n\(running.log)")
            XCTAssertTrue(metadata.stdout.contains(JackClient.integerType), metadata.stdout)
            running.stop()

            // record and stream are bit-exact against a generator in its own pw-jack process.
            let generator = try pipewire.start("generator", jackhost, ["signal", "-k", "sequence", "-c", "4", "-n", "jhgen"])
            defer { generator.stop() }
            XCTAssertTrue(
                JACKFixture.waitUntil { (try? pipewire.run("jack_lsp", []).stdout.contains("jhgen:out_4")) ?? false },
                generator.log)
            let wav = work.appendingPathComponent("pw.wav").path
            let record = try pipewire.run(jackhost, ["record", wav, "-c", "4", "--connect", "jhgen:out_.*", "-d", "2", "--no-meter"])
            XCTAssertEqual(record.status, 0, record.stderr)
            JackhostBinary.assertNoSanitizerReport(record.stderr)
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(wav), .init(frames: 96000, channels: 4, sampleRate: rate))
            let recorded = SequenceCheck.verify(try AudioFileCheck.readWithSox(wav, channels: 4))
            XCTAssertNil(recorded.firstMismatch, "record under PipeWire: \(recorded)")

            let raw = work.appendingPathComponent("pw.raw").path
            let stream = try pipewire.run(
                jackhost,
                [
                    "stream", "-c", "4", "--connect", "jhgen:out_.*", "-d", "1",
                    "-b", "f32", "-i", "-o", raw,
                ])
            XCTAssertEqual(stream.status, 0, stream.stderr)
            let floats = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let planar = (0..<4).map { c in stride(from: c, to: floats.count, by: 4).map { floats[$0] } }
            XCTAssertEqual(planar[0].count, rate)
            XCTAssertNil(SequenceCheck.verify(planar).firstMismatch, "stream under PipeWire")

            // The meter summary is right for a known sine.
            let sine = try pipewire.start(
                "sine", jackhost,
                [
                    "signal", "-k", "sine", "--frequency", "1000", "--amplitude", "0.5",
                    "-c", "2", "-n", "jhsine",
                ])
            defer { sine.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { (try? pipewire.run("jack_lsp", []).stdout.contains("jhsine:out_2")) ?? false })
            let meter = try pipewire.run(jackhost, ["meter", "-c", "2", "--connect", "jhsine:out_.*", "-d", "2"])
            XCTAssertEqual(meter.status, 0, meter.stderr)
            let rows = meter.stdout.split(separator: "\n").filter { $0.hasPrefix("in_") }.map { $0.split(separator: " ") }
            XCTAssertEqual(rows.count, 2, meter.stdout)
            for row in rows {
                XCTAssertEqual(Double(row[1]) ?? 0, -6.02, accuracy: 0.01)
                XCTAssertEqual(Double(row[2]) ?? 0, -9.03, accuracy: 0.1)
            }
            // A plugin from Examples/ loads and measures the sine under PipeWire too.
            let estimator = try ExamplePlugins.path("FrequencyEstimator")
            let plugin = try pipewire.run(jackhost, ["run", "--plugin", estimator, "-c", "2", "--connect", "jhsine:out_.*", "-d", "2"])
            XCTAssertEqual(plugin.status, 0, plugin.stderr)
            let estimates = plugin.stdout.split(separator: "\n").filter { $0.hasPrefix("frequency in_") }
                .compactMap { $0.split(separator: " ")[2...].first.flatMap { Double($0) } }
            XCTAssertEqual(estimates.count, 2, plugin.stdout)
            for estimate in estimates { XCTAssertEqual(estimate, 1000, accuracy: 1) }

            reliabilityFigures("PipeWire", "info \(rate) Hz/\(period) frames; record 96000 frames bit-exact; stream bit-exact; meter -6.02/-9.03")
        }
    }

    /// A jackhost started with the session, before wireplumber has created PipeWire's
    /// "default" metadata object, cannot set port metadata then. It must keep trying: once the
    /// session manager is up, patchbays see "Input N" and the order as under jackd.
    func testPortNamesArriveWhenTheSessionManagerStartsLate() throws {
        try JACKFixture.serialized {
            let pipewire = try PipeWireEnvironment(sessionManager: false)
            defer { pipewire.stop() }
            let running = try pipewire.start("host", JackhostBinary.path, ["meter", "-c", "2", "-q", "-d", "30"])
            defer { running.stop() }
            XCTAssertTrue(
                JACKFixture.waitUntil { (try? pipewire.run("jack_lsp", []).stdout.contains("jackhost:in_2")) ?? false },
                running.log)
            let before = try pipewire.run("jack_property", ["-p", "-l", "jackhost:in_2"]).stdout
            usleep(1_000_000)  // jackhost has tried by now, and been refused
            try pipewire.startSessionManager()
            var metadata = ""
            let arrived = JACKFixture.waitUntil(timeout: 15) {
                metadata = (try? pipewire.run("jack_property", ["-p", "-l", "jackhost:in_2"]).stdout) ?? ""
                return metadata.contains("Input 2") && metadata.contains(JackClient.integerType)
            }
            XCTAssertTrue(arrived, "before: \(before)\nafter: \(metadata)\n\(running.log)")
            let first = try pipewire.run("jack_property", ["-p", "-l", "jackhost:in_1"]).stdout
            XCTAssertTrue(first.contains("Input 1"), first)
            let shown = before.contains("Input 2") ? "the names" : "no names"
            print("PipeWire, session manager late: before it, jack_property showed \(shown); after, Input 1 and Input 2 with their order")
        }
    }

    /// Starts `jack_capture` under pw-jack on the stalling generator's two ports, and waits
    /// until both are connected to it.
    private func startIndependentRecorder(in pipewire: PipeWireEnvironment, to path: String) throws -> Daemon {
        guard let tool = PrivateJACKServer.findExecutable("jack_capture") else {
            try skipEnvironment("PipeWire suite: jack_capture is missing; run scripts/setup --environments")
        }
        // -d bounds it if the test never stops it; -ns: no console to read; -dc: no meter.
        let recorder = try pipewire.start(
            "jack_capture", tool, ["-ns", "-dc", "-b", "FLOAT", "-d", "60", "--port", "jhstall:out_1", "--port", "jhstall:out_2", path])
        let connected = JACKFixture.waitUntil(timeout: 10) {
            (1...2).allSatisfy { c in ((try? pipewire.run("jack_lsp", ["-c", "jhstall:out_\(c)"]).stdout) ?? "").contains("jack_capture") }
        }
        guard connected else { throw JackError.serverStartFailed(reason: "jack_capture never connected: \(recorder.log)") }
        return recorder
    }

    /// PipeWire calls the xrun callback from the real-time thread, and skips the first xrun.
    /// Its headless dummy driver reports no xrun at all when a client sleeps 60 ms in its
    /// callback once a second, but its clock moves on: the frame time jumps. jackhost counts
    /// those frames as skipped, flags the blocks, and says so. Nothing is lost silently: every
    /// forward jump in the recorded sequence is covered by the skipped-frame count.
    ///
    /// On a loaded machine PipeWire now and then hands a reader the stalling client's two ports
    /// from different cycles (channel 2 one 1024-frame quantum away from channel 1: 3 of 12 runs
    /// beside `stress-ng --cpu 1`). That is upstream of every client, so `jack_capture` records
    /// the same ports at the same time, and every stretch where jackhost's channels are out of
    /// step must be in jack_capture's take too (``SequenceJunctions``, matched by content).
    func testSkippedCyclesUnderPipeWireAreCounted() throws {
        try JACKFixture.serialized {
            let pipewire = try PipeWireEnvironment()
            defer { pipewire.stop() }
            let jackhost = JackhostBinary.path
            let staller = try pipewire.start(
                "staller", jackhost,
                [
                    "signal", "-k", "sequence", "-c", "2", "-n", "jhstall",
                    "--stall-ms", "60",
                ])
            defer { staller.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { (try? pipewire.run("jack_lsp", []).stdout.contains("jhstall:out_2")) ?? false })
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("jhpwx-\(UUID().uuidString.prefix(8)).wav")
            let independentWav = FileManager.default.temporaryDirectory.appendingPathComponent("jhpwx-\(UUID().uuidString.prefix(8))-jc.wav")
            defer {
                try? FileManager.default.removeItem(at: work)
                try? FileManager.default.removeItem(at: independentWav)
            }
            let independent = try startIndependentRecorder(in: pipewire, to: independentWav.path)
            defer { independent.stop() }
            let record = try pipewire.run(
                jackhost,
                [
                    "run", "--record", work.path, "--meter", "-c", "2",
                    "--connect", "jhstall:out_.*", "-d", "4",
                ])
            XCTAssertEqual(record.status, 0, record.stderr)
            JackhostBinary.assertNoSanitizerReport(record.stderr)
            let header = record.stdout.split(separator: "\n").first { $0.hasPrefix("channel") }?.split(separator: " ").map(String.init) ?? []
            let row = record.stdout.split(separator: "\n").first { $0.hasPrefix("in_1") }?.split(separator: " ").map(String.init) ?? []
            XCTAssertEqual(header.count, row.count, record.stdout)
            func column(_ name: String) -> Int { header.firstIndex(of: name).flatMap { Int(row[$0]) } ?? -1 }
            let skipped = column("skipped"), dropped = column("dropped")
            XCTAssertGreaterThan(skipped, 0, "the frame-time jumps are counted: \(record.stdout)")
            XCTAssertEqual(dropped, 0, "jackhost itself dropped nothing")
            XCTAssertTrue(record.stderr.contains("skipped this client"), record.stderr)
            kill(independent.process.processIdentifier, SIGINT)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 15) { !independent.process.isRunning }, "jack_capture finished: \(independent.log)")
            let ours = SequenceJunctions(try AudioFileCheck.readWithSox(work.path, channels: 2), skippingLeadIn: true)
            let theirs = SequenceJunctions(try AudioFileCheck.readWithSox(independentWav.path, channels: 2), skippingLeadIn: true)
            XCTAssertNil(ours.coverageProblem(by: theirs), "\(independent.log)")
            XCTAssertEqual(ours.silentFrames, 0, "jackhost wrote no silence: \(ours.junctions)")
            // A clean forward jump shorter than the take is frames the server's clock skipped this
            // client: all of them together are within jackhost's skipped count. Any other break
            // (channels out of step, which decode to a jump of thousands of millions of frames
            // and back, or a repeat) is PipeWire's only when jack_capture has it too.
            func skip(_ junction: SequenceJunctions.Junction) -> Int? {
                guard junction.between.isEmpty, let before = junction.before, let after = junction.after else { return nil }
                let size = (after - before - 1) & 0xFFFF_FFFF
                return size > 0 && size < 1 << 24 ? size : nil
            }
            let jumps = ours.junctions.compactMap(skip)
            let upstream = ours.junctions.filter { skip($0) == nil }
            // PipeWire does not always hand two readers the same skew at the same moment (CI,
            // 2026-12-05: jackhost's take had a one-quantum skew where jack_capture's had a clean
            // skip). A skew that is exactly PipeWire's (every sample of both channels checked
            // against the sequence, one quantum apart) is upstream whether or not jack_capture saw it.
            let skews = ours.oneQuantumChannelSkews(quantum: 1024).filter { !theirs.junctions.contains($0) }
            let unexplained = upstream.filter { !theirs.junctions.contains($0) && !skews.contains($0) }
            XCTAssertEqual(unexplained, [], "breaks in jackhost's take only; jack_capture's: \(theirs.junctions)")
            if !skews.isEmpty { print("PIPEWIRE one-quantum channel skew(s) in jackhost's take only, every sample checked: \(skews)") }
            XCTAssertLessThanOrEqual(
                jumps.reduce(0, +), skipped, "every frame missing from the stream is in the skipped count: jumps \(jumps)")
            reliabilityFigures(
                "PipeWire, client stalling 60 ms/s",
                "PipeWire reported 0 xruns; jackhost counted \(skipped) skipped frames from frame-time jumps; the stream's own jumps total \(jumps.reduce(0, +)) frames, all within that count; \(upstream.count) other break(s) (channels out of step), each also in jack_capture's take"
            )
        }
    }
}
