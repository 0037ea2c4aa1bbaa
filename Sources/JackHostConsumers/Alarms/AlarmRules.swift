import Glibc

/// When ``AlarmWatch`` raises and clears its alarms (`--silence`, `--after`, `--clear-after`,
/// `--clip`). Levels are judged over 100 ms windows of audio, so alarms fall within a tenth of a
/// second of the durations asked for, in real time or in freewheel alike.
public struct AlarmRules: Sendable, Equatable {
    /// Dead air: every channel of a source below `level` (sample peak) for `after` seconds;
    /// cleared once any channel stays at or above it for `clearAfter` seconds.
    public struct Silence: Sendable, Equatable {
        /// The level below which a channel is silent, in dBFS (sample peak).
        public var levelDBFS: Double
        /// Seconds of silence before dead air is raised.
        public var after: Double
        /// Seconds of sound before it is cleared.
        public var clearAfter: Double

        /// A silence rule; durations in seconds.
        public init(levelDBFS: Double, after: Double, clearAfter: Double) {
            self.levelDBFS = levelDBFS
            self.after = after
            self.clearAfter = clearAfter
        }
    }

    /// Dead air, when watched.
    public var silence: Silence?
    /// Clipping: raised when `clipCount` windows in the last minute had a true peak over
    /// ``clipCeilingDBTP``; cleared after a minute without any.
    public var clipCount: Int?

    /// EBU R128's maximum true peak.
    public static let clipCeilingDBTP = -1.0
    /// The window alarms judge levels over, in seconds.
    public static let windowSeconds = 0.1
    /// How far back `clipCount` looks, in seconds.
    public static let clipWindowSeconds = 60.0

    /// Rules for dead air, clipping or both.
    public init(silence: Silence? = nil, clipCount: Int? = nil) {
        self.silence = silence
        self.clipCount = clipCount
    }
}

/// Dead air on one source, window by window (a pure state machine; the watch feeds it).
struct SilenceTracker {
    let threshold: Float
    let raiseWindows: Int
    let clearWindows: Int
    private(set) var raised = false
    private var quiet = 0
    private var loud = 0

    init(_ rule: AlarmRules.Silence) {
        threshold = Float(pow10(rule.levelDBFS / 20))
        raiseWindows = max(1, Int((rule.after / AlarmRules.windowSeconds).rounded()))
        clearWindows = max(1, Int((rule.clearAfter / AlarmRules.windowSeconds).rounded()))
    }

    /// Takes one window's sample peak; returns true (raised) or false (cleared) on a change.
    mutating func window(peak: Float) -> Bool? {
        if peak < threshold {
            quiet += 1
            loud = 0
            if !raised && quiet >= raiseWindows {
                raised = true
                return true
            }
        } else {
            loud += 1
            quiet = 0
            if raised && loud >= clearWindows {
                raised = false
                return false
            }
        }
        return nil
    }
}

/// Clipping on one source: which of the last minute's windows went over the ceiling.
struct ClipTracker {
    let count: Int
    private(set) var raised = false
    private var overs: [Bool]
    private var next = 0
    private(set) var inLastMinute = 0

    init(count: Int) {
        self.count = count
        overs = Array(repeating: false, count: Int((AlarmRules.clipWindowSeconds / AlarmRules.windowSeconds).rounded()))
    }

    /// Takes whether this window's true peak was over the ceiling; true or false on a change.
    mutating func window(over: Bool) -> Bool? {
        if overs[next] { inLastMinute -= 1 }
        overs[next] = over
        if over { inLastMinute += 1 }
        next = (next + 1) % overs.count
        if !raised && inLastMinute >= count {
            raised = true
            return true
        }
        if raised && inLastMinute == 0 {
            raised = false
            return false
        }
        return nil
    }
}

private func pow10(_ exponent: Double) -> Double { pow(10, exponent) }
