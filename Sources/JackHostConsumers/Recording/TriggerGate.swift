import Glibc
import Synchronization

/// Where a triggered recorder's takes start and stop inside each block, frame-exact for levels,
/// at the cycle for transport and freewheel, for requests that carry a JACK frame time (MIDI
/// events) at that frame, and for other requests at the cycle that was being captured when the
/// request came (each request is stamped with JACK's microsecond clock), so a
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
    /// The level a take stays below, for the hold, to stop (the threshold without `--release`).
    private let release: Float
    private let holdFrames: Int
    /// Frames a level take must last before it is opened (`--min-take`); 0 opens at once.
    private let minimumFrames: Int
    /// Frames after which a level take stops (`--max-take`).
    private let maximumFrames: Int?
    /// Consecutive frames below the release level (while recording, or while a candidate take waits).
    private var quietFrames = 0
    /// Frames since a candidate take's first loud frame, while it waits for `minimumFrames`.
    private var candidateFrames: Int?
    /// Frames the open take has lasted (level trigger).
    private var takeFrames = 0
    private let startRequests = Atomic<Int>(0)
    private let stopRequests = Atomic<Int>(0)
    /// JACK's microsecond clock at the latest request of each kind (0: unknown, act at once).
    private let startStamp = Atomic<UInt64>(0)
    private let stopStamp = Atomic<UInt64>(0)
    /// The latest request's own frame time plus one, when it has one (a MIDI event's); 0 for none.
    private let startFrame = Atomic<UInt64>(0)
    private let stopFrame = Atomic<UInt64>(0)
    /// The order in which requests were asked for: each takes the next ticket, so a start and a
    /// stop asked for in the same microsecond (two MIDI events of one block) keep their order.
    private let tickets = Atomic<UInt64>(0)
    private let startTicket = Atomic<UInt64>(0)
    private let stopTicket = Atomic<UInt64>(0)
    private var seenStarts = 0
    private var seenStops = 0
    /// A start or stop asked for and not yet reached (worker thread).
    private var pendingStart: RequestTime?
    private var pendingStop: RequestTime?
    /// Frame-timed requests that came after the writer had passed their frame, and by how many
    /// frames the latest was late (worker thread; the recorder reports them).
    private(set) var lateRequests = 0
    private(set) var lastLateness = 0
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

    init(trigger: TakeTrigger, sampleRate: Double, shape: LevelShape = LevelShape()) {
        self.trigger = trigger
        if case .level(let decibels, let hold) = trigger {
            threshold = Float(Self.amplitude(dBFS: decibels))
            release = Float(Self.amplitude(dBFS: min(shape.releaseDBFS ?? decibels, decibels)))
            holdFrames = max(1, Int((hold * sampleRate).rounded()))
            minimumFrames = Int((shape.minTakeSeconds * sampleRate).rounded())
            maximumFrames = shape.maxTakeSeconds.map { max(1, Int(($0 * sampleRate).rounded())) }
        } else {
            threshold = 0
            release = 0
            holdFrames = 0
            minimumFrames = 0
            maximumFrames = nil
        }
        seenStarts = startRequests.load(ordering: .relaxed)
        seenStops = stopRequests.load(ordering: .relaxed)
    }

    /// When a request acts: at the cycle captured at `stamp` (JACK's microsecond clock), or at
    /// its own frame when it carries one.
    struct RequestTime: Equatable {
        var stamp: UInt64
        var frame: UInt32?
        /// Its place among all requests to this gate, in the order they were asked for.
        var ticket: UInt64
    }

    /// Where a block sits in time: its first frame's offset from the caller's, its cycle's start
    /// and end on JACK's microsecond clock (0: no cycle time, every request reached) and its
    /// frame time.
    struct BlockTime {
        var cycleStart: UInt64 = 0
        var cycleEnd: UInt64 = 0
        var frameTime: UInt32 = 0
    }

    /// The offset in the block (at or after `offset`) where a request acts, or nil when the block
    /// does not reach it. A request with a frame acts at that frame, or at `offset` when the
    /// writer has already passed it (counted in ``lateRequests``); one without acts at the start
    /// of the cycle being captured when it came.
    private func offset(of request: RequestTime, from offset: Int, frames: Int, time: BlockTime) -> Int? {
        guard time.cycleStart != 0, request.stamp != 0 else { return offset }
        guard let frame = request.frame else { return request.stamp < time.cycleEnd ? offset : nil }
        let distance = Int(Int32(bitPattern: frame &- time.frameTime))
        guard distance < frames else { return nil }
        if distance < offset {
            lateRequests += 1
            lastLateness = offset - distance
            return offset
        }
        return distance
    }

    /// A request's change in this block, at or after `offset`, else nil.
    private func requestChange(from offset: Int, frames: Int, time: BlockTime) -> Int? {
        let starts = startRequests.load(ordering: .acquiring)
        let stops = stopRequests.load(ordering: .acquiring)
        if starts != seenStarts { pendingStart = Self.load(startStamp, startFrame, startTicket) }
        if stops != seenStops { pendingStop = Self.load(stopStamp, stopFrame, stopTicket) }
        seenStarts = starts
        seenStops = stops
        if !recording {
            // A stop asked for before the pending start (or with no take to stop) means nothing.
            if let stop = pendingStop, pendingStart.map({ stop.ticket < $0.ticket }) ?? true { pendingStop = nil }
            guard let start = pendingStart, let change = self.offset(of: start, from: offset, frames: frames, time: time)
            else { return nil }
            pendingStart = nil
            return change
        }
        pendingStart = nil
        guard let stop = pendingStop, let change = self.offset(of: stop, from: offset, frames: frames, time: time)
        else { return nil }
        pendingStop = nil
        return change
    }

    private static func load(
        _ stamp: borrowing Atomic<UInt64>, _ frame: borrowing Atomic<UInt64>, _ ticket: borrowing Atomic<UInt64>
    ) -> RequestTime {
        let frame = frame.load(ordering: .relaxed)
        return RequestTime(
            stamp: stamp.load(ordering: .relaxed), frame: frame == 0 ? nil : UInt32(truncatingIfNeeded: frame - 1),
            ticket: ticket.load(ordering: .relaxed))
    }

    /// An explicit start or stop (``requestStart(at:)``, ``requestStop(at:)``) over an automatic
    /// trigger: it changes the take at the cycle it was stamped with, and holds it so.
    private func explicitChange(frames: Int, time: BlockTime) -> Int? {
        let wasRecording = recording
        let starts = startRequests.load(ordering: .acquiring)
        if wasRecording && starts != seenStarts {
            // A start while a take runs: nothing to open, but the trigger may no longer close it.
            seenStarts = starts
            hold = .open
        }
        guard let change = requestChange(from: 0, frames: frames, time: time) else { return nil }
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
    /// the next block), or at JACK frame time `frame` when given.
    func requestStart(at stamp: UInt64, frame: UInt32? = nil) {
        startStamp.store(stamp, ordering: .relaxed)
        startFrame.store(frame.map { UInt64($0) + 1 } ?? 0, ordering: .relaxed)
        startTicket.store(tickets.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        startRequests.add(1, ordering: .releasing)
    }

    /// Asks for the take to stop at the cycle captured at `stamp` (0 for the next block), or at
    /// JACK frame time `frame` when given.
    func requestStop(at stamp: UInt64, frame: UInt32? = nil) {
        stopStamp.store(stamp, ordering: .relaxed)
        stopFrame.store(frame.map { UInt64($0) + 1 } ?? 0, ordering: .relaxed)
        stopTicket.store(tickets.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        stopRequests.add(1, ordering: .releasing)
    }

    /// Marks the take as open or closed (the recorder calls it when it acts on a change).
    func setRecording(_ value: Bool) {
        recording = value
        quietFrames = 0
        // A take opened after a minimum wait has lasted that long already.
        takeFrames = value ? candidateFrames ?? 0 : 0
        candidateFrames = nil
    }

    /// The first offset at or after `offset` in a block where the take should change state
    /// (start when idle, stop when recording), or nil when it stays as it is to the block's end.
    ///
    /// - Parameters:
    ///   - peak: The largest magnitude over all channels of the frame at an offset (levels only).
    ///   - time: The block's cycle and frame time (requests act by them).
    func nextChange(
        from offset: Int, frames: Int, transportRolling: Bool, freewheeling: Bool, time: BlockTime = BlockTime(),
        peak: (Int) -> Float
    ) -> Int? {
        guard offset < frames else { return nil }
        if trigger != .request {
            if offset == 0, let change = explicitChange(frames: frames, time: time) { return change }
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
            return requestChange(from: offset, frames: frames, time: time)
        case .level:
            return recording ? levelStop(from: offset, frames: frames, peak: peak) : levelStart(from: offset, frames: frames, peak: peak)
        }
    }

    /// Where an idle level trigger opens a take: at the first loud frame, or, with a minimum
    /// take, once its sound (first loud frame to the latest at or above the release level) has
    /// lasted that long without falling quiet for the hold.
    private func levelStart(from offset: Int, frames: Int, peak: (Int) -> Float) -> Int? {
        for frame in offset..<frames {
            let level = peak(frame)
            guard let age = candidateFrames else {
                guard level >= threshold else { continue }
                if minimumFrames <= 1 { return minimumFrames == 0 ? frame : frame + 1 }
                candidateFrames = 1
                quietFrames = 0
                continue
            }
            candidateFrames = age + 1
            if level >= release {
                quietFrames = 0
                if age + 1 >= minimumFrames { return frame + 1 }
            } else {
                quietFrames += 1
                if quietFrames >= holdFrames {
                    // Sound shorter than the minimum take (a cough): no take.
                    candidateFrames = nil
                    quietFrames = 0
                }
            }
        }
        return nil
    }

    /// Where an open level take stops: after the hold below the release level, or at the maximum take.
    private func levelStop(from offset: Int, frames: Int, peak: (Int) -> Float) -> Int? {
        for frame in offset..<frames {
            takeFrames += 1
            if peak(frame) >= release {
                quietFrames = 0
            } else {
                quietFrames += 1
                // The stop falls after the last quiet frame of the hold; it may be the block's end.
                if quietFrames >= holdFrames { return frame + 1 }
            }
            if let maximumFrames, takeFrames >= maximumFrames { return frame + 1 }
        }
        return nil
    }
}
