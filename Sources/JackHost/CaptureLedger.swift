/// What the host knows and other threads may ask: the live session's view, the counters of
/// sessions already closed, connection failures and the start-up wiring.
///
/// The supervisor's thread writes it; the host's API reads it from any thread. Everything
/// is guarded by one lock, held only to copy values in or out.
final class CaptureLedger: @unchecked Sendable {
    // @unchecked: every stored property below is read and written only inside `lock`.
    private let lock = Lock()
    private var current: LiveSessionView?
    private var last: LiveSessionView?
    private var retired: CaptureStatistics
    private var failures: [JackError] = []
    /// Sources that came back to an input, and the frames their inputs went without them.
    private var sourceReturns = 0
    private var sourceAbsentFrames = 0
    private var startWiring = InputWiring()
    /// The frame limit in frames, once the first session told the sample rate.
    private var frameLimit: Int?

    init(consumerNames: [String]) {
        retired = CaptureStatistics(consumerNames: consumerNames)
    }

    /// Publishes a newly opened session.
    func publish(_ view: LiveSessionView) {
        lock.withLock {
            current = view
            last = view
        }
    }

    /// Folds a closed session's counters into the totals and forgets it as current.
    func retire(_ statistics: CaptureStatistics) {
        lock.withLock {
            retired = retired.adding(statistics)
            current = nil
        }
    }

    /// The live session's view, or nil between sessions.
    var currentView: LiveSessionView? { lock.withLock { current } }
    /// The last session's view, kept after it closed.
    var lastView: LiveSessionView? { lock.withLock { current ?? last } }

    func record(_ errors: [JackError]) {
        guard !errors.isEmpty else { return }
        lock.withLock { failures.append(contentsOf: errors) }
    }

    var connectionFailures: [JackError] { lock.withLock { failures } }

    /// Counts a source's return, and turns the change into the event consumers are told.
    func record(_ change: ConnectionKeeper.SourceChange) -> AudioSessionEvent {
        switch change {
        case .lost(let source, let input):
            return .sourceLost(input: input, source: source)
        case .returned(let source, let input, let frames):
            lock.withLock {
                sourceReturns += 1
                sourceAbsentFrames += frames
            }
            return .sourceReturned(input: input, source: source, absentFrames: frames)
        }
    }

    var wiring: InputWiring {
        get { lock.withLock { startWiring } }
        set { lock.withLock { startWiring = newValue } }
    }

    /// Counters since start: every closed session plus the live one.
    var statistics: CaptureStatistics {
        lock.withLock {
            var total = current.map { retired.adding($0.statistics()) } ?? retired
            total.connectionFailures = failures.count
            total.sourceReturns = sourceReturns
            total.sourceAbsentFrames = sourceAbsentFrames
            return total
        }
    }

    /// Frames still to deliver under a limit (`Int.max` without one). `resolve` turns the
    /// configuration's limit into frames the first time a session knows the sample rate.
    func remainingFrames(resolve: () -> Int?) -> Int {
        lock.withLock {
            if frameLimit == nil { frameLimit = resolve() }
            guard let limit = frameLimit else { return .max }
            let captured = retired.capturedFrames + (current?.engine.capturedFrames.load(ordering: .relaxed) ?? 0)
            return max(0, limit - captured)
        }
    }

    /// Frames still to deliver, as far as closed sessions go (the live one is not counted).
    func remainingFramesAfterRetired() -> Int? {
        lock.withLock { frameLimit.map { max(0, $0 - retired.capturedFrames) } }
    }
}
