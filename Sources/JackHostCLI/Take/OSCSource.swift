import JackHostConsumers

/// OSC over UDP as a source of take commands (`--osc`): each tick reads at most
/// ``datagramsPerTick`` datagrams from the ``OSCSocket`` (more wait for the next tick, and the
/// flood is counted), decodes each with liblo, looks its path and types up in
/// ``OSCCommandTable`` and hands the commands to the controller. `/jackhost/status` is answered
/// at once; an unknown path or wrong types gets `/jackhost/error` back. Senders outside
/// loopback and `--osc-allow` are dropped unanswered, and counted.
///
/// It also observes the take, so a status reply names the controller's state. Main thread
/// only; nothing of it reaches the real-time thread.
final class OSCSource: TakeDuty, TakeObserver {
    /// What a `/jackhost/status` reply says besides the state, read when it is asked for.
    struct Readings {
        /// The file being written (the last of the take's files), or "" without one.
        var takePath: String
        var framesWritten: Int
        var xruns: Int
        /// The largest loss of any consumer, as the meter shows it.
        var droppedFrames: Int
        /// Frames the server's clock skipped this client.
        var skippedFrames: Int
        /// Seconds of recording the disk holds at this rate; nil when unknown.
        var diskSecondsLeft: Double?
    }

    /// What the source did, for the summary.
    struct Counts: Equatable {
        /// Messages that matched the table (commands and status requests).
        var accepted = 0
        /// Datagrams that were not OSC, or had an unknown path or wrong types.
        var refused = 0
        /// Datagrams from senders outside loopback and `--osc-allow`.
        var droppedSenders = 0
        /// Ticks that reached ``OSCSource/datagramsPerTick`` with more still waiting.
        var floodTicks = 0
        /// `/jackhost/meter` messages sent to subscribers.
        var metersSent = 0
    }

    /// The most datagrams one tick reads (3,200 a second at a 20 ms tick).
    static let datagramsPerTick = 64
    /// The longest datagram read whole; a longer one is refused.
    static let largestDatagram = 4096

    let socket: OSCSocket
    /// The meter whose levels `/jackhost/meter` sends (a real-time consumer of its own, as the
    /// live view has), or nil when none runs.
    private let meter: LevelMeter?
    private var subscriptions = OSCMeterSubscriptions()
    private let quiet: Bool
    private let readings: () -> Readings
    private(set) var counts = Counts()
    /// The controller's state, as the loop last told it.
    private var state: TakeController.State = .idle
    /// Receive buffer, reused every datagram.
    private var buffer = [UInt8](repeating: 0, count: OSCSource.largestDatagram)

    init(socket: OSCSocket, meter: LevelMeter?, quiet: Bool, readings: @escaping () -> Readings) {
        self.socket = socket
        self.meter = meter
        self.quiet = quiet
        self.readings = readings
    }

    func tick(now: Double) -> [TakeController.Command] {
        var commands: [TakeController.Command] = []
        var flooded = true
        for _ in 0..<Self.datagramsPerTick {
            guard let (count, sender) = socket.receive(into: &buffer) else {
                flooded = false
                break
            }
            if let command = handle(count: count, from: sender, now: now) { commands.append(command) }
        }
        if flooded && socket.hasWaitingDatagram { counts.floodTicks += 1 }
        sendMeters(now: now)
        return commands
    }

    /// `/jackhost/meter` to every subscriber that is due: one reading of the meter for all of them.
    private func sendMeters(now: Double) {
        guard let meter, followSubscribers(meter) else { return }
        let destinations = subscriptions.due(now: now)
        guard !destinations.isEmpty else { return }
        let message = OSCMeterSubscriptions.message(meter.takeSnapshot()).encoded()
        for destination in destinations {
            socket.send(message, to: destination)
            counts.metersSent += 1
        }
    }

    /// Keeps the meter measuring only while someone subscribes: paused, it costs the real-time
    /// thread one load a cycle (issue 25: what a take does not use costs nothing). Returns
    /// whether meters may be sent this tick: not on the tick that resumes the meter, whose
    /// window starts only now (the subscriber is due at the next tick, 20 ms later).
    private func followSubscribers(_ meter: LevelMeter) -> Bool {
        let wanted = !subscriptions.subscriptions.isEmpty
        if wanted && meter.isPaused {
            _ = meter.takeSnapshot()
            meter.resume()
            return false
        }
        if !wanted && !meter.isPaused { meter.pause() }
        return wanted
    }

    func takeStateChanged(to state: TakeController.State) { self.state = state }

    /// One datagram: dropped, refused (answered unless it is not OSC at all), answered with
    /// the status, or turned into a command.
    private func handle(count: Int, from sender: OSCSocket.Sender, now: Double) -> TakeController.Command? {
        guard socket.settings.permits(sender.host) else {
            counts.droppedSenders += 1
            return nil
        }
        let decoded =
            count <= buffer.count
            ? buffer.withUnsafeBytes { OSCMessage(datagram: UnsafeRawBufferPointer(rebasing: $0[..<count])) } : nil
        guard let message = decoded else {
            counts.refused += 1
            return nil
        }
        switch OSCCommandTable.request(for: message) {
        case .failure(let refusal):
            if counts.refused == 0 && !quiet { printNote("OSC from \(sender) refused: \(refusal.message) (further refusals are only counted)") }
            counts.refused += 1
            socket.send(OSCMessage(path: "/jackhost/error", arguments: [.string(refusal.message)]).encoded(), to: sender)
            return nil
        case .success(.status(let replyPort)):
            guard replyPort.map({ (1...65535).contains($0) }) ?? true else {
                answer("/jackhost/status: the reply port must be 1 to 65535", to: sender)
                return nil
            }
            counts.accepted += 1
            socket.send(statusReply().encoded(), to: sender.replying(to: replyPort))
            return nil
        case .success(.subscribe(let rate, let replyPort)):
            let refusal =
                meter == nil
                ? "/jackhost/subscribe: no meter runs in this process" : subscriptions.subscribe(sender, rate: rate, replyPort: replyPort, now: now)
            answer(refusal, to: sender)
            return nil
        case .success(.unsubscribe(let replyPort)):
            answer(subscriptions.unsubscribe(sender, replyPort: replyPort) ? nil : "/jackhost/unsubscribe: no such subscription", to: sender)
            return nil
        case .success(.command(let command)):
            counts.accepted += 1
            if !quiet { printNote("OSC \(message) from \(sender)\(Self.isQuit(command) ? ": the take is finalised and jackhost stops" : "")") }
            return command
        }
    }

    /// Counts a subscription request, and answers a refused one with `/jackhost/error`.
    private func answer(_ refusal: String?, to sender: OSCSocket.Sender) {
        guard let refusal else {
            counts.accepted += 1
            return
        }
        counts.refused += 1
        socket.send(OSCMessage(path: "/jackhost/error", arguments: [.string(refusal)]).encoded(), to: sender)
    }

    /// Whether a command ends the run (its note says so).
    private static func isQuit(_ command: TakeController.Command) -> Bool {
        if case .quit = command { true } else { false }
    }

    /// `/jackhost/status` with `sshihhf`: state, take path, frames written, xruns, dropped
    /// frames, skipped frames, disk seconds left (-1: unknown).
    func statusReply() -> OSCMessage {
        let now = readings()
        return OSCMessage(
            path: "/jackhost/status",
            arguments: [
                .string(Self.name(of: state)), .string(now.takePath), .int64(Int64(now.framesWritten)),
                .int32(Int32(clamping: now.xruns)), .int64(Int64(now.droppedFrames)), .int64(Int64(now.skippedFrames)),
                .float(Float(now.diskSecondsLeft ?? -1)),
            ])
    }

    /// The state's word in a status reply: idle, armed, recording, stopping or finished.
    static func name(of state: TakeController.State) -> String {
        switch state {
        case .idle: "idle"
        case .armed: "armed"
        case .recording: "recording"
        case .stopping: "stopping"
        case .finished: "finished"
        }
    }

    /// The summary's line: `OSC: 12 messages accepted, 3 refused (…), 0 dropped …, 1 flood …`.
    var summary: String {
        "OSC: \(counts.accepted) message(s) accepted, \(counts.refused) refused (not OSC, unknown path or wrong types), "
            + "\(counts.droppedSenders) dropped from senders not allowed, \(counts.floodTicks) tick(s) left a flood for the next, "
            + "\(counts.metersSent) meter message(s) sent\n"
    }
}
