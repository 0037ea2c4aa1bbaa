import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// `JackClient`'s lifetime under the conditions that used to break it.
final class JackClientTests: XCTestCase {
    /// A client closed on one thread while others query it used to be a use after free.
    func testAClientClosedUnderConcurrentQueriesAnswersEmpty() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            for _ in 0..<20 {
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
                usleep(1000)
                client.close()
                done.wait()
                done.wait()
                XCTAssertEqual(client.portNames(), [], "a closed client answers empty")
                XCTAssertEqual(queries.load(ordering: .relaxed), 400)
            }
        }
    }
}
