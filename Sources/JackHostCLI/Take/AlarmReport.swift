import JackHostConsumers

/// Each tick, the alarms ``AlarmWatch`` raised or cleared since the last: one line on stderr
/// each, a marker in the open take, and `--on-alarm` through the hook runner (no shell). The
/// live state reaches systemd's `STATUS=` through ``AlarmWatch/active``. Main thread only.
final class AlarmReport: TakeDuty {
    private let watch: AlarmWatch
    private let recorder: Recorder?
    private let hooks: HookRunner?
    /// Alarms raised and cleared so far, by kind.
    private(set) var raised: [AlarmEvent.Kind: Int] = [:]
    private(set) var cleared: [AlarmEvent.Kind: Int] = [:]

    init(watch: AlarmWatch, recorder: Recorder?, hooks: HookRunner?) {
        self.watch = watch
        self.recorder = recorder
        self.hooks = hooks
    }

    func tick(now: Double) -> [TakeController.Command] {
        for event in watch.takeEvents() { report(event) }
        return []
    }

    private func report(_ event: AlarmEvent) {
        printError(event.raised ? "ALARM: \(event.description)" : "alarm cleared: \(event.description)")
        if event.raised { raised[event.kind, default: 0] += 1 } else { cleared[event.kind, default: 0] += 1 }
        // A continuous recording's file is open from the first block; a triggered one's between takes is not.
        let take = recorder.flatMap { $0.trigger == nil || $0.isTakeOpen ? $0.files.last : nil }
        if take != nil {
            recorder?.requestMarker(label: "\(event.kind.rawValue) \(event.state) \(event.source)", source: "alarm")
        }
        hooks?.handle(alarm: event, take: take, frame: take == nil ? 0 : recorder?.framesWritten ?? 0)
    }

    /// `alarms: dead air raised 1, cleared 1; clipping raised 0, cleared 0` for the summary.
    var summary: String {
        let kinds: [(AlarmEvent.Kind, String)] = [(.deadAir, "dead air"), (.clip, "clipping")]
        let parts = kinds.filter { watch.rules.silence != nil || $0.0 == .clip }.filter { $0.0 == .deadAir || watch.rules.clipCount != nil }
            .map { "\($0.1) raised \(raised[$0.0] ?? 0), cleared \(cleared[$0.0] ?? 0)" }
        let still = watch.active.map(\.description)
        return "alarms: \(parts.joined(separator: "; "))\(still.isEmpty ? "" : "; still raised at the end: " + still.joined(separator: ", "))\n"
    }
}
