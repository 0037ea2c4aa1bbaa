import Foundation
import JackHost
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

    /// PipeWire calls the xrun callback from the real-time thread, and skips the first xrun.
    /// Its headless dummy driver reports no xrun at all when a client sleeps 60 ms in its
    /// callback once a second, but its clock moves on: the frame time jumps. jackhost counts
    /// those frames as skipped, flags the blocks, and says so. Nothing is lost silently: every
    /// discontinuity in the recorded stream is covered by the skipped-frame count.
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
            defer { try? FileManager.default.removeItem(at: work) }
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
            let check = SequenceCheck.verifyGapsFilledWithSilence(try AudioFileCheck.readWithSox(work.path, channels: 2))
            XCTAssertNil(check.mismatch)
            XCTAssertEqual(check.silentFrames, 0)
            XCTAssertLessThanOrEqual(
                check.jumps.reduce(0, +), skipped,
                "every frame missing from the stream is in the skipped count: jumps \(check.jumps)")
            reliabilityFigures(
                "PipeWire, client stalling 60 ms/s",
                "PipeWire reported 0 xruns; jackhost counted \(skipped) skipped frames from frame-time jumps; the stream's own discontinuities total \(check.jumps.reduce(0, +)) frames, all within that count"
            )
        }
    }
}

/// jackhost on a netjack2 slave: its physical capture ports carry audio a master sends over
/// a veth pair between two network namespaces.
///
/// netjack2 itself now and then hands its server a period twice, skips one or tears one (a
/// late packet), before any client sees it. So the slave runs synchronously (`-S`: every
/// client reads the same buffers in the same cycle) and `jack_capture` records the same ports
/// at the same time: every break in jackhost's take must be in jack_capture's too, matched by
/// the generator's frame numbers around it (``SequenceJunctions``). A block jackhost dropped,
/// repeated, silenced or misaligned is in no other recorder's take, and fails.
final class NetJackTests: XCTestCase {
    func testSlaveRecordsTheMastersGeneratorAndFollowsAMasterRestart() throws {
        try JACKFixture.serialized {
            let net = try NetJackEnvironment(captureChannels: 2)
            defer { net.stop() }
            let jackhost = JackhostBinary.path
            var generator = try net.startInMaster(
                "generator", jackhost,
                [
                    "signal", "-s", net.masterServer, "-k", "sequence", "-c", "2",
                    "-n", "jhgen", "--connect", "\(net.slaveNetName):to_slave_.*",
                ])
            defer { generator.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { net.masterPorts().contains("jhgen:out_1") })

            // Automatic channel mode: one input per slave capture port.
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("jhnet-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let wav = work.appendingPathComponent("net.wav").path
            let info = try net.runInSlave(jackhost, ["info", "-s", net.slaveServer, "--json"])
            XCTAssertTrue(info.stdout.contains("\"inputNumberOfChannels\" : 2"), info.stdout)
            let independentWav = work.appendingPathComponent("jack_capture.wav").path
            let independent = try net.startIndependentRecorder("jack_capture", to: independentWav)
            let record = try net.runInSlave(jackhost, ["record", wav, "-s", net.slaveServer, "-d", "2", "--no-meter"])
            XCTAssertTrue(net.stopIndependentRecorder(independent), "jack_capture finished: \(independent.log)")
            XCTAssertEqual(record.status, 0, record.stderr)
            XCTAssertTrue(record.stdout.contains("silence inserted for 0 dropped frames"), "jackhost dropped nothing: \(record.stdout)")
            let channels = try AudioFileCheck.readWithSox(wav, channels: 2)
            XCTAssertEqual(channels[0].count, 96000, "the whole --duration is in the file")
            let ours = SequenceJunctions(channels, skippingLeadIn: true)
            let theirs = SequenceJunctions(
                try XCTUnwrap(AudioFileCheck.readWithLibsndfile(independentWav), independent.log).channels, skippingLeadIn: true)
            XCTAssertNil(ours.coverageProblem(by: theirs), independent.log)
            let unexplained = ours.junctions(missingFrom: theirs)
            XCTAssertEqual(
                unexplained, [],
                "breaks in jackhost's take that jack_capture, on the same ports, did not see: \(unexplained); all of jackhost's: \(ours.junctions); jack_capture's: \(theirs.junctions)\n\(record.stderr)"
            )
            // The ports are connected after the take starts: a few periods of silence first.
            XCTAssertGreaterThan(ours.leadIn, 0, "the take starts before its ports are connected")
            XCTAssertLessThan(ours.leadIn, 48000 / 4, "and only a few periods of it")

            // The master goes away and comes back: the slave's driver re-registers its ports and
            // jackhost reconnects them, recording on.
            let wav2 = work.appendingPathComponent("net-restart.wav").path
            let take = try net.startInSlave("take", jackhost, ["record", wav2, "-s", net.slaveServer, "--no-meter"])
            usleep(1_500_000)
            generator.stop()
            net.killMaster()
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 10) {
                    !((try? net.runInSlave("jack_lsp", ["-s", net.slaveServer]).stdout.contains("system:capture_1")) ?? true)
                }, "the slave's capture ports go away with the master")
            let restart = try net.restartMasterUntilSlaveRejoins()
            XCTAssertTrue(restart.rejoined, "the slave rejoined; master ports \(net.masterPorts())\n\(net.diagnostics)")
            if restart.masters > 1 { print("NETJACK the slave rejoined the \(restart.masters)th master started (jack2 handshake hang)") }
            generator = try net.startInMaster(
                "generator2", jackhost,
                [
                    "signal", "-s", net.masterServer, "-k", "sequence", "-c", "2",
                    "-n", "jhgen", "--connect", "\(net.slaveNetName):to_slave_.*",
                ])
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 20) {
                    let lines = (try? net.runInSlave("jack_lsp", ["-s", net.slaveServer, "-c", "jackhost:in_1"]).stdout) ?? ""
                    return lines.contains("system:capture_1")
                },
                "jackhost reconnected the returning capture port; slave graph:\n\((try? net.runInSlave("jack_lsp", ["-s", net.slaveServer, "-c"]).stdout) ?? "?")\n\(take.log)\n\(net.diagnostics)"
            )
            // A second independent take of the returned ports, covering the end of jackhost's.
            let independentWav2 = work.appendingPathComponent("jack_capture-restart.wav").path
            let independent2 = try net.startIndependentRecorder("jack_capture2", to: independentWav2)
            usleep(2_000_000)
            kill(take.process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(20)
            while take.process.isRunning && Date() < deadline { usleep(50_000) }
            XCTAssertTrue(net.stopIndependentRecorder(independent2), "jack_capture finished: \(independent2.log)")
            XCTAssertFalse(take.process.isRunning, "the take finished: \(take.log)")
            XCTAssertEqual(take.process.terminationStatus, 0, take.log)
            XCTAssertTrue(take.log.contains("silence inserted for 0 dropped frames"), "jackhost dropped nothing: \(take.log)")
            let after = try AudioFileCheck.readWithSox(wav2, channels: 2)
            // The last half second, from a period boundary of the file.
            let tailStart = (after[0].count - 24000) / 256 * 256
            let tail = SequenceJunctions(after.map { Array($0[tailStart...]) }, skippingLeadIn: false)
            let theirTail = SequenceJunctions(
                try XCTUnwrap(AudioFileCheck.readWithLibsndfile(independentWav2), independent2.log).channels, skippingLeadIn: true)
            XCTAssertNil(tail.coverageProblem(by: theirTail), "the last half second carries the restarted master's signal: \(take.log)")
            let unexplainedTail = tail.junctions(missingFrom: theirTail)
            XCTAssertEqual(
                unexplainedTail, [],
                "breaks in the last half second that jack_capture did not see: \(unexplainedTail); jack_capture's: \(theirTail.junctions)\n\(take.log)"
            )
            XCTAssertFalse(take.log.contains("not restored"), take.log)
            if unexplained.isEmpty && unexplainedTail.isEmpty && ours.coverageProblem(by: theirs) == nil {
                let breaks = { (junctions: SequenceJunctions) in
                    junctions.junctions.isEmpty
                        ? "bit-exact"
                        : "\(junctions.junctions.count) break(s) (\(junctions.junctions); \(junctions.silentFrames) silent, \(junctions.misalignedFrames) misaligned frames), every one also in jack_capture's take"
                }
                reliabilityFigures(
                    "netjack2",
                    "slave -S in automatic mode: 2 inputs; \(ours.leadIn) frames before the ports were connected, then \(breaks(ours)) (jack_capture's longer take: \(theirs.junctions.count) break(s)); after a master restart (\(restart.masters) master(s) started) the ports were reconnected and the last 0.5 s is \(breaks(tail))"
                )
            }
        }
    }
}
