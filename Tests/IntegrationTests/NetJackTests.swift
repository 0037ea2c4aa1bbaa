import Foundation
import JackHost
import XCTest

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
                    (1...2).allSatisfy { channel in
                        let lines = (try? net.runInSlave("jack_lsp", ["-s", net.slaveServer, "-c", "jackhost:in_\(channel)"]).stdout) ?? ""
                        return lines.contains("system:capture_\(channel)")
                    }
                },
                "jackhost reconnected both returning capture ports; slave graph:\n\((try? net.runInSlave("jack_lsp", ["-s", net.slaveServer, "-c"]).stdout) ?? "?")\n\(take.log)\n\(net.diagnostics)"
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
