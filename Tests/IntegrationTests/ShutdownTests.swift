import Foundation
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// The core's shutdown paths under the conditions that used to break them: a consumer that
/// never returns, and stop() called from an event handler.
final class ShutdownTests: XCTestCase {
    /// A deferred consumer that blocks in `consume` until released (a hung plugin, a dead NFS mount).
    final class BlockingConsumer: DeferredAudioConsumer, @unchecked Sendable {
        let consumerName = "blocking"
        let release = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let finishes = Atomic<Int>(0)
        func prepare(format: StreamFormat) throws {}
        func consume(_ block: AudioBlock) {
            entered.store(true, ordering: .relaxed)
            release.wait()
        }
        func finish() { finishes.add(1, ordering: .relaxed) }
    }

    /// Freewheeling with a consumer that never returns used to pin the real-time thread in the
    /// backpressure loop, so deactivation (and stop()) never returned.
    func testStopReturnsWithAHungConsumerEvenInFreewheel() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let blocking = BlockingConsumer()
            defer { for _ in 0..<10_000 { blocking.release.signal() } }
            let host = CaptureHost(configuration: .init(serverName: server.name))
            host.add(deferred: blocking, ringSeconds: 0.05)
            try host.start()
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["y"], environment: environment).status, 0)
            XCTAssertTrue(JACKFixture.waitUntil { blocking.entered.load(ordering: .relaxed) })
            usleep(300_000)  // the ring fills; the real-time side now waits on it
            let started = Date()
            host.stop(drainLimit: 0.5)
            let seconds = Date().timeIntervalSince(started)
            _ = try? JACKFixture.run("jack_freewheel", ["n"], environment: environment)
            XCTAssertLessThan(seconds, 3, "stop() returned after \(seconds) s")
            let consumer = try XCTUnwrap(host.statistics.consumers.first)
            XCTAssertTrue(consumer.isUnresponsive)
            XCTAssertEqual(blocking.finishes.load(ordering: .relaxed), 0, "a consumer still inside consume is never finished")
            reliabilityFigures(
                "freewheel with a consumer that never returns",
                "stop() returned in \(seconds.formatted(places: 2)) s; consumer marked unresponsive, not finished; \(consumer.abandonedFrames) frames abandoned"
            )
        }
    }

    /// stop() called from an event handler (on the supervisor's own thread) used to wait for
    /// that thread: a deadlock.
    func testStopFromAnEventHandlerDoesNotDeadlock() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let host = CaptureHost(configuration: .init(serverName: server.name))
            let stopped = Atomic<Bool>(false)
            try host.start()
            // Set after start(): the handler is handed over safely (it used to be a data race).
            host.onEvent = { [host] event in
                if case .bufferSizeChanged = event {
                    host.stop()
                    stopped.store(true, ordering: .relaxed)
                }
            }
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            XCTAssertEqual(try JACKFixture.run("jack_bufsize", ["512"], environment: environment).status, 0)
            XCTAssertTrue(JACKFixture.waitUntil { stopped.load(ordering: .relaxed) }, "the handler ran and returned")
            XCTAssertTrue(JACKFixture.waitUntil { host.inputPortNames.isEmpty }, "the session closed after the handler")
            host.stop()  // and a later stop() from an ordinary thread returns
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertFalse(listed.stdout.contains("jackhost:"), listed.stdout)
        }
    }
}
