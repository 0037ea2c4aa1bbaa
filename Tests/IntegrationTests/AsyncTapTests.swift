import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

final class AsyncTapTests: XCTestCase {
    func testAsyncSequenceDeliversTheSignalInOrderAndEnds() async throws {
        try await JACKFixture.withServerAsync(captureChannels: 2) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .none, frameLimit: 48000))
            let blocks = host.blocks()
            let generator = try TestSignalSource(server: server.name, channels: 2, signal: .sequence)
            try host.start()
            try generator.connect(to: host.inputPortNames)
            let stopper = Task.detached {
                while !host.isComplete { try await Task.sleep(nanoseconds: 20_000_000) }
                host.stop()
            }
            var channels: [[Float]] = [[], []]
            var dropped = 0
            for await block in blocks {
                dropped += block.droppedFramesBefore
                for c in 0..<2 { channels[c].append(contentsOf: block.channels[c]) }
            }
            try await stopper.value
            generator.stop()
            XCTAssertEqual(dropped, 0)
            XCTAssertEqual(channels[0].count, 48000, "the sequence ends after exactly the frame limit")
            XCTAssertNil(SequenceCheck.verify(channels).firstMismatch)
        }
    }
}
