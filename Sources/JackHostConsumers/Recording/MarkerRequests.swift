import JackHostSupport
import Synchronization

/// The markers asked for and not yet placed: any thread adds one, stamped with the cycle clock,
/// and the recorder's worker takes those whose stamp its next block's cycle has reached, so a
/// marker lands at the cycle being captured when it was asked for, however far behind the
/// writer runs. Never touched by the real-time thread.
final class MarkerRequests: Sendable {
    /// One request: what to call the marker, who asked, and when (the cycle clock, in µs).
    struct Request: Equatable {
        var label: String
        var source: String
        var stamp: UInt64
    }

    /// Requests in the order they were stamped (the stamp is taken under the lock).
    private let queue = Mutex<[Request]>([])

    /// Adds a request stamped now.
    func add(label: String, source: String) {
        queue.withLock { $0.append(Request(label: label, source: source, stamp: CycleClock.microseconds)) }
    }

    /// Takes the requests that the cycle starting at `cycleStart` and lasting until `cycleEnd`
    /// (µs on the cycle clock) has reached: every request when the block has no cycle time.
    func take(reachedBy cycleStart: UInt64, cycleEnd: UInt64) -> [Request] {
        queue.withLock { requests in
            guard !requests.isEmpty else { return [] }
            let count = requests.prefix { Self.reached($0.stamp, cycleStart: cycleStart, cycleEnd: cycleEnd) }.count
            defer { requests.removeFirst(count) }
            return Array(requests.prefix(count))
        }
    }

    /// Whether a request stamped `stamp` acts at the cycle from `cycleStart` to `cycleEnd`: it was
    /// made before that cycle ended, or one of them carries no time (a test's or a file's block).
    static func reached(_ stamp: UInt64, cycleStart: UInt64, cycleEnd: UInt64) -> Bool {
        cycleStart == 0 || stamp == 0 || stamp < cycleEnd
    }
}
