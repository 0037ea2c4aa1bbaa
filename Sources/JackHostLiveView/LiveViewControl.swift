// LiveViewControl.swift
//
// `--http-control`: the live view's record, stop, rotate and marker buttons, and the small POST
// API behind them (`/api/start`, `/api/stop`, `/api/rotate`, `/api/marker`). This is only the
// mailbox between two kinds of thread. An HTTP connection's thread puts a request in and waits,
// at most `replyTimeout`, for its outcome; the take's main loop takes the requests on its next
// tick, hands them to the take controller, and answers each with what the controller made of it.
// Nothing here decides, and nothing here reaches the real-time thread.

import Glibc
import JackHostSupport
import Synchronization

/// What a control request asks for.
package enum LiveViewAction: String, Sendable, CaseIterable {
    /// Start a take (`record --signal-trigger`; otherwise refused).
    case start
    /// Stop the take (`record --signal-trigger`; otherwise refused).
    case stop
    /// End the file and go on in the next numbered one.
    case rotate
    /// Drop a marker, with an optional label.
    case marker
}

/// What the take's loop made of a control request.
package enum LiveViewOutcome: Sendable, Equatable {
    /// Carried out (or nothing to do); the take's state after it, as `/jackhost/status` names it.
    case accepted(state: String)
    /// Refused by the take's state; the reason, as the note on stderr says it.
    case refused(String)
}

/// The mailbox between the live view's HTTP threads and the take's main loop.
package final class LiveViewControl: Sendable {
    /// One request, as the main loop sees it.
    package struct Request: Sendable, Equatable {
        /// Matches the request with its answer.
        package let id: Int
        /// What it asks for.
        package let action: LiveViewAction
        /// The marker's label ("" for none and for other actions).
        package let label: String
    }

    /// How a submission ended, for the HTTP answer.
    package enum Submission: Sendable, Equatable {
        /// The loop answered.
        case answered(LiveViewOutcome)
        /// ``queueLimit`` requests were already waiting.
        case busy
        /// The loop did not answer within ``replyTimeout`` (the request was withdrawn if it had
        /// not been taken yet).
        case timedOut
    }

    /// What the control did, for the summary.
    package struct Counts: Sendable, Equatable {
        /// Requests the loop carried out.
        package var accepted = 0
        /// Requests the take's state refused.
        package var refused = 0
        /// Requests without the token, from another origin, or malformed: answered at once, never queued.
        package var rejected = 0
    }

    private struct Mailbox {
        var nextID = 0
        var pending: [Request] = []
        /// Requests taken by the loop and waited for; an answer to any other id is dropped.
        var awaited: Set<Int> = []
        var outcomes: [Int: LiveViewOutcome] = [:]
        var state = "idle"
        var counts = Counts()
    }

    /// The secret every control request carries in a header (the page has it; see ``LiveViewServer``).
    package let token: String
    /// Requests waiting at once; more are answered 503 at once.
    static let queueLimit = 16
    /// Seconds an HTTP thread waits for the loop (which ticks every 20 ms).
    static let replyTimeout = 2.0

    private let mailbox = Mutex(Mailbox())

    /// A mailbox whose requests must carry `token`.
    package init(token: String) { self.token = token }

    // MARK: HTTP threads

    /// Queues a request and waits for the loop's answer.
    func submit(_ action: LiveViewAction, label: String) -> Submission {
        let id: Int? = mailbox.withLock { box in
            guard box.pending.count < Self.queueLimit else { return nil }
            box.nextID += 1
            box.pending.append(Request(id: box.nextID, action: action, label: label))
            box.awaited.insert(box.nextID)
            return box.nextID
        }
        guard let id else { return .busy }
        let deadline = monotonicSeconds() + Self.replyTimeout
        while monotonicSeconds() < deadline {
            if let outcome = mailbox.withLock({ $0.outcomes.removeValue(forKey: id) }) { return .answered(outcome) }
            usleep(2000)
        }
        return mailbox.withLock { box in
            box.awaited.remove(id)
            box.pending.removeAll { $0.id == id }
            return box.outcomes.removeValue(forKey: id).map { .answered($0) } ?? .timedOut
        }
    }

    /// Counts a request answered at once without reaching the loop.
    func countRejected() { mailbox.withLock { $0.counts.rejected += 1 } }

    /// The take's state as the loop last published it.
    var state: String { mailbox.withLock { $0.state } }

    // MARK: The take's main loop

    /// The requests waiting, oldest first; each must be answered with ``answer(_:with:)``.
    package func takeRequests() -> [Request] {
        mailbox.withLock { box in
            defer { box.pending = [] }
            return box.pending
        }
    }

    /// The controller's outcome of request `id`. Dropped when its HTTP thread stopped waiting.
    package func answer(_ id: Int, with outcome: LiveViewOutcome) {
        mailbox.withLock { box in
            if case .refused = outcome { box.counts.refused += 1 } else { box.counts.accepted += 1 }
            guard box.awaited.remove(id) != nil else { return }
            box.outcomes[id] = outcome
        }
    }

    /// Publishes the take's state (idle, armed, recording, stopping, finished) for the page.
    package func publish(state: String) { mailbox.withLock { $0.state = state } }

    /// What the control did so far.
    package var counts: Counts { mailbox.withLock { $0.counts } }

    /// A fresh token for a view without `--http-token`: 128 random bits in hex.
    package static func newToken() -> String { LiveViewPage.newNonce() }
}
