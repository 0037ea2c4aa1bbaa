import Glibc
import Synchronization

/// The names of a take's channel files (`--channel-files`), decided once, before the first
/// file, and used for every segment of the take.
///
/// The recorder's writer thread asks for them when its first segment opens
/// (``names(waitingUpTo:)``); the thread that starts the capture decides them once the inputs
/// are wired, checks them, and either ``settle(_:)``s or ``refuse()``s the plan. A refused plan
/// (a name that would overwrite a file) creates no file at all.
public final class ChannelFilePlan: Sendable {
    /// What the writer thread gets.
    public enum Answer: Sendable, Equatable {
        /// Use these names, one per input, in order.
        case names([String])
        /// Create no channel files: the names were refused before the run.
        case refused
        /// Nothing was decided in time.
        case undecided
    }

    private let state = Mutex<Answer>(.undecided)
    /// The names the user gave (`--channel-names`), checked before the run and used as they are.
    public let given: [String]?

    /// A plan to be decided once the inputs are wired, from `given` names if any.
    public init(given: [String]? = nil) {
        self.given = given
    }

    /// The names, if decided.
    public var decided: [String]? {
        state.withLock { answer in
            if case .names(let names) = answer { return names }
            return nil
        }
    }

    /// Decides the names (once; later calls change nothing).
    public func settle(_ names: [String]) {
        state.withLock { if $0 == .undecided { $0 = .names(names) } }
    }

    /// Decides that no channel file may be created.
    public func refuse() {
        state.withLock { if $0 == .undecided { $0 = .refused } }
    }

    /// Waits (polling every millisecond, on the writer thread) until the plan is decided or
    /// `seconds` pass.
    public func names(waitingUpTo seconds: Double) -> Answer {
        var waited = 0.0
        while true {
            let answer = state.withLock { $0 }
            if answer != .undecided || waited >= seconds { return answer }
            usleep(1000)
            waited += 0.001
        }
    }
}
