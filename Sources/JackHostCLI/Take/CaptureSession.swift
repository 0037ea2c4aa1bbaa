import CSignals
import Glibc
import JackHost
import JackHostPlugins

/// Runs a ``CapturePlan``: assembles the parts, starts the host, hands the take to the loop
/// and the ``TakeController``, and reports how it ended. Each step is a type of its own
/// (docs/ARCHITECTURE.md, "The application layer").
final class CaptureSession {
    let plan: CapturePlan
    /// What runs beside the take, when something does (a session manager's client).
    let companion: CaptureCompanion?

    init(plan: CapturePlan, companion: CaptureCompanion? = nil) {
        self.plan = plan
        self.companion = companion
    }

    func run() throws -> ExitStatus {
        csignals_install_stop_handlers()
        setenv("JACK_NO_START_SERVER", "1", 1)
        // Under systemd (Type=notify): read and unset NOTIFY_SOCKET before any thread or child starts.
        let notifier = SystemdNotifier.fromEnvironment()
        let link = plan.supervisorDescriptor.map(SupervisorLink.init)
        routePluginMessages(isChild: link != nil)
        // Plugins, the results file, the live view and a private server come first, before JACK.
        let parts = try TakeParts(plan: plan, notifier: notifier)
        defer { parts.tearDown() }
        if let status = try parts.addConsumers() { return status }
        if let status = parts.startIsolatedPlugins() { return status }

        var controller = TakeController(mode: Self.mode(of: plan))
        let signals = SignalSource(quiet: plan.quiet)
        let early = signals.tick(now: monotonicSeconds())
        if early.contains(where: { if case .quit = $0 { true } else { false } }) {
            printNote("stopped by \(SignalSource.lastStopSignalName) before the take started; nothing was recorded")
            return .success
        }
        let take = try RunningTake(parts: parts, link: link, diskWarnings: companion.map { companion in { companion.diskWarning($0) } })
        try take.startObservers()
        companion?.started(take)
        let loop = TakeLoop(
            duties: take.duties(signals: signals) + (companion.map { [$0] } ?? []),
            observers: take.observers + (companion.map { [$0] } ?? []), perform: take.perform)
        for command in early + [.connected] { loop.send(command, to: &controller) }
        let reason = loop.run(&controller)
        take.keyboard?.restore()
        companion?.finalising()
        let ending = TakeEnding.finish(take, reason: reason)
        loop.send(.finished, to: &controller)
        let status = TakeSummary(take: take, ending: ending).report()
        companion?.finalised(status)
        return status
    }

    /// Who starts and stops takes: the user's requests, the recorder's own trigger, or nobody.
    static func mode(of plan: CapturePlan) -> TakeController.Mode {
        guard plan.recordName != nil, let trigger = plan.takeOptions.trigger else { return .continuous }
        return trigger == .request ? .onRequest : .automatic
    }

    /// A plugin's log lines (ABI 2) are jackhost's lines, naming the plugin (the child of an
    /// isolated plugin already names it in every line, with its prefix).
    private func routePluginMessages(isChild: Bool) {
        if isChild, let path = plan.plugins.first?.path {
            messagePrefix.withLock { $0 = "jackhost: plugin \(IsolatedPlugin.displayName(path: path)): " }
        }
        LoadedPlugin.setLogHandler { plugin, level, message in
            printError(isChild ? "\(level.prefix)\(message)" : "plugin \(plugin): \(level.prefix)\(message)")
        }
    }
}

/// What runs beside a take and hears its milestones: a session manager's client
/// (``NSMSessionClient``). It ticks with the duties and hears every change of state.
protocol CaptureCompanion: TakeDuty, TakeObserver {
    /// The host has started and the take's observers run: the run is ready.
    func started(_ take: RunningTake)
    /// The disk runs short: `warning` is the line stderr got too.
    func diskWarning(_ warning: String)
    /// The run could not start; `line` says why (the caller prints it).
    func failedToStart(_ line: String)
    /// The loop has ended and the take is being finalised.
    func finalising()
    /// The take is final and the summary printed; `status` is the run's exit status.
    func finalised(_ status: ExitStatus)
}
