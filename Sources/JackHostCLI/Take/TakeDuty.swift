/// One job a run does while it records, with one method: every tick (20 ms) ``TakeLoop`` calls
/// ``tick(now:)``, and the duty may send commands to the ``TakeController``, such as a quit
/// that ends the take. A new way to end or watch a take is a new duty, not a new branch.
///
/// Main thread only.
protocol TakeDuty: AnyObject {
    /// Does the duty's work for this moment (monotonic seconds) and returns its commands.
    func tick(now: Double) -> [TakeController.Command]
}

/// Whether a periodic job is due: at most once per `interval` seconds, the first time at once
/// (or after one interval, with `startAtOnce: false`).
struct Cadence {
    let interval: Double
    private var next: Double?
    private let startAtOnce: Bool

    init(every interval: Double, startAtOnce: Bool = true) {
        self.interval = interval
        self.startAtOnce = startAtOnce
    }

    /// True when the job should run now; it then counts the next interval from `now`.
    mutating func isDue(_ now: Double) -> Bool {
        guard let next else {
            self.next = now + interval
            return startAtOnce
        }
        guard now >= next else { return false }
        self.next = now + interval
        return true
    }
}
