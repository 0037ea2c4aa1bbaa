import XCTest

@testable import JackHostCLI

/// Every transition of the take controller, without JACK: commands before the connection,
/// while armed and recording, during stopping and after the end.
final class TakeControllerTests: XCTestCase {
    typealias Controller = TakeController
    let sigterm = Controller.StopReason(.signal(15))
    let clock = Controller.StopReason(.clock, status: .failure, message: "the take ended by the clock")

    func testAContinuousRunRecordsFromTheConnectionUntilAQuit() {
        var controller = Controller(mode: .continuous)
        XCTAssertEqual(controller.state, .idle)
        XCTAssertEqual(controller.handle(.connected), [])
        XCTAssertEqual(controller.state, .recording)
        XCTAssertEqual(controller.handle(.quit(clock)), [.announce("the take ended by the clock")])
        XCTAssertEqual(controller.state, .stopping(clock))
        XCTAssertEqual(controller.handle(.finished), [])
        XCTAssertEqual(controller.state, .finished(clock))
    }

    func testAQuitWithoutAMessageAnnouncesNothing() {
        var controller = Controller(mode: .continuous)
        _ = controller.handle(.connected)
        XCTAssertEqual(controller.handle(.quit(sigterm)), [])
        XCTAssertEqual(controller.state, .stopping(sigterm))
    }

    func testStartAndStopWithoutRequestsReportProgressOrAreRefused() {
        for mode in [Controller.Mode.continuous, .automatic] {
            var controller = Controller(mode: mode)
            _ = controller.handle(.connected)
            let before = controller.state
            XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [.reportProgress], "\(mode)")
            XCTAssertEqual(
                controller.handle(.stop(origin: "SIGUSR2")),
                [.refused("SIGUSR2 ignored: it ends a take only with record --signal-trigger")], "\(mode)")
            XCTAssertEqual(controller.handle(.status), [.reportProgress])
            XCTAssertEqual(controller.state, before, "\(mode)")
        }
    }

    func testRequestedTakesStartAndStopAndRepeatsDoNothing() {
        var controller = Controller(mode: .onRequest)
        _ = controller.handle(.connected)
        XCTAssertEqual(controller.state, .armed)
        XCTAssertEqual(controller.handle(.stop(origin: "SIGUSR2")), [], "no take to stop")
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [.startTake])
        XCTAssertEqual(controller.state, .recording)
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [], "a take is already open")
        XCTAssertEqual(controller.handle(.status), [.reportProgress])
        XCTAssertEqual(controller.handle(.stop(origin: "SIGUSR2")), [.stopTake])
        XCTAssertEqual(controller.state, .armed)
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [.startTake])
        XCTAssertEqual(controller.handle(.quit(sigterm)), [])
        XCTAssertEqual(controller.state, .stopping(sigterm))
    }

    func testRequestsBeforeTheConnectionActOnceTheTakeCanStart() {
        var controller = Controller(mode: .onRequest)
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [])
        XCTAssertEqual(controller.state, .idle)
        XCTAssertEqual(controller.handle(.connected), [.startTake])
        XCTAssertEqual(controller.state, .recording)

        var both = Controller(mode: .onRequest)
        _ = both.handle(.start(origin: "SIGUSR1"))
        _ = both.handle(.stop(origin: "SIGUSR2"))
        XCTAssertEqual(both.handle(.connected), [.startTake, .stopTake], "in the order they came")
        XCTAssertEqual(both.state, .armed)

        var continuous = Controller(mode: .continuous)
        _ = continuous.handle(.start(origin: "SIGUSR1"))
        XCTAssertEqual(continuous.handle(.connected), [.reportProgress], "SIGUSR1 while connecting: the progress line, once connected")
    }

    func testAQuitBeforeTheConnectionEndsTheRunAndDropsEarlyRequests() {
        var controller = Controller(mode: .onRequest)
        _ = controller.handle(.start(origin: "SIGUSR1"))
        XCTAssertEqual(controller.handle(.quit(sigterm)), [])
        XCTAssertEqual(controller.state, .stopping(sigterm))
        XCTAssertEqual(controller.handle(.connected), [], "no take starts after a quit")
        XCTAssertEqual(controller.state, .stopping(sigterm))
    }

    func testCommandsWhileStopping() {
        var controller = Controller(mode: .onRequest)
        _ = controller.handle(.connected)
        _ = controller.handle(.start(origin: "SIGUSR1"))
        _ = controller.handle(.quit(sigterm))
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [.refused("SIGUSR1 ignored: the take is already ending")])
        XCTAssertEqual(controller.handle(.stop(origin: "SIGUSR2")), [.refused("SIGUSR2 ignored: the take is already ending")])
        XCTAssertEqual(controller.handle(.status), [])
        XCTAssertEqual(controller.handle(.takeObserved(open: false)), [])
        XCTAssertEqual(controller.handle(.quit(clock)), [.abandonDrain], "a second quit cuts the drain short")
        XCTAssertEqual(controller.state, .stopping(sigterm), "the first reason stands")
        _ = controller.handle(.finished)
        XCTAssertEqual(controller.state, .finished(sigterm))
    }

    func testRotateActsOnlyWhileATakeIsOpen() {
        var continuous = Controller(mode: .continuous)
        XCTAssertEqual(continuous.handle(.rotate(origin: "OSC /rotate")), [], "before the connection it waits")
        XCTAssertEqual(continuous.handle(.connected), [.rotateFile])
        XCTAssertEqual(continuous.handle(.rotate(origin: "OSC /rotate")), [.rotateFile])
        XCTAssertEqual(continuous.state, .recording)

        var requested = Controller(mode: .onRequest)
        _ = requested.handle(.connected)
        XCTAssertEqual(requested.handle(.rotate(origin: "OSC /rotate")), [.refused("OSC /rotate ignored: no take is open to rotate")])
        _ = requested.handle(.start(origin: "SIGUSR1"))
        XCTAssertEqual(requested.handle(.rotate(origin: "OSC /rotate")), [.rotateFile])
        XCTAssertEqual(requested.state, .recording, "a rotation keeps the take open")
        _ = requested.handle(.quit(sigterm))
        XCTAssertEqual(requested.handle(.rotate(origin: "OSC /rotate")), [.refused("OSC /rotate ignored: the take is already ending")])
    }

    func testMarkerActsOnlyWhileATakeIsOpen() {
        let mark = Controller.Command.marker(label: "verse", origin: "OSC /marker")
        let placed = Controller.Effect.markTake(label: "verse", origin: "OSC /marker")
        var continuous = Controller(mode: .continuous)
        XCTAssertEqual(continuous.handle(mark), [], "before the connection it waits")
        XCTAssertEqual(continuous.handle(.connected), [placed])
        XCTAssertEqual(continuous.handle(mark), [placed])
        XCTAssertEqual(continuous.state, .recording)

        var requested = Controller(mode: .onRequest)
        _ = requested.handle(.connected)
        XCTAssertEqual(requested.handle(mark), [.refused("OSC /marker ignored: no take is open to mark")])
        _ = requested.handle(.start(origin: "SIGUSR1"))
        XCTAssertEqual(requested.handle(mark), [placed])
        XCTAssertEqual(requested.state, .recording, "a marker keeps the take open")
        _ = requested.handle(.quit(sigterm))
        XCTAssertEqual(requested.handle(mark), [.refused("OSC /marker ignored: the take is already ending")])

        var automatic = Controller(mode: .automatic)
        _ = automatic.handle(.connected)
        XCTAssertEqual(automatic.handle(mark), [.refused("OSC /marker ignored: no take is open to mark")], "armed")
        _ = automatic.handle(.takeObserved(open: true))
        XCTAssertEqual(automatic.handle(mark), [placed])
    }

    func testNothingActsAfterTheEnd() {
        var controller = Controller(mode: .onRequest)
        _ = controller.handle(.connected)
        _ = controller.handle(.quit(sigterm))
        _ = controller.handle(.finished)
        for command: Controller.Command in [.start(origin: "x"), .stop(origin: "x"), .status, .quit(clock), .connected, .finished] {
            XCTAssertEqual(controller.handle(command), [], "\(command)")
            XCTAssertEqual(controller.state, .finished(sigterm))
        }
    }

    func testAutomaticTakesFollowWhatTheRecorderReports() {
        var controller = Controller(mode: .automatic)
        _ = controller.handle(.connected)
        XCTAssertEqual(controller.state, .armed)
        XCTAssertEqual(controller.handle(.takeObserved(open: true)), [])
        XCTAssertEqual(controller.state, .recording)
        XCTAssertEqual(controller.handle(.takeObserved(open: false)), [])
        XCTAssertEqual(controller.state, .armed)

        var continuous = Controller(mode: .continuous)
        _ = continuous.handle(.connected)
        _ = continuous.handle(.takeObserved(open: false))
        XCTAssertEqual(continuous.state, .recording, "only the recorder's own trigger moves a take")
    }

    func testFinishedBeforeAQuitDoesNothing() {
        var controller = Controller(mode: .continuous)
        _ = controller.handle(.connected)
        XCTAssertEqual(controller.handle(.finished), [])
        XCTAssertEqual(controller.state, .recording)
        var idle = Controller(mode: .continuous)
        XCTAssertEqual(idle.handle(.status), [])
        XCTAssertEqual(idle.handle(.takeObserved(open: true)), [])
        XCTAssertEqual(idle.state, .idle)
    }

    /// The cells the other tests leave: the end before the connection, an announced quit before
    /// it, early rotations and markers that find no take open, rotations of an automatic take,
    /// the recorder's reports in on-request mode, and a second connection.
    func testTheRemainingCellsOfTheTable() {
        var idle = Controller(mode: .onRequest)
        XCTAssertEqual(idle.handle(.finished), [])
        XCTAssertEqual(idle.state, .idle, "the end before a quit changes nothing")
        XCTAssertEqual(idle.handle(.quit(clock)), [.announce("the take ended by the clock")])
        XCTAssertEqual(idle.state, .stopping(clock))

        for mode in [Controller.Mode.onRequest, .automatic] {
            var early = Controller(mode: mode)
            XCTAssertEqual(early.handle(.rotate(origin: "key r")), [])
            XCTAssertEqual(early.handle(.marker(label: "m1", origin: "key m")), [])
            XCTAssertEqual(
                early.handle(.connected),
                [.refused("key r ignored: no take is open to rotate"), .refused("key m ignored: no take is open to mark")], "\(mode)")
            XCTAssertEqual(early.state, .armed, "\(mode)")
        }

        var automatic = Controller(mode: .automatic)
        _ = automatic.handle(.connected)
        _ = automatic.handle(.takeObserved(open: true))
        XCTAssertEqual(automatic.handle(.rotate(origin: "key r")), [.rotateFile])
        XCTAssertEqual(automatic.state, .recording)

        var requested = Controller(mode: .onRequest)
        _ = requested.handle(.connected)
        XCTAssertEqual(requested.handle(.takeObserved(open: true)), [])
        XCTAssertEqual(requested.state, .armed, "on request, only start and stop move a take")
        XCTAssertEqual(requested.handle(.connected), [])
        XCTAssertEqual(requested.state, .armed, "a second connection changes nothing")
        _ = requested.handle(.start(origin: "SIGUSR1"))
        XCTAssertEqual(requested.handle(.connected), [])
        XCTAssertEqual(requested.state, .recording)
    }

    func testTheModeFollowsThePlansTrigger() throws {
        XCTAssertEqual(CaptureSession.mode(of: try plan("record", ["t.wav"])), .continuous)
        XCTAssertEqual(CaptureSession.mode(of: try plan("record", ["t.wav", "--signal-trigger"])), .onRequest)
        XCTAssertEqual(CaptureSession.mode(of: try plan("record", ["t.wav", "--transport"])), .automatic)
        XCTAssertEqual(CaptureSession.mode(of: try plan("run", ["--meter"])), .continuous)
    }

    func testCadenceRunsAtMostOncePerInterval() {
        var atOnce = Cadence(every: 1)
        XCTAssertTrue(atOnce.isDue(10))
        XCTAssertFalse(atOnce.isDue(10.5))
        XCTAssertTrue(atOnce.isDue(11))
        var later = Cadence(every: 1, startAtOnce: false)
        XCTAssertFalse(later.isDue(10))
        XCTAssertFalse(later.isDue(10.9))
        XCTAssertTrue(later.isDue(11.0))
    }

    private func plan(_ command: String, _ arguments: [String]) throws -> CapturePlan {
        let table = command == "run" ? CommandTables.run : CommandTables.record
        return try CapturePlan(command: command, parsed: parseArguments(arguments, options: table, command: command))
    }

    func testTheLoopTellsObserversEveryChangeAndEndsAtTheFirstQuit() {
        final class Script: TakeDuty {
            var ticks: [[TakeController.Command]]
            init(_ ticks: [[TakeController.Command]]) { self.ticks = ticks }
            func tick(now: Double) -> [TakeController.Command] { ticks.isEmpty ? [] : ticks.removeFirst() }
        }
        final class Recorded: TakeObserver {
            var states: [TakeController.State] = []
            func takeStateChanged(to state: TakeController.State) { states.append(state) }
        }
        let observer = Recorded()
        var effects: [TakeController.Effect] = []
        let later = Script([[.status], [], [], [], [.quit(clock)]])
        let script = Script([
            [.start(origin: "SIGUSR1")], [], [.stop(origin: "SIGUSR2"), .start(origin: "SIGUSR1")], [.quit(sigterm), .stop(origin: "x")],
        ])
        let loop = TakeLoop(duties: [script, later], observers: [observer], perform: { effects.append($0) })
        var controller = Controller(mode: .onRequest)
        loop.send(.connected, to: &controller)
        XCTAssertEqual(loop.run(&controller), sigterm, "the first quit ends the loop; the later duty's quit is never sent")
        XCTAssertEqual(observer.states, [.armed, .recording, .armed, .recording, .stopping(sigterm)])
        XCTAssertEqual(effects, [.startTake, .reportProgress, .stopTake, .startTake])
        loop.send(.finished, to: &controller)
        XCTAssertEqual(observer.states.last, .finished(sigterm))
    }

    /// In automatic modes a remote start or stop acts (the recorder's trigger then holds it until
    /// the next take); SIGUSR1 and SIGUSR2 keep their meanings.
    func testRemoteCommandsActOverAnAutomaticTrigger() {
        var controller = TakeController(mode: .automatic)
        _ = controller.handle(.connected)
        XCTAssertEqual(controller.handle(.start(origin: "OSC /jackhost/start")), [.startTake])
        XCTAssertEqual(controller.handle(.stop(origin: "browser /api/stop")), [.stopTake])
        XCTAssertEqual(controller.handle(.start(origin: "MMC record strobe")), [.startTake])
        XCTAssertEqual(controller.handle(.start(origin: "SIGUSR1")), [.reportProgress], "SIGUSR1 still reports progress")
        XCTAssertEqual(
            controller.handle(.stop(origin: "SIGUSR2")), [.refused("SIGUSR2 ignored: it ends a take only with record --signal-trigger")])
        XCTAssertEqual(controller.state, .armed, "the state follows the recorder (takeObserved), not the command")
    }
}
