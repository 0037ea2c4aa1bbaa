import JackHostLiveView

/// The live view's buttons as a source of take commands (`--http-control`): each tick takes the
/// requests the HTTP threads queued in the ``LiveViewControl`` and hands them to the controller;
/// after each one the loop tells it what the controller made of it, and that becomes the HTTP
/// answer (accepted with the new state, or refused with the reason). It also publishes every
/// change of the take's state for the page. Main thread only.
final class BrowserSource: TakeDuty, TakeObserver, TakeCommandAnswering {
    let control: LiveViewControl
    private let quiet: Bool
    /// The requests of this tick's commands, oldest first, each answered in turn.
    private var inFlight: [LiveViewControl.Request] = []

    init(control: LiveViewControl, quiet: Bool) {
        self.control = control
        self.quiet = quiet
    }

    func tick(now: Double) -> [TakeController.Command] {
        inFlight = control.takeRequests()
        return inFlight.map { request in
            let origin = "browser /api/\(request.action.rawValue)"
            if !quiet { printNote(origin + (request.label.isEmpty ? "" : " \"\(request.label)\"")) }
            return Self.command(for: request, origin: origin)
        }
    }

    /// The controller's command for a request.
    static func command(for request: LiveViewControl.Request, origin: String) -> TakeController.Command {
        switch request.action {
        case .start: .start(origin: origin)
        case .stop: .stop(origin: origin)
        case .rotate: .rotate(origin: origin)
        case .marker: .marker(label: request.label, origin: origin)
        }
    }

    func answer(_ command: TakeController.Command, effects: [TakeController.Effect], state: TakeController.State) {
        guard !inFlight.isEmpty else { return }
        let request = inFlight.removeFirst()
        control.answer(request.id, with: Self.outcome(of: request.action, effects: effects, state: state))
    }

    /// Refused when the controller said so, or when a start can only report progress (the take
    /// is not `record --signal-trigger`); otherwise accepted, with the state after it.
    static func outcome(of action: LiveViewAction, effects: [TakeController.Effect], state: TakeController.State) -> LiveViewOutcome {
        for effect in effects {
            if case .refused(let line) = effect { return .refused(line) }
            if case .reportProgress = effect, action == .start {
                return .refused("browser /api/start ignored: it starts a take only with record --signal-trigger")
            }
        }
        return .accepted(state: OSCSource.name(of: state))
    }

    func takeStateChanged(to state: TakeController.State) {
        control.publish(state: OSCSource.name(of: state))
    }

    /// The summary's line: `browser: N request(s) accepted, M refused, K rejected (…)`.
    var summary: String {
        let counts = control.counts
        return "browser: \(counts.accepted) request(s) accepted, \(counts.refused) refused by the take's state, "
            + "\(counts.rejected) rejected (no token, another origin, a bad label)\n"
    }
}
