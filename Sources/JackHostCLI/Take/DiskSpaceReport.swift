import JackHost
import JackHostConsumers
import Synchronization

/// Once a second: how long the disk lasts at this rate, shown by the meter and the live view;
/// a warning below 10 minutes (``DiskSpaceWatch`` decides).
final class DiskSpaceReport: TakeDuty {
    private var watch: DiskSpaceWatch
    private let host: CaptureHost
    private var cadence = Cadence(every: 1)
    /// The latest estimate, for the display's and the live view's threads.
    let estimate = Estimate()
    /// Also told each warning (a session manager hears them). Main thread.
    private let onWarning: ((String) -> Void)?

    /// Seconds of recording left, shared with other threads.
    final class Estimate: Sendable {
        /// Seconds (infinity: unknown), as a Double's bit pattern.
        private let bits = Atomic<UInt64>(Double.infinity.bitPattern)

        /// The latest estimate, nil when unknown; any thread.
        var secondsLeft: Double? {
            let left = Double(bitPattern: bits.load(ordering: .relaxed))
            return left.isFinite ? left : nil
        }

        fileprivate func store(_ seconds: Double) { bits.store(seconds.bitPattern, ordering: .relaxed) }
    }

    init(recorder: Recorder, reserve: Int, host: CaptureHost, onWarning: ((String) -> Void)? = nil) {
        self.onWarning = onWarning
        watch = DiskSpaceWatch(recorder: recorder, reserve: reserve)
        self.host = host
    }

    func tick(now: Double) -> [TakeController.Command] {
        guard let format = host.format, cadence.isDue(now) else { return [] }
        if let warning = watch.check(format: format) {
            printError("warning: \(warning)")
            onWarning?(warning)
        }
        estimate.store(watch.lastSecondsLeft)
        return []
    }
}
