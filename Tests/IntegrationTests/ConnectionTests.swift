import Foundation
import JackHostConsumers
import JackHostTesting
import Synchronization
import XCTest

@testable import JackHost

/// A take's connections against private dummy servers: channels and sources that do not match
/// are named, vanished sources are reconnected while deliberate disconnects stay, routes that
/// change live are followed, and a connection never restored is reported at the end.
final class ConnectionTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-rel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    func testChannelCountAndSourcesThatDoNotMatchAreNamed() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let more = try JackhostBinary.run(["meter", "-s", server.name, "-c", "3", "-d", "0.2"])
            XCTAssertEqual(more.status, 0, more.stderr)
            XCTAssertTrue(
                more.stderr.contains("warning: --channels 3 asks for more inputs than there are sources: jackhost:in_3 stays silent"),
                more.stderr)
            let many = try JackhostBinary.run(["meter", "-s", server.name, "-c", "1024", "-d", "0.2", "-q"])
            XCTAssertEqual(many.status, 0, many.stderr)
            XCTAssertTrue(many.stderr.contains("jackhost:in_3, jackhost:in_4 … jackhost:in_1024 (1022 in all)"), many.stderr)
            let fewer = try JackhostBinary.run(["meter", "-s", server.name, "-c", "1", "--connect", "system:capture_.*", "-d", "0.2"])
            XCTAssertEqual(fewer.status, 0, fewer.stderr)
            XCTAssertTrue(fewer.stderr.contains("1 matched source found no input and is left out: system:capture_2"), fewer.stderr)
        }
    }

    /// A source client quits and comes back (as a netjack slave's capture ports do when the
    /// master restarts): its connection is restored. A connection someone removed on purpose
    /// stays removed.
    func testVanishedSourcesAreReconnectedButDeliberateDisconnectsStay() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            var generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .patterns(["jhgen:out_.*"])))
            let events = EventLog()
            host.onEvent = { events.append($0) }
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
            let stoppedAt = Date()
            generator.stop()
            XCTAssertTrue(JACKFixture.waitUntil { client.connections(ofPortNamed: "jackhost:in_1").isEmpty })
            usleep(200_000)
            generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            XCTAssertTrue(
                JACKFixture.waitUntil { client.connections(ofPortNamed: "jackhost:in_1") == ["jhgen:out_1"] },
                "the vanished source is reconnected")
            let returnedAt = Date()
            usleep(300_000)
            XCTAssertEqual(client.connections(ofPortNamed: "jackhost:in_2"), [], "a deliberate disconnect is respected")
            // The loss and the return are told, once each, and the silence between is counted:
            // from the stop to the return, within the host's looks (20 ms) and this test's polls.
            let sourceEvents = events.all.filter {
                switch $0 {
                case .sourceLost, .sourceReturned: true
                default: false
                }
            }
            XCTAssertEqual(sourceEvents.count, 2, "\(sourceEvents)")
            XCTAssertEqual(sourceEvents.first, .sourceLost(input: "jackhost:in_1", source: "jhgen:out_1"))
            guard case .sourceReturned(let input, let source, let frames)? = sourceEvents.last else { return XCTFail("\(sourceEvents)") }
            XCTAssertEqual([input, source], ["jackhost:in_1", "jhgen:out_1"])
            let away = returnedAt.timeIntervalSince(stoppedAt) * 48000
            XCTAssertEqual(Double(frames), away, accuracy: 0.25 * 48000, "frames without the source: \(frames), wall clock \(away)")
            XCTAssertEqual(host.statistics.sourceReturns, 1)
            XCTAssertEqual(host.statistics.sourceAbsentFrames, frames)
            reliabilityFigures(
                "source client quits and returns", "in_1 reconnected to jhgen:out_1 after \(frames) frames; in_2, disconnected by hand, left alone")
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
}
