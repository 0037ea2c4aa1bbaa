import Glibc
import JackHostConsumers

/// jackhost as a session manager's client while it runs: answers the open once the take is
/// up, saves the settings on `/nsm/client/save`, starts a take on
/// `/nsm/client/session_is_loaded` when the settings ask, shows the live view as its optional
/// GUI, and tells the manager what it records, when the disk runs short, and when a take is
/// finalised.
///
/// A manager that goes away (its port closes, or jackhost's parent changes) is reported once;
/// the take goes on. Messages jackhost does not know are counted and ignored, at most
/// ``messagesPerTick`` a tick, so a flood cannot starve the run. Main thread only.
final class NSMSessionClient: CaptureCompanion {
    /// What the client did, for the summary and the tests.
    struct Counts: Equatable {
        var saves = 0
        /// Datagrams that were not OSC, or OSC messages jackhost does not read.
        var ignored = 0
    }

    static let messagesPerTick = 64

    let link: NSMLink
    let opened: NSMHandshake.Opened
    let folder: SessionFolder
    let settings: SessionSettings
    private(set) var counts: Counts
    private let quiet: Bool
    private let parentAtStart = getppid()
    private var managerGone = false
    private var recorder: Recorder?
    private var liveViewURL: String?
    private var reportedFile: String?
    private var fileCheck = Cadence(every: 0.25)
    private var loadedSeen = false

    init(link: NSMLink, opened: NSMHandshake.Opened, folder: SessionFolder, settings: SessionSettings, ignoredBeforeOpen: Int, quiet: Bool) {
        self.link = link
        self.opened = opened
        self.folder = folder
        self.settings = settings
        self.quiet = quiet
        counts = Counts(saves: 0, ignored: ignoredBeforeOpen)
    }

    // MARK: CaptureCompanion

    func started(_ take: RunningTake) {
        recorder = take.parts.recorder
        liveViewURL = take.parts.liveView?.url
        send(NSMProtocol.reply(to: NSMProtocol.Received.open, "jackhost is recording for \(opened.displayName) as \(opened.clientID)"))
        send(OSCMessage(path: NSMProtocol.Sent.guiHidden))
        if !quiet { printNote("in session \"\(ValueParsing.shown(opened.displayName))\" of \(opened.managerName), folder \(folder.path)") }
    }

    func diskWarning(_ warning: String) { send(NSMProtocol.message(priority: 3, warning)) }

    func failedToStart(_ line: String) {
        send(NSMProtocol.error(to: NSMProtocol.Received.open, .general, line))
    }

    func finalising() {
        send(NSMProtocol.Sent.progress, .float(0))
        send(NSMProtocol.message(priority: 1, "finalising the take"))
    }

    func finalised(_ status: ExitStatus) {
        send(NSMProtocol.Sent.progress, .float(1))
        send(NSMProtocol.message(priority: status == .success ? 1 : 2, "take finalised; exit status \(status.rawValue)"))
        if counts.ignored > 0 { printNote("session manager: \(counts.ignored) message(s) jackhost does not read were ignored") }
    }

    // MARK: TakeDuty, TakeObserver

    func tick(now: Double) -> [TakeController.Command] {
        if !managerGone && parentAtStart != 1 && getppid() != parentAtStart { noteManagerGone("jackhost's parent process ended") }
        var commands: [TakeController.Command] = []
        for _ in 0..<Self.messagesPerTick {
            guard let received = link.receive() else { break }
            switch received {
            case .message(let message): commands += handle(message)
            case .notOSC: counts.ignored += 1
            case .refused: noteManagerGone("its port at \(link.url) closed")
            }
        }
        if fileCheck.isDue(now) { reportFile() }
        return commands
    }

    func takeStateChanged(to state: TakeController.State) {
        if state == .idle, reportedFile != nil { send(NSMProtocol.message(priority: 1, "take stopped; waiting for a start")) }
        if state == .idle { reportedFile = nil }
    }

    // MARK: Messages

    private func handle(_ message: OSCMessage) -> [TakeController.Command] {
        switch (message.path, message.types) {
        case (NSMProtocol.Received.save, ""): save()
        case (NSMProtocol.Received.sessionLoaded, ""):
            if settings.recordOnLoad && !loadedSeen {
                loadedSeen = true
                return [.start(origin: "the session loading (record-on-load)")]
            }
        case (NSMProtocol.Received.showGUI, ""): showGUI()
        case (NSMProtocol.Received.hideGUI, ""): send(OSCMessage(path: NSMProtocol.Sent.guiHidden))
        case (NSMProtocol.Received.open, _):
            send(NSMProtocol.error(to: NSMProtocol.Received.open, .notNow, "jackhost does not switch sessions; the manager restarts it for another"))
        default: counts.ignored += 1
        }
        return []
    }

    private func save() {
        do {
            try folder.save(settings)
            counts.saves += 1
            send(NSMProtocol.reply(to: NSMProtocol.Received.save, "saved \(folder.settingsPath)"))
        } catch {
            printError("warning: the session was not saved: \(error)")
            send(NSMProtocol.error(to: NSMProtocol.Received.save, .general, error.description))
        }
    }

    private func showGUI() {
        guard let liveViewURL else {
            send(OSCMessage(path: NSMProtocol.Sent.guiHidden))
            send(NSMProtocol.message(priority: 2, "jackhost has no live view in this session: add http = PORT to \(folder.settingsPath)"))
            return
        }
        printNote("live view at \(liveViewURL)")
        send(OSCMessage(path: NSMProtocol.Sent.guiShown))
        send(NSMProtocol.message(priority: 1, "live view at \(liveViewURL)"))
    }

    /// Says which file is being recorded, once per file.
    private func reportFile() {
        guard let recorder, recorder.isTakeOpen, let file = recorder.files.last, file != reportedFile else { return }
        reportedFile = file
        send(NSMProtocol.message(priority: 1, "recording \(file.split(separator: "/").last.map(String.init) ?? file)"))
    }

    private func noteManagerGone(_ how: String) {
        guard !managerGone else { return }
        managerGone = true
        printNote("the session manager went away (\(how)); recording goes on; stop jackhost with SIGTERM or Ctrl-C")
    }

    private func send(_ path: String, _ argument: OSCMessage.Argument) { send(OSCMessage(path: path, arguments: [argument])) }

    private func send(_ message: OSCMessage) {
        guard !managerGone else { return }
        link.send(message)
    }
}
