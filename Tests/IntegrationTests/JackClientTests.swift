import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// `JackClient`'s lifetime under the conditions that used to break it.
final class JackClientTests: XCTestCase {
    /// A client closed on one thread while others query it used to be a use after free. Then,
    /// on a loaded machine, a query that had listed the ports just before the close copied their
    /// names just after it, from jack2's shared graph that the close had unmapped (SIGSEGV in
    /// the loaded suite's second run): names are now copied under the lock.
    func testAClientClosedUnderConcurrentQueriesAnswersEmpty() throws {
        try JACKFixture.withServer(captureChannels: 16) { server in
            for round in 0..<40 {
                let client = try JackClient(name: "closing", server: server.name)
                let done = DispatchSemaphore(value: 0)
                let queries = Atomic<Int>(0)
                for _ in 0..<2 {
                    DispatchQueue.global().async {
                        for _ in 0..<200 {
                            _ = client.portNames()
                            _ = client.connections(ofPortNamed: "system:capture_1")
                            _ = client.portExists("system:capture_1")
                            queries.add(1, ordering: .relaxed)
                        }
                        done.signal()
                    }
                }
                usleep(UInt32(500 + (round % 8) * 250))  // the close meets the queries at different points
                client.close()
                done.wait()
                done.wait()
                XCTAssertEqual(client.portNames(), [], "a closed client answers empty")
                XCTAssertEqual(queries.load(ordering: .relaxed), 400)
            }
        }
    }
}
