import JackHost

/// `--duration` in wall-clock time: if cycles arrive late (an overrunning plugin in this
/// process), the take still ends on time, and the frames it never got are counted. Time spent
/// waiting for a lost server to return does not count.
final class DurationClock: TakeDuty {
    /// How long past `--duration` (in connected wall-clock time) a take may run before it is
    /// ended by the clock: room for startup and a few late cycles, not for a stalled one.
    static let grace = 2.0

    private let duration: Double
    private let host: CaptureHost
    private let isWaitingForServer: () -> Bool
    private var connectedSeconds = 0.0
    private var lastTick: Double?

    init(duration: Double, host: CaptureHost, isWaitingForServer: @escaping () -> Bool) {
        self.duration = duration
        self.host = host
        self.isWaitingForServer = isWaitingForServer
    }

    func tick(now: Double) -> [TakeController.Command] {
        if let lastTick, !isWaitingForServer() { connectedSeconds += now - lastTick }
        lastTick = now
        guard connectedSeconds > duration + Self.grace, !host.isComplete else { return [] }
        let short = max(0, Int((duration * host.sampleRateOrDefault).rounded()) - host.statistics.capturedFrames)
        let message =
            "the take ended by the clock: --duration \(duration.formatted(places: 3)) s passed, but cycles arrived late and \(short) frames never did (counted as skipped)"
        return [.quit(.init(.clock, status: .failure, message: message))]
    }
}
