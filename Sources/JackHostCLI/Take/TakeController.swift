/// The state of one capture run and its takes, and what may happen next: a pure state
/// machine over commands, unit-tested without JACK.
///
/// Every way to start, stop or end a take is a source that only sends ``Command``s: signals
/// (``SignalSource``), the keyboard, OSC (``OSCSource``), the duration clock, the disk, the server,
/// the stream's reader, and later the session sources. The controller alone decides what a command does in the
/// state it finds, and answers with ``Effect``s for the run to carry out. Observers learn every
/// state change from ``TakeLoop``.
///
/// - idle: not yet connected. Start, stop, rotate and marker requests wait and act, in order, once the take
///   can start (a SIGUSR1 sent while jackhost connects counts); a quit ends the run before
///   anything is recorded.
/// - armed: connected, waiting for a trigger (the pre-roll fills meanwhile).
/// - recording: a take is open (every untriggered run records from its first cycle).
/// - stopping: a quit was accepted; the run finalises. Start and stop no longer act, and a
///   second quit asks the drain to be cut short.
/// - finished: the run is over and every file is final.
struct TakeController: Equatable {
    /// Who decides when takes start and stop.
    enum Mode: Equatable {
        /// One take from the first cycle to the end (record, meter, stream, run without a trigger).
        case continuous
        /// Takes start and stop on ``Command/start`` and ``Command/stop`` (`--signal-trigger`).
        case onRequest
        /// The recorder's trigger decides, frame-exact (`--transport`, `--freewheel`,
        /// `--trigger LEVEL`); the controller follows what it reports.
        case automatic
    }

    /// Why a run ends, and with which exit status.
    struct StopReason: Equatable {
        enum Kind: Equatable {
            /// A stop signal (its number): the take ends normally.
            case signal(Int32)
            /// `--duration` frames were captured.
            case complete
            /// `--duration` passed in wall-clock time, but cycles arrived late.
            case clock
            case serverLost
            case streamReaderClosed
            case xrun
            case recorderFailed
            /// The recording that runs this isolated plugin went away.
            case supervisorGone
            /// A remote control asked the run to end (`OSC /jackhost/quit`, what it came from):
            /// the take ends normally, as for SIGTERM.
            case remote(String)
        }

        let kind: Kind
        let status: ExitStatus
        /// The line that tells the user, printed once when the stop is accepted; nil for none.
        let message: String?

        init(_ kind: Kind, status: ExitStatus = .success, message: String? = nil) {
            self.kind = kind
            self.status = status
            self.message = message
        }
    }

    enum State: Equatable {
        case idle
        case armed
        case recording
        case stopping(StopReason)
        case finished(StopReason)

        /// Whether a quit was accepted (stopping or finished).
        var isEnding: Bool {
            switch self {
            case .stopping, .finished: true
            default: false
            }
        }
    }

    enum Command: Equatable {
        /// Start a take (`origin` names the source in messages: "SIGUSR1").
        case start(origin: String)
        /// End the current take and wait for the next start.
        case stop(origin: String)
        /// End the current file and go on in the next one, without losing a frame.
        case rotate(origin: String)
        /// Place a marker named `label` in the open take at the current cycle (`origin` names
        /// the source, in messages and in the marker).
        case marker(label: String, origin: String)
        /// Print the take's progress.
        case status
        /// End the run.
        case quit(StopReason)
        /// The server connection is up and the first take may begin.
        case connected
        /// The recorder opened (true) or closed (false) a take on its own trigger.
        case takeObserved(open: Bool)
        /// Everything is final.
        case finished
        /// A start, stop or marker that carries its own moment, a JACK frame time (a MIDI
        /// event's): decided as the command itself, and carried out at that frame.
        indirect case atFrame(UInt32, Command)
    }

    enum Effect: Equatable {
        /// Ask the recorder to start a take at the current cycle.
        case startTake
        /// Ask the recorder to end the take at the current cycle.
        case stopTake
        /// Ask the recorder to go on in a new file from the current cycle.
        case rotateFile
        /// Ask the recorder to place a marker at the current cycle.
        case markTake(label: String, origin: String)
        /// Print the take's progress.
        case reportProgress
        /// Say why a command did nothing.
        case refused(String)
        /// Tell the user why the run ends (the reason's message).
        case announce(String)
        /// Cut the closing drain short (a second stop while stopping).
        case abandonDrain
        /// A start, stop or marker to carry out at a JACK frame time instead of the current cycle.
        indirect case atFrame(UInt32, Effect)

        /// This effect at `frame`, when it is one that acts on the take's audio.
        func at(_ frame: UInt32) -> Effect {
            switch self {
            case .startTake, .stopTake, .markTake: .atFrame(frame, self)
            default: self
            }
        }
    }

    let mode: Mode
    private(set) var state: State = .idle
    /// Starts, stops, rotations and markers asked for while idle: replayed, in order, once connected.
    private var earlyRequests: [Command] = []

    init(mode: Mode) { self.mode = mode }

    /// Applies a command and returns what the run must do.
    mutating func handle(_ command: Command) -> [Effect] {
        if case .atFrame(let frame, let inner) = command { return handle(inner).map { $0.at(frame) } }
        switch (state, command) {
        case (.finished, _):
            return []
        case (.stopping, .quit):
            return [.abandonDrain]
        case (.stopping, .finished):
            if case .stopping(let reason) = state { state = .finished(reason) }
            return []
        case (.stopping, .start(let origin)), (.stopping, .stop(let origin)), (.stopping, .rotate(let origin)),
            (.stopping, .marker(_, let origin)):
            return [.refused("\(origin) ignored: the take is already ending")]
        case (.stopping, _):
            return []
        case (_, .quit(let reason)):
            state = .stopping(reason)
            return reason.message.map { [.announce($0)] } ?? []
        case (_, .finished):
            return []
        case (.idle, .connected):
            return connect()
        case (.idle, .start), (.idle, .stop), (.idle, .rotate), (.idle, .marker):
            earlyRequests.append(command)
            return []
        case (.idle, _):
            return []
        default:
            return running(command)
        }
    }

    /// The first state after the connection, and any request that came before it.
    private mutating func connect() -> [Effect] {
        state = mode == .continuous ? .recording : .armed
        let requests = earlyRequests
        earlyRequests = []
        return requests.flatMap { running($0) }
    }

    /// A command while armed or recording.
    private mutating func running(_ command: Command) -> [Effect] {
        switch (mode, command) {
        case (.onRequest, .start):
            guard state == .armed else { return [] }
            state = .recording
            return [.startTake]
        case (.onRequest, .stop):
            guard state == .recording else { return [] }
            state = .armed
            return [.stopTake]
        case (.automatic, .start(let origin)) where !Self.isSignal(origin):
            // The last explicit command wins over the trigger until the next take (README).
            return [.startTake]
        case (.automatic, .stop(let origin)) where !Self.isSignal(origin):
            return [.stopTake]
        case (_, .start), (_, .stop):
            return refusal(command)
        case (_, .rotate(let origin)):
            return state == .recording ? [.rotateFile] : [.refused("\(origin) ignored: no take is open to rotate")]
        case (_, .marker(let label, let origin)):
            return state == .recording
                ? [.markTake(label: label, origin: origin)] : [.refused("\(origin) ignored: no take is open to mark")]
        case (_, .status):
            return [.reportProgress]
        case (.automatic, .takeObserved(let open)):
            state = open ? .recording : .armed
            return []
        default:
            return []
        }
    }

    /// Whether a command came from a signal (SIGUSR1, SIGUSR2), which keeps its documented meaning
    /// in every mode: a progress line, or a stop only with `--signal-trigger`.
    static func isSignal(_ origin: String) -> Bool { origin.hasPrefix("SIG") }

    /// Start and stop do nothing unless takes start on request. A start then reports progress
    /// instead: SIGUSR1's documented meaning without `--signal-trigger`.
    private func refusal(_ command: Command) -> [Effect] {
        switch command {
        case .start: return [.reportProgress]  // SIGUSR1 without --signal-trigger: the progress line
        case .stop(let origin): return [.refused("\(origin) ignored: it ends a take only with record --signal-trigger")]
        default: return []
        }
    }
}
