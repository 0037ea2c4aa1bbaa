/// The last few seconds of a recording's input, kept while no take is open, so that a triggered
/// take starts in the past: its first frames are the ones from before its trigger, bit-exact.
///
/// A fixed circular buffer of encoded frames, allocated once; appending past its capacity
/// forgets the oldest frames. Worker thread only.
final class PreRollBuffer {
    /// The most frames it keeps.
    let capacityFrames: Int
    /// Bytes per frame (all channels, encoded).
    let bytesPerFrame: Int
    /// Frames held now.
    private(set) var frameCount = 0
    /// Drop counts and xrun flags are not kept per frame: a take that starts from the buffer
    /// reports what happened in the pre-roll through these.
    private(set) var droppedFrames = 0
    private(set) var xruns = 0
    private let storage: UnsafeMutableRawPointer
    /// The index (in frames) of the oldest frame.
    private var start = 0

    /// Allocates room for `capacityFrames` frames of `bytesPerFrame` bytes.
    init(capacityFrames: Int, bytesPerFrame: Int) {
        self.capacityFrames = max(0, capacityFrames)
        self.bytesPerFrame = bytesPerFrame
        storage = .allocate(byteCount: max(1, self.capacityFrames * bytesPerFrame), alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Appends `frames` frames, forgetting the oldest beyond the capacity.
    func append(_ bytes: UnsafeRawPointer, frames: Int) {
        guard capacityFrames > 0, frames > 0 else { return }
        // Only the newest `capacityFrames` of the input can survive.
        let kept = min(frames, capacityFrames)
        var source = bytes + (frames - kept) * bytesPerFrame
        let overflow = frameCount + kept - capacityFrames
        if overflow > 0 {
            start = (start + overflow) % capacityFrames
            frameCount -= overflow
        }
        var remaining = kept
        while remaining > 0 {
            let end = (start + frameCount) % capacityFrames
            let run = min(remaining, capacityFrames - end)
            (storage + end * bytesPerFrame).copyMemory(from: source, byteCount: run * bytesPerFrame)
            frameCount += run
            remaining -= run
            source += run * bytesPerFrame
        }
    }

    /// Counts losses that happened while these frames were kept (for the take's report).
    func noteLosses(droppedFrames dropped: Int, xrun: Bool) {
        droppedFrames += dropped
        if xrun { xruns += 1 }
    }

    /// Hands the buffered frames, oldest first, in at most two runs, then empties the buffer.
    func drain(_ body: (UnsafeRawPointer, Int) -> Void) {
        var remaining = frameCount
        var index = start
        while remaining > 0 {
            let run = min(remaining, capacityFrames - index)
            body(UnsafeRawPointer(storage + index * bytesPerFrame), run)
            remaining -= run
            index = (index + run) % capacityFrames
        }
        clear()
    }

    /// Forgets everything.
    func clear() {
        frameCount = 0
        start = 0
        droppedFrames = 0
        xruns = 0
    }
}
