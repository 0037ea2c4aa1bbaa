import Foundation
import JackHostConsumers
import JackHostTesting
import Synchronization
import XCTest

@testable import JackHost

/// A client whose process callback overruns the period on demand, to cause real xruns.
final class StallingClient: @unchecked Sendable {
    let client: JackClient
    let stallsRequested = Atomic<Int>(0)

    init(server: String) throws {
        client = try JackClient(name: "jhstall", server: server)
        _ = try client.registerAudioInput(named: "in")
        client.setProcessCallback(
            { _, context in
                let me = Unmanaged<StallingClient>.fromOpaque(context!).takeUnretainedValue()
                if me.stallsRequested.load(ordering: .relaxed) > 0 {
                    me.stallsRequested.subtract(1, ordering: .relaxed)
                    usleep(40_000)  // 7.5 periods of 5.3 ms: the server must report an xrun
                }
                return 0
            }, context: Unmanaged.passUnretained(self).toOpaque())
        try client.activate()
    }

    func stop() {
        client.deactivate()
        client.close()
    }
}

/// Fault injection against private dummy servers; each test asserts exact frame counts.
final class ReliabilityTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-rel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// kill -9 the server mid-take, start it again: the first file is finalised and holds every
    /// frame captured before the loss; recording continues in take-0002.wav with the connections
    /// restored, including one made from outside with jack_connect.
    func testServerKilledAndRestartedRecordingContinuesInNextSegment() throws {
        try JACKFixture.serialized {
            let name = PrivateJACKServer.uniqueName(prefix: "jhtest-restart")
            var server = PrivateJACKServer(name: name, captureChannels: 2, synchronous: true)
            try server.start()
            defer { server.stop() }
            var generator = try TestSignalSource(name: "jhgen", server: name, channels: 2, signal: .sequence)
            let path = workDirectory.appendingPathComponent("take.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", name, "--connect", "jhgen:out_1", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { generator.client.portExists("jackhost:in_2") }, child.stderr)
            // A connection made from outside during the run must come back after the restart.
            XCTAssertEqual(try JACKFixture.run("jack_connect", ["-s", name, "jhgen:out_2", "jackhost:in_2"]).status, 0)
            usleep(1_500_000)

            server.crash()
            generator.abandon()
            server = PrivateJACKServer(name: name, captureChannels: 2, synchronous: true)
            try server.start()
            generator = try TestSignalSource(name: "jhgen", server: name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let second = Recorder.numberedPathForTests(path, 2)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 15) { FileManager.default.fileExists(atPath: second) }, child.stderr)
            XCTAssertTrue(
                JACKFixture.waitUntil {
                    generator.client.connections(ofPortNamed: "jackhost:in_2") == ["jhgen:out_2"]
                        && generator.client.connections(ofPortNamed: "jackhost:in_1") == ["jhgen:out_1"]
                }, "connections restored: \(generator.client.connections(ofPortNamed: "jackhost:in_2"))")
            usleep(1_500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
            XCTAssertTrue(child.stderr.contains("went away"), child.stderr)

            let first = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
            let next = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(second))
            XCTAssertGreaterThan(first.frames, 48000)
            XCTAssertGreaterThan(next.frames, 48000)
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(reported, first.frames + next.frames, "every captured frame is in one of the files: \(child.stdout)")
            reliabilityFigures(
                "kill -9 jackd mid-take, restart",
                "take.wav \(first.frames) frames + take-0002.wav \(next.frames) frames = reported \(reported ?? -1); both bit-exact; connections restored incl. one made with jack_connect"
            )
            for file in [path, second] {
                let channels = try AudioFileCheck.readWithSox(file, channels: 2)
                let report = SequenceCheck.verifyEachChannel(channels)
                XCTAssertNil(report.firstMismatch, "\(file): \(report)")
                XCTAssertGreaterThan(report.checkedFrames, 48000)
            }
        }
    }

    /// The server comes back with more capture ports and another sample rate: in automatic
    /// channel mode the host follows, re-prepares consumers and reports a route change.
    func testRestartWithAnotherRouteAndRateIsFollowed() throws {
        final class FormatLog: DeferredAudioConsumer, @unchecked Sendable {
            var formats: [StreamFormat] = []
            var finishes = 0
            var framesAfterRestore = 0
            func prepare(format: StreamFormat) throws { formats.append(format) }
            func consume(_ block: AudioBlock) { if formats.count > 1 { framesAfterRestore += block.frameCount } }
            func finish() { finishes += 1 }
        }
        try JACKFixture.serialized {
            let name = PrivateJACKServer.uniqueName(prefix: "jhtest-route")
            var server = PrivateJACKServer(name: name, captureChannels: 2, synchronous: true)
            try server.start()
            defer { server.stop() }
            let log = FormatLog()
            let events = EventLog()
            let host = CaptureHost(configuration: .init(serverName: name, reconnect: true))
            host.add(deferred: log)
            host.onEvent = { events.append($0) }
            try host.start()
            XCTAssertEqual(host.inputPortNames.count, 2)
            usleep(300_000)
            server.crash()
            XCTAssertTrue(JACKFixture.waitUntil { events.all.contains(.serverLost) })
            server = PrivateJACKServer(name: name, sampleRate: 44100, captureChannels: 3, synchronous: true)
            try server.start()
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 15) { host.reconnectCount == 1 }, "\(events.all)")
            XCTAssertEqual(host.inputPortNames, ["jackhost:in_1", "jackhost:in_2", "jackhost:in_3"])
            XCTAssertTrue(JACKFixture.waitUntil { host.connections(ofInput: "jackhost:in_3") == ["system:capture_3"] })
            usleep(300_000)
            host.stop()
            XCTAssertEqual(log.formats, [StreamFormat(sampleRate: 48000, channelCount: 2), StreamFormat(sampleRate: 44100, channelCount: 3)])
            XCTAssertEqual(log.finishes, 2, "finished before the new format, and at the end")
            XCTAssertGreaterThan(log.framesAfterRestore, 0)
            XCTAssertTrue(events.all.contains(.routeChanged(channelCount: 3)), "\(events.all)")
            XCTAssertTrue(events.all.contains(.serverRestored), "\(events.all)")
            let stats = host.statistics
            XCTAssertEqual(stats.consumers.first.map { $0.deliveredFrames + $0.droppedFrames }, stats.capturedFrames)
            reliabilityFigures(
                "restart with -C 3 -r 44100",
                "ports in_1..in_3, consumers re-prepared (48000/2 -> 44100/3), routeChanged(3); delivered + dropped = captured = \(stats.capturedFrames)"
            )
        }
    }

    /// A source client quits and comes back (as a netjack slave's capture ports do when the
    /// master restarts): its connection is restored. A connection someone removed on purpose
    /// stays removed.
    func testVanishedSourcesAreReconnectedButDeliberateDisconnectsStay() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            var generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .patterns(["jhgen:out_.*"])))
            try host.start()
            defer { host.stop() }
            let client = try JackClient(name: "observer", server: server.name)
            defer { client.close() }
            XCTAssertEqual(client.connections(ofPortNamed: "jackhost:in_1"), ["jhgen:out_1"])
            // Deliberate: someone disconnects in_2 with jack_disconnect.
            XCTAssertEqual(try JACKFixture.run("jack_disconnect", ["-s", server.name, "jhgen:out_2", "jackhost:in_2"]).status, 0)
            // A lost connection whose source vanishes within 2 s counts as vanished; wait that out.
            usleep(2_300_000)
            // Vanish: the generator quits, then returns under the same name.
            generator.stop()
            XCTAssertTrue(JACKFixture.waitUntil { client.connections(ofPortNamed: "jackhost:in_1").isEmpty })
            usleep(200_000)
            generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            XCTAssertTrue(
                JACKFixture.waitUntil { client.connections(ofPortNamed: "jackhost:in_1") == ["jhgen:out_1"] },
                "the vanished source is reconnected")
            usleep(300_000)
            XCTAssertEqual(client.connections(ofPortNamed: "jackhost:in_2"), [], "a deliberate disconnect is respected")
            reliabilityFigures("source client quits and returns", "in_1 reconnected to jhgen:out_1; in_2, disconnected by hand, left alone")
        }
    }

    /// A source that closes ports-first (no connection callback reaches jackhost) and returns
    /// with a client that registers its port well before it activates: jack2 refuses to
    /// connect a port of an inactive client, so the restore must be tried again, not given up
    /// at the first refusal (this once left a take silent after a server restart).
    func testRestoreWaitsForTheReturningClientToActivate() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            var source: JackClient? = try JackClient(name: "late", server: server.name)
            _ = try source!.registerAudioOutput(named: "out_1")
            try source!.activate()
            let host = CaptureHost(
                configuration: .init(
                    serverName: server.name, channelCount: 1,
                    connections: .patterns(["late:out_1"])))
            try host.start()
            defer { host.stop() }
            let client = try JackClient(name: "observer", server: server.name)
            defer { client.close() }
            XCTAssertEqual(client.connections(ofPortNamed: "jackhost:in_1"), ["late:out_1"])
            source!.close()  // the source vanishes: its connection is kept for restoring
            source = nil
            XCTAssertTrue(JACKFixture.waitUntil { !client.portExists("late:out_1") })
            usleep(300_000)
            let returning = try JackClient(name: "late", server: server.name)
            defer { returning.close() }
            _ = try returning.registerAudioOutput(named: "out_1")
            usleep(500_000)  // registered but not active: connecting it fails meanwhile
            XCTAssertEqual(client.connections(ofPortNamed: "jackhost:in_1"), [], "not connectable before activation")
            try returning.activate()
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 5) { client.connections(ofPortNamed: "jackhost:in_1") == ["late:out_1"] },
                "restored once the returning client is active; failures: \(host.connectionFailures)")
        }
    }

    /// A capture port appears and goes away while the server keeps running (a USB interface
    /// plugged in through a bridge client): in automatic channel mode the host follows, with
    /// a route-change event and consumers prepared again for the new channel count.
    func testLiveRouteChangeInAutomaticChannelMode() throws {
        final class Formats: DeferredAudioConsumer, @unchecked Sendable {
            var formats: [Int] = []
            func prepare(format: StreamFormat) throws { formats.append(format.channelCount) }
            func consume(_ block: AudioBlock) {}
            func finish() {}
        }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let formats = Formats()
            let events = EventLog()
            let host = CaptureHost(configuration: .init(serverName: server.name))
            host.add(deferred: formats)
            host.onEvent = { events.append($0) }
            try host.start()
            defer { host.stop() }
            let bridge = try JackClient(name: "usbbridge", server: server.name)
            let port = try bridge.registerAudioOutput(named: "capture_1", physical: true)
            // A bridge runs a process callback like any audio client (one without it stalls a
            // synchronous jackd's graph, and no frames would pass during the rebuild to count).
            final class Bridge {}
            let bridgeState = Bridge()
            bridge.installProcessCallback({ _, _ in 0 }, owner: bridgeState)
            try bridge.activate()
            XCTAssertTrue(JACKFixture.waitUntil { host.inputPortNames.count == 3 }, "\(events.all)")
            XCTAssertTrue(JACKFixture.waitUntil { host.connections(ofInput: "jackhost:in_3") == ["usbbridge:capture_1"] })
            XCTAssertEqual(host.connections(ofInput: "jackhost:in_1"), ["system:capture_1"], "old wiring kept")
            bridge.unregister(port)
            XCTAssertTrue(
                JACKFixture.waitUntil { host.inputPortNames.count == 2 },
                "\(events.all) physical now: \(bridge.physicalCapturePorts())")
            bridge.deactivate()
            bridge.close()
            XCTAssertEqual(formats.formats, [2, 3, 2])
            // The frames between the old session and the rebuilt one were never delivered: they
            // are counted as a gap, not lost silently.
            let stats = host.statistics
            XCTAssertGreaterThanOrEqual(stats.timelineGaps, 2, "one gap per rebuild: \(stats)")
            XCTAssertGreaterThan(stats.timelineGapFrames, 0)
            reliabilityFigures(
                "live route change 2 -> 3 -> 2 inputs",
                "\(stats.timelineGaps) gaps, \(stats.timelineGapFrames) frames between sessions counted as skipped")
            XCTAssertTrue(events.all.contains(.routeChanged(channelCount: 3)))
            XCTAssertTrue(events.all.contains(.routeChanged(channelCount: 2)))
            reliabilityFigures(
                "a physical capture port comes and goes",
                "inputs 2 -> 3 -> 2, consumers prepared for 2, 3, 2 channels, routeChanged events, in_3 wired to the new port")
        }
    }

    func testNoReconnectExitsWithStatusThree() throws {
        try JACKFixture.serialized {
            let server = PrivateJACKServer(name: PrivateJACKServer.uniqueName(prefix: "jhtest-lost"), captureChannels: 2)
            try server.start()
            defer { server.stop() }
            let path = workDirectory.appendingPathComponent("lost.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "--no-reconnect", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
            usleep(700_000)
            server.crash()
            defer { PrivateJACKServer.reclaimRegistrySlot(name: server.name) }
            XCTAssertEqual(child.wait(timeout: 15), 3, child.stderr)
            XCTAssertTrue(child.stderr.contains("went away"), child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "the take is finalised")
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(reported, header.frames)
            reliabilityFigures(
                "kill -9 jackd, --no-reconnect", "exit status 3; file finalised with \(header.frames) frames = reported \(reported ?? -1)")
        }
    }

    /// A source that quits during a take and never returns: its connection waits to be
    /// restored until the take ends, and the summary says it was not restored.
    func testAConnectionNeverRestoredIsReportedAtTheEnd() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgone", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("gone.wav").path
            let child = try JackhostBinary.start(
                ["record", path, "-s", server.name, "-c", "2", "--connect", "jhgone:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: path) }, child.stderr)
            usleep(700_000)
            generator.stop()  // quits: its ports go away with it, and never return
            usleep(1_500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 15), 0, child.stderr)
            let warnings = child.stderr.split(separator: "\n").filter { $0.contains("a connection was not restored") }
            XCTAssertEqual(warnings.count, 2, child.stderr)
            XCTAssertTrue(warnings.allSatisfy { $0.contains("jhgone:out_") }, child.stderr)
            reliabilityFigures("source quits for good", "take ended by SIGINT with status 0; \(warnings.count) warnings: \(warnings.first ?? "")")
        }
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

    /// Another client connects and disconnects a source 200 times during a take: the file has
    /// exactly the frames asked for and the untouched channel stays bit-exact.
    func testConnectionHammeringDuringATake() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = workDirectory.appendingPathComponent("hammer.wav").path
            let child = try JackhostBinary.start(
                [
                    "record", path, "-s", server.name, "--connect", "jhgen:out_.*",
                    "-d", "3", "--no-meter",
                ], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { generator.client.portExists("jackhost:in_1") }, child.stderr)
            for _ in 0..<200 {
                try? generator.client.connect("system:capture_1", to: "jackhost:in_1")
                generator.client.disconnect("system:capture_1", from: "jackhost:in_1")
            }
            XCTAssertEqual(child.wait(), 0, child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path))
            XCTAssertEqual(header.frames, 144_000)
            let channels = try AudioFileCheck.readWithSox(path, channels: 2)
            // system:capture_1 carries silence, so even channel 1 stays bit-exact while it is hammered.
            XCTAssertNil(SequenceCheck.verify(channels).firstMismatch)
            reliabilityFigures("200 connect/disconnect cycles during a 3 s take", "\(header.frames) frames (exactly 3 s), bit-exact")
        }
    }

    /// A disk that fills up mid-take: the recorder stops with the OS error, the file stays valid
    /// with every frame written before the failure, the meter runs on, exit status 1.
    func testDiskFillingUpMidTake() throws {
        let mountPoint = workDirectory.appendingPathComponent("tiny").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try JACKFixture.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            print("SKIPPED LOUDLY: cannot mount a 1 MiB tmpfs here (needs root): \(mount.stderr)")
            throw XCTSkip("cannot mount a tmpfs: \(mount.stderr)")
        }
        defer { _ = try? JACKFixture.run("umount", [mountPoint]) }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = mountPoint + "/full.wav"
            let result = try JackhostBinary.run([
                "run", "--record", path, "--meter", "-s", server.name,
                "--connect", "jhgen:out_.*", "-d", "5",
            ])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no space left on device"), result.stderr)
            XCTAssertFalse(result.stderr.contains("System error"), "libsndfile's raw text stays out: \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("channel  peak_dBFS"), "the meter ran to the end")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "the partial take is readable")
            let reported = result.stdout.components(separatedBy: "recorded ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            XCTAssertEqual(reported, header.frames, "header and report agree")
            XCTAssertGreaterThan(header.frames, 100_000, "about 1 MiB of float stereo")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
            reliabilityFigures(
                "1 MiB tmpfs fills mid-take",
                "exit 1; file readable with \(header.frames) frames = reported; bit-exact up to the failure; meter ran the full 5 s")
        }
    }

    /// A full disk stops the recorder with the OS error; the meter keeps running; exit status 1.
    func testFullDiskStopsOnlyTheRecorder() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JackhostBinary.run(["run", "--record", "/dev/full", "-f", "wav", "--meter", "-s", server.name, "-d", "1"])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no space left on device"), result.stderr)
            XCTAssertFalse(result.stderr.contains("System error"), "libsndfile's raw text stays out: \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("channel  peak_dBFS"), "the meter ran to the end: \(result.stdout)")
            reliabilityFigures(
                "record to /dev/full",
                "exit 1; \(result.stderr.split(separator: "\n").first { $0.contains("no space") } ?? ""); meter summary printed")
        }
    }
}

/// Prints one line of figures per fault, collected into docs/RELIABILITY.md.
func reliabilityFigures(_ fault: String, _ figures: String) {
    print("RELIABILITY \(fault): \(figures)")
}

/// Collects session events from the monitor thread.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [AudioSessionEvent] = []
    func append(_ event: AudioSessionEvent) { lock.withLock { events.append(event) } }
    var all: [AudioSessionEvent] { lock.withLock { events } }
}

extension Recorder {
    static func numberedPathForTests(_ path: String, _ index: Int) -> String { numberedPath(path, index: index) }
}
