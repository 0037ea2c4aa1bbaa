/// An alarm raised or cleared by ``AlarmWatch``: dead air or clipping on one watched source.
public struct AlarmEvent: Sendable, Equatable {
    /// What the alarm is about.
    public enum Kind: String, Sendable {
        /// The level stayed below `--silence` for `--after` (dead air).
        case deadAir = "dead-air"
        /// True peak went over -1 dBTP `--clip` times within a minute.
        case clip
    }

    /// Dead air or clipping.
    public var kind: Kind
    /// True when raised, false when cleared.
    public var raised: Bool
    /// The watched source: `in_2`, or a programme's `1-2`.
    public var source: String
    /// Frames captured since the watch started, at the end of the window that decided it.
    public var position: Int
    /// The JACK frame time of that moment.
    public var frameTime: UInt32
    /// What happened, in words: "below -50.0 dBFS for 30.0 s".
    public var detail: String

    /// An event as ``AlarmWatch`` posts it.
    public init(kind: Kind, raised: Bool, source: String, position: Int, frameTime: UInt32, detail: String) {
        self.kind = kind
        self.raised = raised
        self.source = source
        self.position = position
        self.frameTime = frameTime
        self.detail = detail
    }

    /// `raised` or `cleared`, as hooks and the summary say it.
    public var state: String { raised ? "raised" : "cleared" }

    /// `dead air on 1-2 (below -50.0 dBFS for 30.0 s)`.
    public var description: String {
        "\(kind == .deadAir ? "dead air" : "clipping") on \(source) (\(detail))"
    }
}
