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
