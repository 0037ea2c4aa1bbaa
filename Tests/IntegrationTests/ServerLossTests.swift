import Foundation
import JackHostConsumers
import JackHostTesting
import Synchronization
import XCTest

@testable import JackHost

/// The server lost mid-take (kill -9) against private dummy servers; each test asserts exact
/// frame counts: the take continues in the next segment when it returns, follows another route
/// and rate, or ends with status 3 under `--no-reconnect`.
final class ServerLossTests: XCTestCase {
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
}
