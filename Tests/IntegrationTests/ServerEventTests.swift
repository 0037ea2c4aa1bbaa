import Foundation
import JackHostConsumers
import JackHostTesting
import Synchronization
import XCTest

@testable import JackHost

/// What the server does during a take, against private dummy servers; each test asserts exact
/// frame counts: buffer size changes, xruns (counted, flagged, reported, or ending the take on
/// request) and freewheel (backpressure instead of drops).
final class ServerEventTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-rel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// jack_bufsize mid-run: 256 -> 1024 -> 64, data stays bit-exact in both delivery modes.
    func testBufferSizeChangesKeepDataBitExact() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let realtime = RecordingRealtimeConsumer(capacityFrames: 48000 * 8)
            let deferred = RecordingDeferredConsumer(name: "deferred")
            let events = EventLog()
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none))
            host.add(realtime: realtime)
            host.add(deferred: deferred)
            host.onEvent = { events.append($0) }
            let generator = try TestSignalSource(server: server.name, channels: 2, signal: .sequence)
            try host.start()
            try generator.connect(to: host.inputPortNames)
            for size in ["1024", "64", "256"] {
                usleep(700_000)
                let result = try JACKFixture.run("jack_bufsize", [size], environment: ["JACK_DEFAULT_SERVER": server.name])
                XCTAssertEqual(result.status, 0, result.stderr)
            }
            usleep(700_000)
            host.stop()
            generator.stop()
            let stats = host.statistics
            XCTAssertEqual(stats.consumers.first?.droppedFrames, 0)
            XCTAssertEqual(deferred.channels[0].count, stats.capturedFrames)
            XCTAssertEqual(realtime.framesWritten.load(ordering: .relaxed), stats.capturedFrames)
            XCTAssertNil(SequenceCheck.verify(realtime.channels()).firstMismatch)
            XCTAssertNil(SequenceCheck.verify(deferred.channels).firstMismatch)
            XCTAssertEqual(
                events.all.filter { if case .bufferSizeChanged = $0 { return true } else { return false } },
                [.bufferSizeChanged(frames: 1024), .bufferSizeChanged(frames: 64), .bufferSizeChanged(frames: 256)])
            reliabilityFigures(
                "jack_bufsize 256 -> 1024 -> 64 -> 256",
                "\(stats.capturedFrames) frames captured, \(deferred.channels[0].count) delivered deferred, \(realtime.framesWritten.load(ordering: .relaxed)) real-time, 0 dropped, bit-exact"
            )
        }
    }

    func testXrunsAreCountedFlaggedAndReported() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let realtime = RecordingRealtimeConsumer(capacityFrames: 48000 * 4)
            let events = EventLog()
            let host = CaptureHost(configuration: .init(serverName: server.name))
            host.add(realtime: realtime)
            host.onEvent = { events.append($0) }
            try host.start()
            let staller = try StallingClient(server: server.name)
            usleep(300_000)
            staller.stallsRequested.store(3, ordering: .relaxed)
            XCTAssertTrue(JACKFixture.waitUntil { host.statistics.xruns > 0 })
            usleep(300_000)
            staller.stop()
            // The monitor reports the running total within a poll (20 ms). Compare with the
            // total it has seen while the host still runs: a loaded machine may add an xrun
            // while the host stops, after the monitor's last look.
            let xruns = host.statistics.xruns
            XCTAssertTrue(
                JACKFixture.waitUntil { events.all.contains(.xrun(total: host.statistics.xruns)) },
                "an xrun event carries the running total: \(events.all), total \(host.statistics.xruns)")
            host.stop()
            XCTAssertGreaterThan(xruns, 0)
            XCTAssertGreaterThan(realtime.blocksWithXrunFlag.load(ordering: .relaxed), 0, "the next block is flagged")
            XCTAssertLessThanOrEqual(realtime.blocksWithXrunFlag.load(ordering: .relaxed), host.statistics.xruns)
            reliabilityFigures(
                "stalled client (3 x 40 ms)",
                "\(xruns) xruns counted, \(realtime.blocksWithXrunFlag.load(ordering: .relaxed)) blocks flagged, event total \(xruns)")
        }
    }

    func testStopOnXrunEndsTheTakeWithStatusOne() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let path = workDirectory.appendingPathComponent("perfect.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--stop-on-xrun", "--meter"],
                directory: workDirectory)
            let staller = try StallingClient(server: server.name)
            defer { staller.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { staller.client.portExists("jackhost:in_1") }, child.stderr)
            usleep(500_000)
            staller.stallsRequested.store(2, ordering: .relaxed)
            XCTAssertEqual(child.wait(timeout: 15), 1, child.stderr)
            XCTAssertTrue(child.stderr.contains("xrun"), child.stderr)
            let rows = child.stdout.split(separator: "\n").filter { $0.hasPrefix("in_1") }
            let xrunColumn = rows.last?.split(separator: " ").last.flatMap { Int($0) } ?? 0
            XCTAssertGreaterThan(xrunColumn, 0, "the meter summary shows the xruns: \(child.stdout)")
            XCTAssertNotNil(try AudioFileCheck.sndfileInfoHeader(path), "the take up to the xrun is kept")
        }
    }

    /// `--mark-xruns`: real xruns (a client that overruns its period) become markers in the take's
    /// cue chunk and sidecar, one per xrun the take counted (the sidecar's losses).
    func testMarkXrunsPutsEveryXrunOfTheTakeInIt() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let path = workDirectory.appendingPathComponent("marked.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--mark-xruns", "--sidecar", "--no-meter"], directory: workDirectory)
            let staller = try StallingClient(server: server.name)
            defer { staller.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { staller.client.portExists("jackhost:in_1") }, child.stderr)
            usleep(500_000)
            staller.stallsRequested.store(2, ordering: .relaxed)
            XCTAssertTrue(JACKFixture.waitUntil { staller.stallsRequested.load(ordering: .relaxed) == 0 })
            usleep(1_000_000)
            child.signal(SIGTERM)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)
            let sidecar = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".json"))) as? [String: Any])
            let losses = try XCTUnwrap(sidecar["losses"] as? [String: Any])
            let xruns = losses["xruns"] as? Int ?? 0
            XCTAssertGreaterThan(xruns, 0, "the stalls made xruns: \(sidecar)")
            let markers = (sidecar["markers"] as? [[String: Any]]) ?? []
            XCTAssertEqual(markers.filter { $0["source"] as? String == "xrun" }.count, xruns, "one marker per xrun: \(markers)")
            XCTAssertTrue(markers.allSatisfy { $0["inFile"] as? Bool == true }, "\(markers)")
        }
    }

    /// While freewheeling a slow deferred consumer gets backpressure, not drops; afterwards
    /// drop-on-full is back.
    func testFreewheelGivesBackpressureInsteadOfDrops() throws {
        // Real-time scheduling: xruns are counted here, and a server without it misses
        // deadlines of its own on a loaded machine (an xrun before the transition failed CI).
        try JACKFixture.withServer(captureChannels: 2, realtime: true) { server in
            let slow = RecordingDeferredConsumer(name: "slow", delayPerBlock: 2_000)
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none))
            host.add(deferred: slow, ringSeconds: 0.02)
            let events = EventLog()
            host.onEvent = { events.append($0) }
            let generator = try TestSignalSource(server: server.name, channels: 2, signal: .sequence)
            try host.start()
            try generator.connect(to: host.inputPortNames)
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            // Xruns before freewheel are ordinary ones, counted as usual; what matters here is
            // that none is added by the transitions or while freewheeling.
            let xrunsBefore = host.statistics.xruns
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["y"], environment: environment).status, 0)
            usleep(2_000_000)
            let duringFreewheel = host.statistics
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["n"], environment: environment).status, 0)
            XCTAssertTrue(
                JACKFixture.waitUntil { events.all.filter { if case .freewheelChanged = $0 { true } else { false } }.count == 2 })
            XCTAssertEqual(
                events.all.filter { if case .freewheelChanged = $0 { true } else { false } }, [.freewheelChanged(true), .freewheelChanged(false)],
                "both transitions are events (plugins get them as JACKHOST_PLUGIN_EVENT_FREEWHEEL)")
            XCTAssertGreaterThan(duringFreewheel.capturedFrames, 3 * 48000, "freewheel runs faster than real time")
            XCTAssertEqual(duringFreewheel.consumers.first?.droppedFrames, 0, "no drops while freewheeling")
            XCTAssertEqual(duringFreewheel.xruns, xrunsBefore, "transition xruns are ignored")
            // Back in real time a 2 ms-per-block consumer with a 20 ms ring still keeps up;
            // make it fall behind to prove drop-on-full is back.
            slow.extraDelay.store(30_000, ordering: .relaxed)
            XCTAssertTrue(JACKFixture.waitUntil { (host.statistics.consumers.first?.droppedFrames ?? 0) > 0 })
            host.stop()
            generator.stop()
            let stats = host.statistics
            let slowStats = try XCTUnwrap(stats.consumers.first)
            XCTAssertEqual(slowStats.deliveredFrames + slowStats.droppedFrames, stats.capturedFrames)
            reliabilityFigures(
                "freewheel on 2 s, then off",
                "\(duringFreewheel.capturedFrames) frames in freewheel with \(duringFreewheel.consumers.first?.droppedFrames ?? -1) dropped and \(duringFreewheel.xruns - xrunsBefore) xruns added (\(xrunsBefore) before it); afterwards drop-on-full: \(slowStats.droppedFrames) dropped, delivered + dropped = captured = \(stats.capturedFrames)"
            )
        }
    }
}
