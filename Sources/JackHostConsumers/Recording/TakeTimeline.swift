import Glibc
import JackHostTypes

/// Places a recording's frames in wall-clock time, the way a DAW reads a BWF time reference.
///
/// The anchor is the first block of a continuous stream: its JACK cycle time
/// (``AudioTimestamp/microseconds``, on JACK's clock) is turned into wall-clock time by
/// measuring, once, how far JACK's clock is from the system's real-time clock. From there on,
/// time is counted in samples: a frame's position is its JACK frame time, unwrapped to 64 bits,
/// so a split segment continues the time reference exactly, and a gap in the server's frame
/// time (cycles this client missed) moves later audio to where it really belongs.
///
/// The time reference always counts from local midnight (the BWF convention). Aligned splits
/// count from midnight in the timeline's ``TakeTimeZone``: local midnight of the anchor's day
/// (as before `--utc` existed; a run that crosses a daylight-saving change keeps counting from
/// that midnight, so its boundaries stay whole multiples of real time since then), or, in UTC,
/// from UTC midnight, where a multiple of any duration that divides a day falls on the same
/// wall-clock times every day.
///
/// Worker thread only.
struct TakeTimeline {
    /// The stream's sample rate.
    let sampleRate: Double
    /// Local midnight before the anchor, in seconds since the epoch.
    let midnight: time_t
    /// Samples from the midnight aligned splits count from to ``midnight``: 0 for local time,
    /// and for UTC, the local offset of that midnight from the UTC midnight before it.
    let alignmentOffset: Int64
    /// Samples since `midnight` at the anchor (the BWF time reference of the anchor frame).
    let anchorTimeReference: Int64
    /// The anchor's position (its unwrapped JACK frame time).
    let anchorPosition: Int64
    /// The anchor block's JACK frame time and microsecond clock, as the server reported them.
    let anchorFrameTime: UInt32
    /// The anchor block's cycle start on JACK's microsecond clock.
    let anchorMicroseconds: UInt64
    private var lastFrameTime: UInt32
    private var lastPosition: Int64

    /// Anchors the timeline at a block that starts at `timestamp`.
    ///
    /// - Parameters:
    ///   - realtimeNow: The system's wall-clock now, in seconds since the epoch.
    ///   - jackNow: JACK's microsecond clock read at the same moment.
    ///   - timeZone: Where aligned splits count from (local or UTC midnight).
    init(anchor timestamp: AudioTimestamp, sampleRate: Double, realtimeNow: Double, jackNow: UInt64, timeZone: TakeTimeZone = .local) {
        self.sampleRate = sampleRate
        // The cycle started (jackNow - microseconds) ago; a missing cycle time (0) means now.
        let age = timestamp.microseconds == 0 || timestamp.microseconds > jackNow ? 0 : Double(jackNow - timestamp.microseconds) / 1e6
        let wall = realtimeNow - age
        midnight = TakeTimeZone.local.midnight(before: time_t(wall.rounded(.down)))
        let origin = timeZone.midnight(before: midnight)
        alignmentOffset = Int64(midnight - origin) * Int64(sampleRate.rounded())
        anchorTimeReference = Int64(((wall - Double(midnight)) * sampleRate).rounded())
        anchorPosition = Int64(timestamp.frameTime)
        anchorFrameTime = timestamp.frameTime
        anchorMicroseconds = timestamp.microseconds
        lastFrameTime = timestamp.frameTime
        lastPosition = anchorPosition
    }

    /// The system's wall-clock now, in seconds since the epoch.
    static func realtimeNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The position of a block that starts at `frameTime`, unwrapping JACK's 32-bit frame counter.
    /// Blocks must arrive in order; a position before `earliest` (where the previous block and
    /// the frames dropped since end) is taken as `earliest`, so audio never overlaps itself.
    mutating func position(ofFrameTime frameTime: UInt32, earliest: Int64) -> Int64 {
        let step = Int64(Int32(bitPattern: frameTime &- lastFrameTime))
        lastFrameTime = frameTime
        lastPosition = max(lastPosition + step, earliest)
        return lastPosition
    }

    /// Samples since the anchor day's local midnight at `position`; it passes a day's worth of
    /// samples after midnight, and ``bextTimeReference(at:)`` folds it back.
    func timeReference(at position: Int64) -> Int64 {
        anchorTimeReference + (position - anchorPosition)
    }

    /// The BWF time reference at `position`: samples since the local midnight of that day.
    func bextTimeReference(at position: Int64) -> UInt64 {
        let day = Int64((86_400 * sampleRate).rounded())
        let reference = timeReference(at: position)
        return UInt64(((reference % day) + day) % day)
    }

    /// The wall-clock time of `position`, in seconds since the epoch, counted in samples from
    /// the anchor (so it agrees with the time reference).
    func wallClock(at position: Int64) -> Double {
        Double(midnight) + Double(timeReference(at: position)) / sampleRate
    }

    /// The JACK frame time of `position` (wrapping at 2^32, as JACK's does).
    func frameTime(at position: Int64) -> UInt32 {
        anchorFrameTime &+ UInt32(truncatingIfNeeded: position - anchorPosition)
    }

    /// The first position at or after `position` that is a whole multiple of `splitFrames` from
    /// the alignment's midnight (a wall-clock boundary such as 15:00:00 for hourly files, local
    /// or UTC).
    func nextBoundary(atOrAfter position: Int64, splitFrames: Int64) -> Int64 {
        let reference = timeReference(at: position) + alignmentOffset
        let remainder = ((reference % splitFrames) + splitFrames) % splitFrames
        return remainder == 0 ? position : position + (splitFrames - remainder)
    }
}
