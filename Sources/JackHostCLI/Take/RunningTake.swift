import CSignals
import JackHost
import JackHostConsumers
import JackHostLiveView
import JackHostPlugins
import Synchronization

/// A run whose host has started: the parts, what watches them, and how the take ends.
///
/// Main thread, except the closures it hands to the display, the live view and systemd,
/// which read only the host's counters and atomics.
final class RunningTake {
    let parts: TakeParts
    let link: SupervisorLink?
    let resultSources: [PluginResultSource]
    let display: MeterDisplay?
    let diskReport: DiskSpaceReport?
    let endWatch: TakeEndWatch
    /// `m` and `r` on the terminal, when a file is recorded and standard input is one.
    let keyboard: KeyboardSource?
    /// `--osc` commands, when asked for.
    let remote: OSCSource?
    /// The live view's buttons (`--http-control`), when asked for.
    let browser: BrowserSource?
    /// MIDI Machine Control and marker notes (`--midi-control`), when asked for.
    let midi: MIDISource?
    /// `--silence` and `--clip`: says, marks and hooks each alarm, when asked for.
    let alarms: AlarmReport?
    /// `--results FILE`: plugin results and markers, once a second.
    let resultsFile: ResultsFileWriter?
    /// Connection failures reported at start; later ones are reported with the summary.
    let failuresAtStart: Int
    private let waitingForServer = AtomicFlag()

    var plan: CapturePlan { parts.plan }
    var host: CaptureHost { parts.host }

    /// Starts the host, settles the channel files' names, and reports the start.
    /// `diskWarnings` hears each warning about the disk besides stderr (a session manager).
    init(parts: TakeParts, link: SupervisorLink?, diskWarnings: ((String) -> Void)? = nil) throws {
        self.parts = parts
        self.link = link
        resultSources = parts.resultSources()
        let host = parts.host
        do {
            try host.start()
        } catch CaptureHostError.consumerRejectedFormat(let consumer, let reason) where consumer == parts.recorder?.consumerName {
            // Found before activation: the take's container cannot hold the channels or the
            // sample rate the server delivers (FLAC's 8 channels, Opus's rates), the user's choice to change.
            throw UsageError(reason)
        }
        if let recorder = parts.recorder { try ChannelFileDecision.decide(for: recorder, host: host, quiet: parts.plan.quiet) }
        link?.sendReady(pluginName: parts.plugins.first?.name ?? "")
        failuresAtStart = host.connectionFailures.count
        diskReport = parts.recorder.map {
            DiskSpaceReport(recorder: $0, reserve: parts.plan.minimumFreeBytes ?? 0, host: host, onWarning: diskWarnings)
        }
        endWatch = TakeEndWatch(
            host: host, recorder: parts.recorder, stream: parts.stream, stopOnXrun: parts.plan.stopOnXrun,
            othersContinue: parts.meter != nil || parts.stream != nil)
        // --quiet keeps the meter measuring (for --stop-on-xrun and the exit status) but draws nothing.
        keyboard = parts.recorder != nil && link == nil ? KeyboardSource() : nil
        let estimate = diskReport?.estimate
        remote = parts.osc.map {
            OSCSource(socket: $0, meter: parts.oscMeter, quiet: parts.plan.quiet, readings: Self.oscReadings(parts, estimate: estimate))
        }
        browser = parts.liveView?.control.map { BrowserSource(control: $0, quiet: parts.plan.quiet) }
        resultsFile = parts.resultsWriter.map { [resultSources] in
            ResultsFileWriter(writer: $0, sources: resultSources, host: host, recorder: parts.recorder, loudness: parts.loudness)
        }
        midi = host.controlEvents.flatMap { queue in
            parts.plan.midiControl.map { MIDISource(queue: queue, settings: $0, quiet: parts.plan.quiet) }
        }
        alarms = parts.alarmWatch.map { AlarmReport(watch: $0, recorder: parts.recorder, hooks: parts.hooks) }
        let results = resultSources
        let keys = keyboard == nil ? nil : KeyboardSource.legend
        display =
            parts.plan.quiet
            ? nil : parts.meter.map { Self.display($0, parts: parts, estimate: estimate, results: results, keys: keys) }
        reportStart()
    }

    /// The warnings about the wiring, and the line that says what is captured.
    private func reportStart() {
        for failure in host.connectionFailures { printError("warning: \(failure)") }
        for warning in CaptureReport.wiringWarnings(host.wiring, channels: plan.channels) { printError("warning: \(warning)") }
        guard !plan.quiet, let session = host.session else { return }
        let server = parts.serverName.map { "\"\($0)\"" } ?? "(default)"
        printNote("capturing \(host.inputPortNames.count) channels at \(Int(session.sampleRate)) Hz from server \(server)")
    }

    /// The terminal meter, with the counters it shows beside the levels.
    private static func display(
        _ meter: LevelMeter, parts: TakeParts, estimate: DiskSpaceReport.Estimate?, results: [PluginResultSource], keys: String?
    ) -> MeterDisplay {
        MeterDisplay(meter: meter, output: parts.reportDescriptor, plainInterval: parts.plan.meterInterval) {
            [host = parts.host, loudness = parts.loudness, alarms = parts.alarmWatch] in
            let stats = host.statistics
            let loudnessLines: [String] = loudness?.readings.map(\.meterLine) ?? []
            let alarmLines: [String] = alarms?.active.map { "ALARM " + $0.description } ?? []
            let buffered = Double(stats.consumers.map(\.bufferedFrames).max() ?? 0) / max(host.sampleRateOrDefault, 1)
            return MeterDisplay.Counters(
                droppedFrames: stats.consumers.map(\.droppedFrames).max() ?? 0, xruns: stats.xruns,
                skippedFrames: stats.timelineGapFrames,
                bufferedSeconds: buffered, recordingSecondsLeft: estimate?.secondsLeft,
                resultLines: results.compactMap(\.line), statusLines: loudnessLines + alarmLines, keys: keys)
        }
    }

    /// What a `/jackhost/status` reply reads, as the progress line and the meter do.
    private static func oscReadings(_ parts: TakeParts, estimate: DiskSpaceReport.Estimate?) -> () -> OSCSource.Readings {
        { [host = parts.host, recorder = parts.recorder] in
            let stats = host.statistics
            return .init(
                takePath: recorder.map { $0.files.last ?? $0.path } ?? "", framesWritten: recorder?.framesWritten ?? 0, xruns: stats.xruns,
                droppedFrames: stats.consumers.map(\.droppedFrames).max() ?? 0, skippedFrames: stats.timelineGapFrames,
                diskSecondsLeft: estimate?.secondsLeft)
        }
    }

    /// Follows the server's comings and goings, and starts what shows the take: systemd's
    /// status, the terminal meter, the live view.
    func startObservers() throws {
        followServer()
        let recorder = parts.recorder
        let alarmWatch = parts.alarmWatch
        parts.notifier?.readProgress = { [host, waitingForServer] in
            let stats = host.statistics
            return .init(
                capturedFrames: stats.capturedFrames, recordedFrames: recorder?.framesWritten, sampleRate: host.sampleRateOrDefault,
                xruns: stats.xruns, droppedFrames: stats.consumers.map(\.droppedFrames).max() ?? 0,
                isWaitingForServer: waitingForServer.value.load(ordering: .relaxed), alarms: alarmWatch?.active.map(\.description) ?? [])
        }
        parts.notifier?.ready()
        let estimate = diskReport?.estimate
        display?.start()
        if let remote, !plan.quiet { printNote("OSC control at \(remote.socket.url)") }
        if midi != nil, !plan.quiet { printNote("MIDI control at \(host.configuration.clientName):control") }
        guard let liveView = parts.liveView else { return }
        try liveView.start(
            sources: .init(
                host: host, recorder: recorder, serverName: parts.serverName,
                secondsLeft: { estimate?.secondsLeft }, results: resultSources, loudness: parts.loudness,
                alarms: { alarmWatch?.active.map { $0.description } ?? [] }))
        if !plan.quiet { printNote("live view at \(liveView.url)") }
    }

    /// Says when the server goes and comes back, and marks the wait (the duration clock and
    /// systemd's status read it).
    private func followServer() {
        let quiet = plan.quiet
        let reconnecting = parts.configuration.reconnect
        host.onEvent = { [waitingForServer] event in
            switch event {
            case .serverLost where reconnecting:
                waitingForServer.value.store(true, ordering: .relaxed)
                printNote("the JACK server went away; files are finalised; waiting for it to return (Ctrl-C to stop)")
            case .serverRestored:
                waitingForServer.value.store(false, ordering: .relaxed)
                if !quiet { printNote("reconnected to the JACK server; recording continues in a new segment") }
            case .routeChanged(let channels): if !quiet { printNote("the server now reports \(channels) capture channels") }
            case .sourceLost(let input, let source):
                printNote("\(source) went away from \(input): the input records silence until it returns (waiting for it)")
            case .sourceReturned(let input, let source, let frames):
                printNote("\(source) is back on \(input), reconnected after \(frames) frames of silence")
            default: break
            }
        }
    }

    /// Every duty of this run, in the order they look each tick; `signals` comes first.
    func duties(signals: SignalSource) -> [TakeDuty] {
        var duties: [TakeDuty] = [signals]
        if let keyboard { duties.append(keyboard) }
        if let remote { duties.append(remote) }
        if let browser { duties.append(browser) }
        if let midi { duties.append(midi) }
        if let alarms { duties.append(alarms) }
        if let link { duties.append(SupervisorReport(link: link, host: host, plugins: parts.plugins)) }
        duties.append(PluginWatchdogReport(plugins: parts.plugins, namesPlugin: link == nil))
        if let duration = plan.duration {
            let waiting = waitingForServer
            duties.append(DurationClock(duration: duration, host: host, isWaitingForServer: { waiting.value.load(ordering: .relaxed) }))
        }
        if let diskReport { duties.append(diskReport) }
        if let resultsFile { duties.append(resultsFile) }
        if let recorder = parts.recorder {
            duties.append(TakeNotesReport(recorder: recorder, sampleRate: host.sampleRateOrDefault))
            if CaptureSession.mode(of: plan) == .automatic { duties.append(TakeWatch(recorder: recorder)) }
        }
        duties.append(endWatch)
        if let notifier = parts.notifier { duties.append(SystemdHeartbeat(notifier: notifier)) }
        return duties
    }

    /// Who hears the take's state changes.
    var observers: [TakeObserver] {
        var observers: [TakeObserver] = []
        if let notifier = parts.notifier { observers.append(notifier) }
        if let display { observers.append(display) }
        if let liveView = parts.liveView { observers.append(liveView) }
        if let remote { observers.append(remote) }
        if let browser { observers.append(browser) }
        return observers
    }

    /// Carries out what the controller decided.
    func perform(_ effect: TakeController.Effect) { perform(effect, atFrame: nil) }

    /// Carries out an effect at a JACK frame time (nil: at the current cycle).
    private func perform(_ effect: TakeController.Effect, atFrame frame: UInt32?) {
        switch effect {
        case .atFrame(let frame, let effect): perform(effect, atFrame: frame)
        case .startTake: parts.recorder?.requestTakeStart(atFrame: frame)
        case .stopTake: parts.recorder?.requestTakeStop(atFrame: frame)
        case .rotateFile:
            guard let recorder = parts.recorder, recorder.path != "-" else { return printNote("rotate ignored: no file is being recorded") }
            recorder.requestRotate()
        case .markTake(let label, let origin):
            guard let recorder = parts.recorder, recorder.path != "-" else {
                return printNote("marker from \(origin) ignored: no file is being recorded")
            }
            recorder.requestMarker(label: label, source: origin, atFrame: frame)
        case .reportProgress: printNote(CaptureReport.progress(host: host, recorder: parts.recorder))
        case .refused(let line): printNote(line)
        case .announce(let line): printError(line)
        case .abandonDrain: break  // the closing drain watches the stop signals itself
        }
    }
}

/// A flag shared with callbacks on other threads (the supervisor's event handler, systemd's status).
final class AtomicFlag: Sendable {
    let value = Atomic<Bool>(false)
}
