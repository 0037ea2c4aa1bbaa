/// Counters a host keeps; every lost frame and xrun shows up here.
///
/// A value type with one fold, ``adding(_:)``: the host sums the sessions it has retired
/// (one per server connection) and the live one with it, so no counter is folded twice or
/// in two places.
public struct CaptureStatistics: Sendable, Equatable {
    /// Per deferred consumer: what reached it, what its full ring dropped, and what was
    /// given up at the end.
    public struct Consumer: Sendable, Equatable {
        /// The consumer's name (not necessarily unique: two instances of a plugin share one).
        public var name: String
        /// The consumer's position among the deferred consumers, in the order they were added;
        /// counters are kept by it.
        public var index: Int
        /// Frames delivered to `consume`.
        public var deliveredFrames: Int
        /// Frames lost because the consumer's ring was full.
        public var droppedFrames: Int
        /// Frames still queued when a drain passed its limit, given up instead of delivered.
        public var abandonedFrames: Int
        /// Whether the consumer was still inside `consume` when its drain was given up; it was
        /// not finished and gets nothing more.
        public var isUnresponsive: Bool
        /// The most frames that waited in the consumer's elastic buffer at once (0 without one).
        public var peakBufferedFrames = 0
        /// Frames waiting in the elastic buffer now (0 once stopped, or without one).
        public var bufferedFrames = 0

        /// Creates a consumer's counters.
        public init(
            name: String, index: Int, deliveredFrames: Int = 0, droppedFrames: Int = 0,
            abandonedFrames: Int = 0, isUnresponsive: Bool = false
        ) {
            self.name = name
            self.index = index
            self.deliveredFrames = deliveredFrames
            self.droppedFrames = droppedFrames
            self.abandonedFrames = abandonedFrames
            self.isUnresponsive = isUnresponsive
        }

        /// Frames this consumer never saw: dropped while running plus abandoned at the end.
        public var lostFrames: Int { droppedFrames + abandonedFrames }
    }

    /// Process cycles run.
    public var cycles = 0
    /// Frames captured by the process callback.
    public var capturedFrames = 0
    /// Xruns the server reported.
    public var xruns = 0
    /// Jumps in frame time between cycles: the server skipped this client, reported or not.
    public var timelineGaps = 0
    /// Frames in those jumps: audio that never reached jackhost.
    public var timelineGapFrames = 0
    /// Connections that failed.
    public var connectionFailures = 0
    /// Sources that went away from an input while running and came back (a client that quit
    /// and returned, an AES67 stream that stopped and was announced again), each reconnected.
    public var sourceReturns = 0
    /// Frames those inputs went without their source: silence in the take where the source's
    /// audio would have been, counted between the host's looks at the graph (20 ms apart).
    public var sourceAbsentFrames = 0
    /// Deferred consumers' counters, in the order they were added.
    public var consumers: [Consumer] = []

    /// Creates empty counters.
    public init() {}

    /// Empty counters for deferred consumers with these names, in order.
    init(consumerNames: [String]) {
        consumers = consumerNames.enumerated().map { Consumer(name: $0.element, index: $0.offset) }
    }

    /// The one fold: these counters plus `other`'s, consumers matched by ``Consumer/index``.
    public func adding(_ other: CaptureStatistics) -> CaptureStatistics {
        var sum = self
        sum.cycles += other.cycles
        sum.capturedFrames += other.capturedFrames
        sum.xruns += other.xruns
        sum.timelineGaps += other.timelineGaps
        sum.timelineGapFrames += other.timelineGapFrames
        sum.connectionFailures += other.connectionFailures
        sum.sourceReturns += other.sourceReturns
        sum.sourceAbsentFrames += other.sourceAbsentFrames
        for part in other.consumers {
            guard let slot = sum.consumers.firstIndex(where: { $0.index == part.index }) else {
                sum.consumers.append(part)
                continue
            }
            sum.consumers[slot].deliveredFrames += part.deliveredFrames
            sum.consumers[slot].droppedFrames += part.droppedFrames
            sum.consumers[slot].abandonedFrames += part.abandonedFrames
            sum.consumers[slot].isUnresponsive = sum.consumers[slot].isUnresponsive || part.isUnresponsive
            sum.consumers[slot].peakBufferedFrames = max(sum.consumers[slot].peakBufferedFrames, part.peakBufferedFrames)
            sum.consumers[slot].bufferedFrames += part.bufferedFrames
        }
        sum.consumers.sort { $0.index < $1.index }
        return sum
    }

    /// The consumer that lost the most frames, for a one-line summary; every consumer's own
    /// counts stay in ``consumers``.
    public var mostFramesLostByOneConsumer: Int { consumers.map(\.lostFrames).max() ?? 0 }
}
