import Glibc
import Synchronization

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

/// Where a triggered recorder's takes start and stop inside each block, frame-exact for levels,
/// at the cycle for transport and freewheel, and at the next block for requests.
///
/// Worker thread only, except ``requestStart()`` and ``requestStop()``, which any thread may call.
final class TriggerGate: @unchecked Sendable {
    // @unchecked: `recording`, `quietFrames` and `seenRequests` are touched only by the worker thread; requests are atomics.
    let trigger: TakeTrigger
    /// Whether a take is open.
    private(set) var recording = false
    private let threshold: Float
    private let holdFrames: Int
    /// Consecutive frames below the threshold while recording.
    private var quietFrames = 0
    private let startRequests = Atomic<Int>(0)
    private let stopRequests = Atomic<Int>(0)
    private var seenStarts = 0
    private var seenStops = 0

    init(trigger: TakeTrigger, sampleRate: Double) {
        self.trigger = trigger
        if case .level(let decibels, let hold) = trigger {
            threshold = Float(Self.amplitude(dBFS: decibels))
            holdFrames = max(1, Int((hold * sampleRate).rounded()))
        } else {
            threshold = 0
            holdFrames = 0
        }
        seenStarts = startRequests.load(ordering: .relaxed)
        seenStops = stopRequests.load(ordering: .relaxed)
    }

    /// 10^(dBFS/20): -40 dBFS is 0.01 of full scale.
    static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    func requestStart() { startRequests.add(1, ordering: .relaxed) }
    func requestStop() { stopRequests.add(1, ordering: .relaxed) }

    /// Marks the take as open or closed (the recorder calls it when it acts on a change).
    func setRecording(_ value: Bool) {
        recording = value
        quietFrames = 0
    }

    /// The first offset at or after `offset` in a block where the take should change state
    /// (start when idle, stop when recording), or nil when it stays as it is to the block's end.
    ///
    /// - Parameters:
    ///   - peak: The largest magnitude over all channels of the frame at an offset (levels only).
    func nextChange(
        from offset: Int, frames: Int, transportRolling: Bool, freewheeling: Bool, peak: (Int) -> Float
    ) -> Int? {
        guard offset < frames else { return nil }
        switch trigger {
        case .transport:
            return transportRolling != recording && offset == 0 ? 0 : nil
        case .freewheel:
            return freewheeling != recording && offset == 0 ? 0 : nil
        case .request:
            guard offset == 0 else { return nil }
            let starts = startRequests.load(ordering: .relaxed)
            let stops = stopRequests.load(ordering: .relaxed)
            let newStart = starts != seenStarts
            let newStop = stops != seenStops
            seenStarts = starts
            seenStops = stops
            if !recording && newStart { return 0 }
            if recording && newStop && !newStart { return 0 }
            return nil
        case .level:
            if !recording {
                for frame in offset..<frames where peak(frame) >= threshold { return frame }
                return nil
            }
            for frame in offset..<frames {
                if peak(frame) >= threshold {
                    quietFrames = 0
                } else {
                    quietFrames += 1
                    // The stop falls after the last quiet frame of the hold; it may be the block's end.
                    if quietFrames >= holdFrames { return frame + 1 }
                }
            }
            return nil
        }
    }
}
