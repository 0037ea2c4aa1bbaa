import Synchronization

/// One MIDI event from a host's control input (`CLIENT:control`, see
/// ``CaptureHost/Configuration/controlInput``), as the process callback copied it.
public struct MIDIControlEvent: Sendable, Equatable, BitwiseCopyable {
    /// The JACK frame time of the event: its cycle's first frame plus its offset in the cycle.
    public var frameTime: UInt32
    /// Its offset in its cycle, in frames.
    public var offset: UInt32
    /// The event's bytes (at most ``MIDIControlQueue/longestEvent``).
    public var bytes: [UInt8] {
        (0..<Int(count)).map { index in UInt8(truncatingIfNeeded: (index < 8 ? low : high) >> (8 * UInt64(index % 8))) }
    }
    private var count: UInt8
    /// Bytes 0-7 and 8-15, little-endian. Two integers, not a tuple: a debug build instantiates a
    /// tuple's metadata on first use, under a lock (RealtimeSanitizer caught it in the callback).
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// An event of `count` bytes at `bytes`, at most 16 (more are cut; the queue never stores
    /// such an event). **Real-time safe.**
    public init(frameTime: UInt32, offset: UInt32, bytes: UnsafePointer<UInt8>, count: Int) {
        self.frameTime = frameTime
        self.offset = offset
        let kept = min(count, MIDIControlQueue.longestEvent)
        self.count = UInt8(kept)
        var index = 0
        while index < kept {
            let byte = UInt64(bytes[index]) << (8 * UInt64(index % 8))
            if index < 8 { low |= byte } else { high |= byte }
            index += 1
        }
    }

    /// Events are equal when their times and bytes are.
    public static func == (a: MIDIControlEvent, b: MIDIControlEvent) -> Bool {
        a.frameTime == b.frameTime && a.offset == b.offset && a.count == b.count && a.low == b.low && a.high == b.high
    }
}

/// The lock-free queue from the process callback to whoever reads the control input's events.
///
/// The real-time side only copies: every event of at most ``longestEvent`` bytes (MMC commands
/// are 6, notes and controllers 3) goes into a preallocated single-producer/single-consumer ring,
/// with its frame time. It decides nothing; the reader (the command line's MIDI source, on its
/// main thread) parses the events and turns them into commands. An event that does not fit
/// (the ring full, or longer) is counted, never waited for.
public final class MIDIControlQueue: @unchecked Sendable {
    // @unchecked: the writer end is used only by the process thread of the one live session, the
    // reader end only by the one thread that calls `drain`; the counters are atomic.

    /// The longest event kept, in bytes.
    public static let longestEvent = 16
    /// Events the ring holds (a few seconds of a busy controller at 64-frame periods).
    public static let capacity = 256

    private let writer: SPSCRing<MIDIControlEvent>.Writer
    private let reader: SPSCRing<MIDIControlEvent>.Reader
    /// Events lost to a full ring.
    public let droppedEvents = Atomic<Int>(0)
    /// Events longer than ``longestEvent`` (a sysex dump, say), not kept.
    public let oversizedEvents = Atomic<Int>(0)

    /// An empty queue.
    public init() {
        let ends = SPSCRing<MIDIControlEvent>.makeRing(capacity: Self.capacity)
        writer = ends.writer
        reader = ends.reader
        // Off the real-time thread, once: whatever a debug build instantiates on first use.
        var probe: UInt8 = 0xF0
        _ = MIDIControlEvent(frameTime: 0, offset: 0, bytes: &probe, count: 1)
    }

    /// **Real-time safe.** Copies one event in, or counts it.
    @inline(__always)
    func push(frameTime: UInt32, offset: UInt32, bytes: UnsafePointer<UInt8>, count: Int) {
        guard count <= Self.longestEvent else {
            oversizedEvents.add(1, ordering: .relaxed)
            return
        }
        if !writer.push(MIDIControlEvent(frameTime: frameTime, offset: offset, bytes: bytes, count: count)) {
            droppedEvents.add(1, ordering: .relaxed)
        }
    }

    /// Takes every event waiting, oldest first. One reading thread only.
    public func drain() -> [MIDIControlEvent] {
        var events: [MIDIControlEvent] = []
        while let event = reader.pop() { events.append(event) }
        return events
    }
}
