import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

final class CaptureHostTests: XCTestCase {
    func testRegistersOnePortPerCaptureChannelWithMetadata() throws {
        for captureChannels in [2, 6] {
            try JACKFixture.withServer(captureChannels: captureChannels) { server in
                let host = CaptureHost(configuration: .init(serverName: server.name))
                try host.start()
                defer { host.stop() }
                XCTAssertEqual(host.session?.inputNumberOfChannels, captureChannels)
                XCTAssertEqual(host.inputPortNames, (1...captureChannels).map { "jackhost:in_\($0)" })

                let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
                XCTAssertEqual(listed.status, 0, "\(server.name): \(listed.stderr) \(listed.stdout)")
                let names = Set(listed.stdout.split(separator: "\n").map(String.init))
                for index in 1...captureChannels {
                    XCTAssertTrue(names.contains("jackhost:in_\(index)"), "jack_lsp lacks in_\(index): \(listed.stdout)")
                }
                XCTAssertFalse(names.contains("jackhost:in_\(captureChannels + 1)"))

                // jack_property has no server option; it follows JACK_DEFAULT_SERVER.
                let pretty = try JACKFixture.run(
                    "jack_property", ["-p", "-l", "jackhost:in_2"],
                    environment: ["JACK_DEFAULT_SERVER": server.name])
                XCTAssertEqual(pretty.status, 0, pretty.stderr)
                XCTAssertTrue(pretty.stdout.contains("Input 2"), pretty.stdout)
                XCTAssertTrue(pretty.stdout.contains("http://jackaudio.org/metadata/order"), pretty.stdout)
                XCTAssertTrue(pretty.stdout.contains(JackClient.integerType), pretty.stdout)

                // Auto-connect: physical capture i feeds in_i.
                let connections = try JACKFixture.run("jack_lsp", ["-s", server.name, "-c", "jackhost:in_1"])
                XCTAssertTrue(connections.stdout.contains("system:capture_1"), connections.stdout)
            }
        }
    }

    func testConnectionMadeFromOutsideWithJackConnect() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none))
            try host.start()
            defer { host.stop() }
            XCTAssertEqual(host.connections(ofInput: "jackhost:in_2"), [])
            let result = try JACKFixture.run("jack_connect", ["-s", server.name, "system:capture_1", "jackhost:in_2"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(
                JACKFixture.waitUntil {
                    host.connections(ofInput: "jackhost:in_2") == ["system:capture_1"]
                })
        }
    }

    func testChannelOverrideAndPatternConnections() throws {
        try JACKFixture.withServer(captureChannels: 4) { server in
            let host = CaptureHost(
                configuration: .init(
                    serverName: server.name, channelCount: 2,
                    connections: .patterns(["system:capture_[34]"])))
            try host.start()
            defer { host.stop() }
            XCTAssertEqual(host.inputPortNames.count, 2)
            XCTAssertEqual(host.connections(ofInput: "jackhost:in_1"), ["system:capture_3"])
            XCTAssertEqual(host.connections(ofInput: "jackhost:in_2"), ["system:capture_4"])
            XCTAssertTrue(host.connectionFailures.isEmpty)
        }
    }

    func testPatternThatMatchesNothingFailsBeforeTouchingTheGraph() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .patterns(["nosuch:port.*"])))
            XCTAssertThrowsError(try host.start()) { error in
                XCTAssertEqual(error as? JackError, .patternMatchedNothing(pattern: "nosuch:port.*"))
            }
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost:"), "ports left behind: \(listed.stdout)")
        }
    }

    func testMissingServerGivesActionableError() {
        let name = PrivateJACKServer.uniqueName(prefix: "jhtest-absent")
        XCTAssertThrowsError(try CaptureHost(configuration: .init(serverName: name)).start()) { error in
            XCTAssertEqual(error as? JackError, .serverNotRunning(server: name))
            XCTAssertTrue(String(describing: error).contains("jackd -n \(name) -d alsa"), String(describing: error))
        }
    }

    func testGeneratorReachesBothConsumerKindsBitExact() throws {
        try JACKFixture.withServer(captureChannels: 4) { server in
            let seconds = 3.0
            let capacity = Int(Double(server.sampleRate) * (seconds + 2))
            let realtime = RecordingRealtimeConsumer(capacityFrames: capacity)
            let deferred = RecordingDeferredConsumer(name: "deferred")
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none))
            host.add(realtime: realtime)
            host.add(deferred: deferred)
            let generator = try TestSignalSource(server: server.name, channels: 4, signal: .sequence)
            try host.start()
            try generator.connect(to: host.inputPortNames)
            usleep(useconds_t(seconds * 1_000_000))
            // Host first, so the capture ends inside the signal rather than in trailing silence.
            host.stop()
            generator.stop()

            XCTAssertEqual(deferred.preparedFormat, StreamFormat(sampleRate: 48000, channelCount: 4))
            XCTAssertTrue(deferred.finished)
            let stats = host.statistics
            XCTAssertEqual(stats.consumers.first?.droppedFrames, 0)
            XCTAssertEqual(stats.consumers.first?.deliveredFrames, stats.capturedFrames)
            XCTAssertEqual(realtime.framesWritten.load(ordering: .relaxed), stats.capturedFrames)
            XCTAssertEqual(deferred.channels[0].count, stats.capturedFrames)
            XCTAssertEqual(deferred.sequenceGaps, 0)

            let realtimeReport = SequenceCheck.verify(realtime.channels())
            let deferredReport = SequenceCheck.verify(deferred.channels)
            XCTAssertNil(realtimeReport.firstMismatch, "\(realtimeReport)")
            XCTAssertNil(deferredReport.firstMismatch, "\(deferredReport)")
            XCTAssertGreaterThan(realtimeReport.checkedFrames, Int(Double(server.sampleRate) * (seconds - 1)))
            XCTAssertEqual(realtime.channels().map { $0.count }, deferred.channels.map { $0.count })
        }
    }

    func testSlowDeferredConsumerDropsOnlyItsOwnFrames() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let realtime = RecordingRealtimeConsumer(capacityFrames: 48000 * 6)
            let fast = RecordingDeferredConsumer(name: "fast")
            let slow = RecordingDeferredConsumer(name: "slow", delayPerBlock: 20_000)  // 20 ms per 5.3 ms block
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none))
            host.add(realtime: realtime)
            host.add(deferred: fast)
            host.add(deferred: slow, ringSeconds: 0.05)
            let generator = try TestSignalSource(server: server.name, channels: 2, signal: .sequence)
            try host.start()
            try generator.connect(to: host.inputPortNames)
            usleep(2_000_000)
            host.stop()
            generator.stop()

            let stats = host.statistics
            let fastStats = try XCTUnwrap(stats.consumers.first { $0.name == "fast" })
            let slowStats = try XCTUnwrap(stats.consumers.first { $0.name == "slow" })
            XCTAssertEqual(fastStats.droppedFrames, 0)
            XCTAssertEqual(fastStats.deliveredFrames, stats.capturedFrames)
            XCTAssertGreaterThan(slowStats.droppedFrames, 0)
            // Every frame is either delivered or counted as dropped.
            XCTAssertEqual(slowStats.deliveredFrames + slowStats.droppedFrames, stats.capturedFrames)
            XCTAssertEqual(slow.channels[0].count, slowStats.deliveredFrames)
            // Drops are announced in the next block; only a trailing run may be unannounced.
            XCTAssertLessThanOrEqual(slow.droppedReported, slowStats.droppedFrames)
            XCTAssertGreaterThan(slow.droppedReported, 0)
            XCTAssertEqual(realtime.framesWritten.load(ordering: .relaxed), stats.capturedFrames)
            XCTAssertNil(SequenceCheck.verify(realtime.channels()).firstMismatch, "xruns \(stats.xruns), skipped \(stats.timelineGapFrames)")
            XCTAssertNil(SequenceCheck.verify(fast.channels).firstMismatch, "xruns \(stats.xruns), skipped \(stats.timelineGapFrames)")
        }
    }

    func testConsumerThatRefusesTheFormatStopsStartCleanly() throws {
        final class Refuser: DeferredAudioConsumer {
            struct Refusal: Error {}
            func prepare(format: StreamFormat) throws { throw Refusal() }
            func consume(_ block: AudioBlock) {}
            func finish() {}
        }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name))
            host.add(deferred: Refuser())
            XCTAssertThrowsError(try host.start()) { error in
                guard case .consumerRejectedFormat(let name, _)? = error as? CaptureHostError else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertEqual(name, "Refuser")
            }
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost:"))
        }
    }

    /// Two instances of one plugin share a name; their counters used to merge, and the CLI then
    /// reported only the largest, so one consumer's drops could vanish.
    func testTwoConsumersWithOneNameKeepTheirOwnCounters() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let fast = RecordingDeferredConsumer(name: "same")
            let slow = RecordingDeferredConsumer(name: "same", delayPerBlock: 20_000)
            let host = CaptureHost(configuration: .init(serverName: server.name, durationLimit: 1))
            host.add(deferred: fast)
            host.add(deferred: slow, ringSeconds: 0.05)
            try host.start()
            XCTAssertTrue(JACKFixture.waitUntil { host.isComplete })
            host.stop(drainLimit: 10)
            let stats = host.statistics
            XCTAssertEqual(stats.consumers.map(\.name), ["same", "same"])
            XCTAssertEqual(stats.consumers[0].droppedFrames, 0)
            XCTAssertGreaterThan(stats.consumers[1].droppedFrames, 0, "the slow one's drops are its own: \(stats.consumers)")
            for consumer in stats.consumers {
                XCTAssertEqual(consumer.deliveredFrames + consumer.droppedFrames, stats.capturedFrames, "\(consumer)")
            }
        }
    }
}

extension CaptureHostTests {
    /// A limit in seconds becomes frames at the server's own rate (44.1 kHz here, not a default 48 kHz).
    func testDurationLimitDeliversExactlyThatManySecondsAtTheServerRate() throws {
        try JACKFixture.withServer(captureChannels: 2, sampleRate: 44100) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none, durationLimit: 0.3))
            let consumer = RecordingDeferredConsumer(name: "sink")
            host.add(deferred: consumer)
            XCTAssertFalse(host.isComplete, "nothing delivered yet")
            try host.start()
            let deadline = Date().addingTimeInterval(10)
            while !host.isComplete && Date() < deadline { usleep(10_000) }
            XCTAssertTrue(host.isComplete, "0.3 s of audio should arrive well within 10 s")
            host.stop()
            XCTAssertEqual(consumer.channels.first?.count, 13230, "0.3 s at 44100 Hz")
            XCTAssertEqual(consumer.droppedReported, 0)
        }
    }
}
