import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// `Configuration.readsTransport`: a host that asks for transport sees it roll; one that does not
/// sees `transportRolling` false in every cycle while the same server's transport rolls.
final class TransportReadingTests: XCTestCase {
    /// Counts the cycles in which the block said transport was rolling.
    final class RollingCounter: RealtimeAudioConsumer, @unchecked Sendable {
        let rollingBlocks = Atomic<Int>(0)
        let blocks = Atomic<Int>(0)
        func prepare(format: StreamFormat) throws {}
        func process(_ block: AudioBlock) {
            if block.timestamp.transportRolling { rollingBlocks.add(1, ordering: .relaxed) }
            blocks.add(1, ordering: .relaxed)
        }
        func finish() {}
    }

    func testTransportIsReadOnlyWhenTheConfigurationAsks() throws {
        try JACKFixture.withServer(captureChannels: 1) { server in
            let reading = RollingCounter(), blind = RollingCounter()
            let readingHost = CaptureHost(configuration: .init(clientName: "reads", serverName: server.name))
            var blindConfiguration = CaptureHost.Configuration(clientName: "blind", serverName: server.name)
            blindConfiguration.readsTransport = false
            let blindHost = CaptureHost(configuration: blindConfiguration)
            readingHost.add(realtime: reading)
            blindHost.add(realtime: blind)
            try readingHost.start()
            defer { readingHost.stop() }
            try blindHost.start()
            defer { blindHost.stop() }
            let play = try JACKFixture.run(
                "/bin/sh", ["-c", "printf 'play\\nquit\\n' | jack_transport"], environment: ["JACK_DEFAULT_SERVER": server.name])
            XCTAssertEqual(play.status, 0, play.stderr)
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 10) { reading.rollingBlocks.load(ordering: .relaxed) >= 50 },
                "the host that reads transport never saw it roll")
            let blindBlocksThen = blind.blocks.load(ordering: .relaxed)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { blind.blocks.load(ordering: .relaxed) >= blindBlocksThen + 50 })
            XCTAssertEqual(blind.rollingBlocks.load(ordering: .relaxed), 0, "readsTransport false still reported rolling")
        }
    }
}
