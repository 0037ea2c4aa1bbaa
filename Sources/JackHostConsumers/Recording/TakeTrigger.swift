/// What starts and stops a triggered take (`--transport`, `--freewheel`, `--trigger`,
/// `--signal-trigger`). Each start opens a new file; each stop finalises it.
public enum TakeTrigger: Sendable, Equatable {
    /// A take runs while JACK transport rolls.
    case transport
    /// A take runs while the server freewheels (an offline render).
    case freewheel
    /// A take starts at the first frame where any input reaches `thresholdDBFS`, and stops once
    /// every input has stayed below it for `holdSeconds`.
    case level(thresholdDBFS: Double, holdSeconds: Double)
    /// A take starts and stops when asked (``Recorder/requestTakeStart()``; SIGUSR1 and SIGUSR2
    /// on the command line).
    case request

    /// The level thresholds accepted, in dBFS.
    public static let thresholdRange = -120.0...0.0
    /// The hold times accepted, in seconds.
    public static let holdRange = 0.0...3600.0
}

/// How a level trigger (``TakeTrigger/level(thresholdDBFS:holdSeconds:)``) shapes its takes
/// beyond its start level and hold, as timemachine and radio loggers do (`--release`,
/// `--min-take`, `--max-take`).
public struct LevelShape: Sendable, Equatable {
    /// The level a take must stay below, for the hold, to stop; nil stops below the start level
    /// (no hysteresis). At or below the start level.
    public var releaseDBFS: Double?
    /// A take is opened only once its sound has lasted this long (from its first loud frame to
    /// one at or above the release level): a burst that falls quiet for the hold sooner (a cough)
    /// leaves no file. The recorder keeps this much audio besides the pre-roll, so a take that
    /// is opened still starts at its first loud frame (less the pre-roll).
    public var minTakeSeconds: Double
    /// A take stops after this long even while loud; if the level is still up, the next take
    /// starts with the next frame, so nothing is lost between them.
    public var maxTakeSeconds: Double?

    /// A shape; the defaults change nothing.
    public init(releaseDBFS: Double? = nil, minTakeSeconds: Double = 0, maxTakeSeconds: Double? = nil) {
        self.releaseDBFS = releaseDBFS
        self.minTakeSeconds = minTakeSeconds
        self.maxTakeSeconds = maxTakeSeconds
    }
}
