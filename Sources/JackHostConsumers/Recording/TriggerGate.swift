import Glibc
import Synchronization

/// Where a triggered recorder's takes start and stop inside each block, frame-exact for levels,
/// at the cycle for transport and freewheel, and for requests at the cycle that was being
/// captured when the request came (each request is stamped with JACK's microsecond clock), so a
/// writer running seconds behind real time (a stalled disk, a busy machine) still starts and
/// stops the take where it was asked for.
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
    /// JACK's microsecond clock at the latest request of each kind (0: unknown, act at once).
    private let startStamp = Atomic<UInt64>(0)
    private let stopStamp = Atomic<UInt64>(0)
    private var seenStarts = 0
    private var seenStops = 0
    /// A start or stop asked for and not yet reached, with its stamp (worker thread).
    private var pendingStart: UInt64?
    private var pendingStop: UInt64?
    /// An explicit command's hold over an automatic trigger (level, transport, freewheel): the
    /// last explicit command wins until the next take (worker thread).
    private var hold = Hold.none

    /// What an explicit start or stop did to an automatic trigger.
    private enum Hold {
        /// The trigger decides.
        case none
        /// An explicit start opened (or kept) the take: the trigger may not close it.
        case open
        /// An explicit stop closed the take: the trigger may not open another until it has
        /// released (level: quiet for the hold; transport: stopped; freewheel: off).
        case closed
    }
    private let sampleRate: Double

    init(trigger: TakeTrigger, sampleRate: Double) {
        self.trigger = trigger
        self.sampleRate = sampleRate
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

    /// A request's change at this block: 0 once the block's cycle reaches the pending request's
    /// stamp (a block without a cycle time reaches every stamp), else nil.
    private func requestChange(frames: Int, cycleStart: UInt64) -> Int? {
        let starts = startRequests.load(ordering: .acquiring)
        let stops = stopRequests.load(ordering: .acquiring)
        if starts != seenStarts { pendingStart = startStamp.load(ordering: .relaxed) }
        if stops != seenStops { pendingStop = stopStamp.load(ordering: .relaxed) }
        seenStarts = starts
        seenStops = stops
        let cycleEnd = cycleStart + UInt64((Double(frames) / max(sampleRate, 1) * 1e6).rounded(.up))
        func reached(_ stamp: UInt64) -> Bool { cycleStart == 0 || stamp == 0 || stamp < cycleEnd }
        if !recording {
            // A stop asked for before the pending start (or with no take to stop) means nothing.
            if let stop = pendingStop, pendingStart.map({ stop <= $0 }) ?? true { pendingStop = nil }
            guard let start = pendingStart, reached(start) else { return nil }
            pendingStart = nil
            return 0
        }
        pendingStart = nil
        guard let stop = pendingStop, reached(stop) else { return nil }
        pendingStop = nil
        return 0
    }

    /// An explicit start or stop (``requestStart(at:)``, ``requestStop(at:)``) over an automatic
    /// trigger: it changes the take at the cycle it was stamped with, and holds it so.
    private func explicitChange(frames: Int, cycleStart: UInt64) -> Int? {
        let wasRecording = recording
        let starts = startRequests.load(ordering: .acquiring)
        if wasRecording && starts != seenStarts {
            // A start while a take runs: nothing to open, but the trigger may no longer close it.
            seenStarts = starts
            hold = .open
        }
        guard let change = requestChange(frames: frames, cycleStart: cycleStart) else { return nil }
        hold = wasRecording ? .closed : .open
        return change
    }

    /// Whether an automatic trigger has let go since an explicit stop held it closed.
    private func released(from offset: Int, frames: Int, transportRolling: Bool, freewheeling: Bool, peak: (Int) -> Float) -> Bool {
        switch trigger {
        case .transport: return !transportRolling
        case .freewheel: return !freewheeling
        case .request: return true
        case .level:
            for frame in offset..<frames {
                if peak(frame) >= threshold {
                    quietFrames = 0
                } else {
                    quietFrames += 1
                    if quietFrames >= holdFrames { return true }
                }
            }
            return false
        }
    }

    /// 10^(dBFS/20): -40 dBFS is 0.01 of full scale.
    static func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

    /// Asks for a take to start at the cycle captured at `stamp` (JACK's microsecond clock; 0 for
    /// the next block).
    func requestStart(at stamp: UInt64) {
        startStamp.store(stamp, ordering: .relaxed)
        startRequests.add(1, ordering: .releasing)
    }

    /// Asks for the take to stop at the cycle captured at `stamp` (0 for the next block).
    func requestStop(at stamp: UInt64) {
        stopStamp.store(stamp, ordering: .relaxed)
        stopRequests.add(1, ordering: .releasing)
    }

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
    ///   - cycleStart: JACK's microsecond clock at the block's cycle (0 when unknown).
    func nextChange(
        from offset: Int, frames: Int, transportRolling: Bool, freewheeling: Bool, cycleStart: UInt64 = 0, peak: (Int) -> Float
    ) -> Int? {
        guard offset < frames else { return nil }
        if trigger != .request {
            if offset == 0, let change = explicitChange(frames: frames, cycleStart: cycleStart) { return change }
            switch hold {
            case .open: return nil
            case .closed:
                if released(from: offset, frames: frames, transportRolling: transportRolling, freewheeling: freewheeling, peak: peak) {
                    hold = .none
                }
                return nil
            case .none: break
            }
        }
        switch trigger {
        case .transport:
            return transportRolling != recording && offset == 0 ? 0 : nil
        case .freewheel:
            return freewheeling != recording && offset == 0 ? 0 : nil
        case .request:
            guard offset == 0 else { return nil }
            return requestChange(frames: frames, cycleStart: cycleStart)
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
