import XCTest

@testable import JackHost

/// The connection-restore policy, driven without jackd: a fake graph and a hand-moved clock.
final class ConnectionKeeperTests: XCTestCase {
    /// A graph of ports and connections, with ports that refuse connections (a client that
    /// registered its ports but is not active yet).
    final class FakeGraph: PortGraph {
        var ports: Set<String> = []
        var refusing: Set<String> = []
        var wires: [String: [String]] = [:]
        /// Ports that go away the moment they are connected (a driver re-registering them).
        var vanishingOnConnect: Set<String> = []
        func portExists(_ name: String) -> Bool { ports.contains(name) }
        func connect(_ source: String, to destination: String) throws(JackError) {
            guard ports.contains(source), !refusing.contains(source) else {
                throw .connectionFailed(source: source, destination: destination, code: -1)
            }
            if !(wires[destination] ?? []).contains(source) { wires[destination, default: []].append(source) }
            if vanishingOnConnect.contains(source) { removePort(source) }
        }
        func connections(ofPortNamed name: String) -> [String] { wires[name] ?? [] }
        func removePort(_ name: String) {
            ports.remove(name)
            for key in wires.keys { wires[key]?.removeAll { $0 == name } }
        }
    }

    let inputs = ["jh:in_1", "jh:in_2"]

    func testRestoresAfterAReconnectAndReportsWhatNeverCame() {
        let graph = FakeGraph()
        graph.ports = ["gen:out_1"]
        var keeper = ConnectionKeeper(restoreTimeout: 10)
        keeper.planRestore([["gen:out_1"], ["gone:out_2"]], inputs: inputs, now: 0)
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 0), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["gen:out_1"])
        XCTAssertEqual(keeper.pending.map(\.source), ["gone:out_2"], "still waiting for its source")
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 5), [])
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 10.5), [.noSuchPort("gone:out_2")])
        XCTAssertTrue(keeper.pending.isEmpty)
    }

    /// A source that goes away is told once as lost, and once as returned when the graph shows
    /// it connected again, with the frames its input went without it; a restore after a
    /// reconnect (no source went away while running) tells nothing.
    func testASourceThatGoesAndComesBackIsToldWithTheFramesItWasAway() {
        let graph = FakeGraph()
        graph.ports = ["stage:out_1"]
        graph.wires = ["jh:in_1": ["stage:out_1"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10)
        keeper.remember(graph, inputs: ["jh:in_1"])
        graph.removePort("stage:out_1")
        keeper.observe(graph, inputs: ["jh:in_1"], now: 1, unregistrations: 1)
        keeper.settleLost(graph, now: 1, frame: 48_000)
        XCTAssertEqual(keeper.takeChanges(), [.lost(source: "stage:out_1", input: "jh:in_1")])
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 2, frame: 96_000), [])
        XCTAssertEqual(keeper.takeChanges(), [], "nothing returned while the source is away")
        graph.ports.insert("stage:out_1")
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 3.5, frame: 168_000), [])
        XCTAssertEqual(keeper.takeChanges(), [.returned(source: "stage:out_1", input: "jh:in_1", absentFrames: 120_000)])
        XCTAssertEqual(keeper.takeChanges(), [], "told once")

        keeper.planRestore([["stage:out_1"]], inputs: ["jh:in_1"], now: 4)
        graph.wires = [:]
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 4, frame: 0), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["stage:out_1"])
        XCTAssertEqual(keeper.takeChanges(), [], "a restore after a reconnect is not a source's return")
    }

    /// jack2 refuses to connect a port of a client that is not active yet: retried, not given up.
    func testARefusedRestoreIsRetriedUntilTheClientActivates() {
        let graph = FakeGraph()
        graph.ports = ["late:out_1"]
        graph.refusing = ["late:out_1"]
        var keeper = ConnectionKeeper(restoreTimeout: 10)
        keeper.planRestore([["late:out_1"]], inputs: ["jh:in_1"], now: 0)
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 0), [])
        XCTAssertEqual(keeper.pending.count, 1)
        graph.refusing = []
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 1), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["late:out_1"])
        XCTAssertTrue(keeper.pending.isEmpty)
    }

    /// A source that vanishes while running is restored when it returns, with no deadline;
    /// a connection removed by hand while its source stays is left alone.
    func testVanishedSourcesReturnAndDeliberateDisconnectsStay() {
        let graph = FakeGraph()
        graph.ports = ["gen:out_1", "gen:out_2"]
        graph.wires = ["jh:in_1": ["gen:out_1"], "jh:in_2": ["gen:out_2"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2)
        keeper.remember(graph, inputs: inputs)
        graph.wires["jh:in_2"] = []  // someone disconnects in_2 by hand
        keeper.observe(graph, inputs: inputs, now: 1)
        keeper.settleLost(graph, now: 3.5)  // its source stayed past the grace: forgotten
        graph.removePort("gen:out_1")  // the generator quits
        keeper.observe(graph, inputs: inputs, now: 4)
        keeper.settleLost(graph, now: 4.1)
        XCTAssertEqual(keeper.pending, [.init(source: "gen:out_1", destination: "jh:in_1", deadline: nil, awaySinceFrame: 0)])
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1000), [], "no deadline while the source is away")
        graph.ports.insert("gen:out_1")  // it returns
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1001), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["gen:out_1"])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_2"), [], "the deliberate disconnect stays")
    }

    /// A netjack2 slave re-registers its ports when its master returns, sometimes between two
    /// looks: the source exists again, its connection is gone, and only a port unregistration
    /// since the last look tells it from a deliberate disconnect. It is restored.
    func testASourceThatReturnedBetweenTwoLooksIsRestored() {
        let graph = FakeGraph()
        graph.ports = ["system:capture_1", "gen:out_2"]
        graph.wires = ["jh:in_1": ["system:capture_1"], "jh:in_2": ["gen:out_2"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2)
        keeper.remember(graph, inputs: inputs)
        graph.removePort("system:capture_1")
        graph.ports.insert("system:capture_1")  // back before anyone looked
        keeper.observe(graph, inputs: inputs, now: 1, unregistrations: 1)
        keeper.settleLost(graph, now: 1.02)
        XCTAssertEqual(keeper.pending, [.init(source: "system:capture_1", destination: "jh:in_1", deadline: nil, awaySinceFrame: 0)])
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1.02), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["system:capture_1"])

        // The same loss with no unregistration is a deliberate disconnect, and stays one.
        graph.wires["jh:in_2"] = []
        keeper.observe(graph, inputs: inputs, now: 2, unregistrations: 1)
        keeper.settleLost(graph, now: 4.5)
        XCTAssertTrue(keeper.pending.isEmpty)
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 5), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_2"), [])
    }

    /// jack2 delivers the unregistration callback on its own thread: the loss can be seen, with
    /// the port already back, one look before the count moves. An unregistration counted while
    /// the loss is still watched makes it a returning source all the same.
    func testAnUnregistrationCountedLateStillRestores() {
        let graph = FakeGraph()
        graph.ports = ["system:capture_2"]
        graph.wires = ["jh:in_2": ["system:capture_2"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2)
        keeper.remember(graph, inputs: inputs)
        graph.removePort("system:capture_2")
        graph.ports.insert("system:capture_2")
        keeper.observe(graph, inputs: inputs, now: 1, unregistrations: 0)
        keeper.settleLost(graph, now: 1)
        XCTAssertTrue(keeper.pending.isEmpty, "no unregistration yet: it may be deliberate")
        keeper.observe(graph, inputs: inputs, now: 1.5, unregistrations: 1)
        keeper.settleLost(graph, now: 1.5)
        XCTAssertEqual(keeper.pending, [.init(source: "system:capture_2", destination: "jh:in_2", deadline: nil, awaySinceFrame: 0)])
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1.5), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_2"), ["system:capture_2"])
    }

    /// The other order, seen on a netjack2 slave whose master came back after a hung handshake:
    /// one look counts the unregistration while the graph still shows the connection; the
    /// next finds it gone, the port already back, and no new count. It is restored; a loss a
    /// second after the count is not.
    func testAnUnregistrationCountedALookEarlyStillRestores() {
        let graph = FakeGraph()
        graph.ports = ["system:capture_1", "system:capture_2"]
        graph.wires = ["jh:in_1": ["system:capture_1"], "jh:in_2": ["system:capture_2"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2, earlySeconds: 0.75)
        keeper.remember(graph, inputs: inputs)
        keeper.observe(graph, inputs: inputs, now: 1, unregistrations: 2)
        keeper.settleLost(graph, now: 1)
        graph.removePort("system:capture_2")
        graph.ports.insert("system:capture_2")
        keeper.observe(graph, inputs: inputs, now: 1.02, unregistrations: 2)
        keeper.settleLost(graph, now: 1.02)
        XCTAssertEqual(keeper.pending, [.init(source: "system:capture_2", destination: "jh:in_2", deadline: nil, awaySinceFrame: 0)])
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1.02), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_2"), ["system:capture_2"])

        graph.wires["jh:in_1"] = []
        keeper.observe(graph, inputs: inputs, now: 2.1, unregistrations: 2)
        keeper.settleLost(graph, now: 4.5)
        XCTAssertTrue(keeper.pending.isEmpty, "a disconnect a second after the count is deliberate")
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), [])
    }

    /// A source that goes away again between the connect and the look after it is not taken as
    /// restored: the restore waits for it again, and is made when it is back for good.
    func testARestoreIsDoneOnlyWhenTheGraphShowsIt() {
        let graph = FakeGraph()
        graph.ports = ["system:capture_1", "system:capture_2"]
        graph.vanishingOnConnect = ["system:capture_2"]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2)
        keeper.planRestore([["system:capture_1"], ["system:capture_2"]], inputs: inputs, now: 0)
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 0), [])
        XCTAssertEqual(keeper.pending.map(\.source), ["system:capture_2"], "connected, then gone: still to make")
        XCTAssertEqual(keeper.known, [["system:capture_1"], []])
        graph.vanishingOnConnect = []
        graph.ports.insert("system:capture_2")
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 1), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_2"), ["system:capture_2"])
        XCTAssertTrue(keeper.pending.isEmpty)
        // One that never holds is reported at its deadline, like one whose source never came.
        graph.vanishingOnConnect = ["system:capture_1"]
        keeper.planRestore([["system:capture_1"], []], inputs: inputs, now: 2)
        graph.wires = [:]
        XCTAssertEqual(keeper.retry(graph, inputs: inputs, now: 13), [.noSuchPort("system:capture_1")])
    }

    /// A returning source whose client is slow to become active (refused connects) is waited
    /// for past the restore timeout: it went away on its own, so nobody gave up on it.
    func testAReturningSourceThatRefusesIsWaitedForPastTheTimeout() {
        let graph = FakeGraph()
        graph.ports = ["system:capture_1"]
        graph.wires = ["jh:in_1": ["system:capture_1"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10, graceSeconds: 2)
        keeper.remember(graph, inputs: ["jh:in_1"])
        graph.removePort("system:capture_1")
        keeper.observe(graph, inputs: ["jh:in_1"], now: 1, unregistrations: 1)
        keeper.settleLost(graph, now: 1)
        graph.ports.insert("system:capture_1")
        graph.refusing = ["system:capture_1"]
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 2), [])
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 30), [], "refused, not given up")
        graph.refusing = []
        XCTAssertEqual(keeper.retry(graph, inputs: ["jh:in_1"], now: 31), [])
        XCTAssertEqual(graph.connections(ofPortNamed: "jh:in_1"), ["system:capture_1"])
        XCTAssertTrue(keeper.pending.isEmpty)
    }

    func testWiringCarriedIntoARebuildIncludesWhatWaits() {
        let graph = FakeGraph()
        graph.ports = ["a:1"]
        graph.wires = ["jh:in_1": ["a:1"]]
        var keeper = ConnectionKeeper(restoreTimeout: 10)
        keeper.remember(graph, inputs: inputs)
        keeper.planRestore([[], ["b:2"]], inputs: inputs, now: 0)
        keeper.remember(graph, inputs: inputs)
        XCTAssertEqual(keeper.wiringToCarry(inputs: inputs), [["a:1"], ["b:2"]])
        XCTAssertEqual(keeper.abandonPending(), [.noSuchPort("b:2")])
    }
}
