import JackHostSupport
import Synchronization

/// The markers asked for and not yet placed: any thread adds one, stamped with the cycle clock,
/// and the recorder's worker takes those whose stamp its next block's cycle has reached, so a
/// marker lands at the cycle being captured when it was asked for, however far behind the
/// writer runs. Never touched by the real-time thread.
final class MarkerRequests: Sendable {
    /// One request: what to call the marker, who asked, and when (the cycle clock, in µs, and
    /// the JACK frame time when the request carries its own, as a MIDI event does).
    struct Request: Equatable {
        var label: String
        var source: String
        var stamp: UInt64
        var frame: UInt32? = nil

        /// Where in a block that starts at `frameTime` the marker goes: at its own frame, or at
        /// the block's start (a request without a frame, or one whose frame has passed).
        func offset(inBlockAt frameTime: UInt32, frames: Int) -> Int {
            guard let frame else { return 0 }
            return min(max(Int(Int32(bitPattern: frame &- frameTime)), 0), max(frames - 1, 0))
        }
    }

    /// Requests in the order they were stamped (the stamp is taken under the lock).
    private let queue = Mutex<[Request]>([])

    /// Adds a request stamped now, at its own JACK frame time `frame` when given.
    func add(label: String, source: String, frame: UInt32? = nil) {
        queue.withLock { $0.append(Request(label: label, source: source, stamp: CycleClock.microseconds, frame: frame)) }
    }

    /// Takes the requests that the cycle starting at `cycleStart` and lasting until `cycleEnd`
    /// (µs on the cycle clock) has reached: every request when the block has no cycle time. A
    /// request with its own frame is reached by the block (at frame time `block`, `frames` long)
    /// that holds that frame, or by any later one.
    func take(reachedBy cycleStart: UInt64, cycleEnd: UInt64, block: UInt32 = 0, frames: Int = 0) -> [Request] {
        queue.withLock { requests in
            guard !requests.isEmpty else { return [] }
            let count = requests.prefix { request in
                guard let frame = request.frame, cycleStart != 0 else {
                    return Self.reached(request.stamp, cycleStart: cycleStart, cycleEnd: cycleEnd)
                }
                return Int(Int32(bitPattern: frame &- block)) < frames
            }.count
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
