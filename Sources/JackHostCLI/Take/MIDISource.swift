import JackHost

/// The control input's MIDI events as a source of take commands (`--midi-control`): each tick it
/// takes what the process callback queued (``MIDIControlQueue``, copied without allocation and
/// without a decision) and turns it into commands here, on the main thread. MIDI Machine Control
/// (`F0 7F ID 06 CMD F7`, to device 127 or `--mmc-id`) starts and stops takes, and
/// `--midi-marker` drops a marker, at the event's own frame: the recorder is held back by
/// ``holdBackSeconds`` so that the command, which reaches it from this thread a tick later,
/// still finds that frame unwritten. Everything else is counted and ignored.
final class MIDISource: TakeDuty {
    /// What the source did, for the summary.
    struct Counts: Equatable {
        /// Events read from the queue.
        var events = 0
        /// MMC commands and markers turned into commands.
        var commands = 0
    }

    /// How far behind capture the recorder runs with `--midi-control` (with an elastic buffer,
    /// the default): the take loop reads the queue every 20 ms, so a command reaches the recorder
    /// well inside this, even on a busy machine; one later still acts, where the writer is, and
    /// the recorder says how late.
    static let holdBackSeconds = 0.25

    let queue: MIDIControlQueue
    let settings: MIDIControlSettings
    private let quiet: Bool
    private(set) var counts = Counts()
    /// Controllers at 64 or more, so a held pedal marks once (indexed by channel and number).
    private var controllerHigh = Set<Int>()

    init(queue: MIDIControlQueue, settings: MIDIControlSettings, quiet: Bool) {
        self.queue = queue
        self.settings = settings
        self.quiet = quiet
    }

    func tick(now: Double) -> [TakeController.Command] {
        var commands: [TakeController.Command] = []
        for event in queue.drain() {
            counts.events += 1
            guard let command = command(for: event.bytes) else { continue }
            counts.commands += 1
            if !quiet { printNote(Self.origin(of: command) + " at frame \(event.frameTime)") }
            commands.append(.atFrame(event.frameTime, command))
        }
        return commands
    }

    /// The command an event makes, or nil. Controllers are remembered (a rise marks, not a hold).
    func command(for bytes: [UInt8]) -> TakeController.Command? {
        if let mmc = Self.machineControl(bytes, deviceID: settings.deviceID) {
            switch mmc {
            case 0x06: return .start(origin: "MMC record strobe")
            case 0x02, 0x03: return .start(origin: "MMC play")
            case 0x01: return .stop(origin: "MMC stop")
            case 0x07: return .stop(origin: "MMC record exit")
            case 0x09: return .stop(origin: "MMC pause")
            default: return nil
            }
        }
        guard let marker = settings.marker, bytes.count == 3 else { return nil }
        let kind = bytes[0] & 0xF0, channel = Int(bytes[0] & 0x0F)
        switch marker {
        case .note(let note) where kind == 0x90 && bytes[1] == note && bytes[2] > 0:
            return .marker(label: "", origin: "MIDI \(marker)")
        case .controller(let number) where kind == 0xB0 && bytes[1] == number:
            let key = channel << 7 | Int(number)
            guard bytes[2] >= 64 else {
                controllerHigh.remove(key)
                return nil
            }
            return controllerHigh.insert(key).inserted ? .marker(label: "", origin: "MIDI \(marker)") : nil
        default:
            return nil
        }
    }

    /// The command byte of an MMC message to device 127 or `deviceID`: `F0 7F ID 06 CMD F7`.
    static func machineControl(_ bytes: [UInt8], deviceID: UInt8?) -> UInt8? {
        guard bytes.count == 6, bytes[0] == 0xF0, bytes[1] == 0x7F, bytes[3] == 0x06, bytes[5] == 0xF7 else { return nil }
        guard bytes[2] == 0x7F || bytes[2] == deviceID else { return nil }
        return bytes[4]
    }

    private static func origin(of command: TakeController.Command) -> String {
        switch command {
        case .start(let origin), .stop(let origin), .rotate(let origin), .marker(_, let origin): origin
        default: "MIDI"
        }
    }

    /// The summary's line: `MIDI control: N event(s), M command(s) or marker(s), K lost`.
    var summary: String {
        let lost = queue.droppedEvents.load(ordering: .relaxed) + queue.oversizedEvents.load(ordering: .relaxed)
        return "MIDI control: \(counts.events) event(s) read, \(counts.commands) command(s) or marker(s), "
            + "\(lost) lost (queue full or longer than \(MIDIControlQueue.longestEvent) bytes)\n"
    }
}
