/// Under systemd (`Type=notify`): the watchdog keep-alive and the status line, as often as
/// ``SystemdNotifier`` wants them.
final class SystemdHeartbeat: TakeDuty {
    private let notifier: SystemdNotifier

    init(notifier: SystemdNotifier) { self.notifier = notifier }

    func tick(now: Double) -> [TakeController.Command] {
        notifier.tick(now: now)
        return []
    }
}
