import CJackHostPlugin
import Glibc
import JackHost
import Synchronization

// ============================================================================
// REAL-TIME CODE. `RealtimePluginConsumer.process` runs inside JACK's process
// callback. It builds the C block on the stack from the host's zero-copy view
// and makes one indirect call into the plugin: no allocation, no lock, no
// system call (the watchdog's clock reads go through the vDSO). Everything it
// reads was stored before activation.
// ============================================================================

/// Builds the C view of a block. **Real-time safe**: stack only, no allocation.
@inline(__always)
private func makeBlock(_ block: AudioBlock, structSize: UInt32) -> jackhost_plugin_block_t {
    // The host's channel pointers go to the plugin as they are: the same memory, reinterpreted
    // from non-optional to optional pointers, which have the same layout.
    let channels = UnsafeRawPointer(block.buffers.channelPointers.baseAddress)?
        .assumingMemoryBound(to: UnsafePointer<Float>?.self)
    let time = block.timestamp
    return jackhost_plugin_block_t(
        struct_size: structSize,
        channel_count: UInt32(truncatingIfNeeded: block.channelCount),
        channels: channels,
        frame_count: UInt32(truncatingIfNeeded: block.frameCount),
        frame_time: time.frameTime,
        microseconds: time.microseconds,
        sequence: time.sequence,
        xrun: time.xrunSincePreviousCycle ? 1 : 0,
        reserved: 0,
        dropped_frames_before: UInt64(truncatingIfNeeded: block.droppedFramesBefore))
}

/// A real-time plugin as a JackHost ``RealtimeAudioConsumer``: its `process` runs in JACK's
/// process callback with pointers straight into the port buffers, under a watchdog.
///
/// The watchdog times every call. A plugin whose `process` takes more than
/// ``PluginWatchdog/budgetShare`` of the block's duration for ``PluginWatchdog/overrunLimit``
/// cycles in a row is bypassed: it is not called again, the host reports it, and the cycle's
/// other consumers (the recorder) get their time back. One slow cycle (a page fault, a cache
/// miss) resets nothing; only a run of them does.
final class RealtimePluginConsumer: RealtimeAudioConsumer {
    let instance: PluginInstance
    /// The plugin's name, for reports and error messages.
    let consumerName: String
    /// What the watchdog saw; read by ordinary threads.
    let watchdog = PluginWatchdog()
    // Copied out of `instance` so `process` reads stored constants only (no lazy statics, no metadata lookups).
    private let processFunction: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_block_t>?) -> Void
    private let handle: UnsafeMutableRawPointer
    private let blockSize = UInt32(MemoryLayout<jackhost_plugin_block_t>.size)
    /// The budget per frame, in nanoseconds, for the current sample rate (set in prepare).
    private var budgetNanosecondsPerFrame = 0.0
    /// Overruns in a row (real-time thread only).
    private var consecutiveOverruns = 0
    /// Set once bypassed (real-time thread only; the atomic is for readers).
    private var bypassed = false
    /// Frames of the stream before the next block (real-time thread only): the frame clock.
    private var framesBefore = 0
    /// The frame clock's storage (nil for a version 1 plugin); `instance` keeps it alive.
    private let frameClock: UnsafeMutablePointer<Atomic<Int>>?
    // Copied out of `instance`, like processFunction: the real-time path reads stored constants,
    // and reaches the mailbox unmanaged (`instance` keeps it alive).
    private let mailbox: Unmanaged<PluginEventMailbox>?
    private let eventFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_event_t>?) -> Void)?

    init(instance: PluginInstance) {
        self.instance = instance
        consumerName = instance.library.name
        processFunction = instance.processFunction
        handle = instance.handle
        frameClock = instance.services?.frameClockStorage
        mailbox = instance.mailbox.map { Unmanaged.passUnretained($0) }
        eventFunction = instance.eventFunction
    }

    /// Host event thread: queues the event for the plugin's next `process` (ABI 2 plugins that take events).
    func handle(_ event: AudioSessionEvent) { instance.mailbox?.post(event) }

    /// Hands the format to the plugin; throws with the plugin's reason if it refuses.
    func prepare(format: StreamFormat) throws {
        try instance.prepare(format: format)
        budgetNanosecondsPerFrame = PluginWatchdog.budgetShare * 1e9 / max(format.sampleRate, 1)
        watchdog.budgetNanosecondsPerFrame.store(budgetNanosecondsPerFrame.bitPattern, ordering: .relaxed)
        warmUp()
    }

    /// **Real-time thread.** One cycle: waiting events first, then the C block on the stack and
    /// one timed call into the plugin.
    func process(_ block: AudioBlock) {
        if bypassed { return }
        framesBefore &+= block.droppedFramesBefore
        frameClock?.pointee.store(framesBefore, ordering: .relaxed)
        var cBlock = makeBlock(block, structSize: blockSize)
        let start = Self.monotonicNanoseconds()
        if let eventFunction {
            // Unmanaged and guaranteed: no retain or release on the real-time path.
            mailbox?._withUnsafeGuaranteedRef { $0.deliver(to: eventFunction, instance: handle) }
        }
        processFunction(handle, &cBlock)
        let elapsed = Self.monotonicNanoseconds() &- start
        framesBefore &+= block.frameCount
        let budget = Int(budgetNanosecondsPerFrame * Double(block.frameCount))
        guard elapsed > budget else {
            consecutiveOverruns = 0
            return
        }
        consecutiveOverruns += 1
        watchdog.note(overrunNanoseconds: elapsed, budget: budget)
        if consecutiveOverruns >= PluginWatchdog.overrunLimit {
            bypassed = true
            watchdog.isBypassed.store(true, ordering: .releasing)
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds: a vDSO read, no system call. **Real-time safe.**
    @inline(__always)
    private static func monotonicNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec &* 1_000_000_000 &+ time.tv_nsec
    }

    /// Calls the plugin's `finish` after the last cycle.
    func finish() { instance.finish() }

    /// Runs the block conversion once outside the real-time thread, so any type metadata it
    /// needs is instantiated here (the first instantiation takes a runtime lock).
    private func warmUp() {
        var samples: Float = 0
        withUnsafePointer(to: &samples) { sample in
            var channel = sample
            withUnsafePointer(to: &channel) { channels in
                let view = AudioBufferListView(channels: channels, channelCount: 1, frameCount: 1)
                let block = AudioBlock(
                    buffers: view,
                    timestamp: AudioTimestamp(
                        frameTime: 0, microseconds: 0, sequence: 0,
                        xrunSincePreviousCycle: false))
                _ = makeBlock(block, structSize: blockSize)
            }
        }
        _ = Self.monotonicNanoseconds()
    }
}

/// What a real-time plugin's watchdog saw, published with atomics so that ordinary threads can
/// report it while the real-time thread keeps writing.
public final class PluginWatchdog: Sendable {
    /// The share of a block's duration a plugin's `process` may take: half, because the
    /// recorder, the meter and JACK itself share the same period.
    public static let budgetShare = 0.5
    /// Overruns in a row that bypass a plugin: a run of them, not one unlucky cycle.
    public static let overrunLimit = 8

    /// Whether the plugin has been bypassed.
    public let isBypassed = Atomic<Bool>(false)
    /// Cycles whose `process` took longer than the budget.
    public let overrunCycles = Atomic<Int>(0)
    /// The longest `process` call that overran, in nanoseconds.
    public let worstNanoseconds = Atomic<Int>(0)
    /// The budget of the last overrun, in nanoseconds.
    public let lastBudgetNanoseconds = Atomic<Int>(0)
    let budgetNanosecondsPerFrame = Atomic<UInt64>(0)

    /// **Real-time safe**: atomics only.
    @inline(__always)
    func note(overrunNanoseconds elapsed: Int, budget: Int) {
        overrunCycles.add(1, ordering: .relaxed)
        lastBudgetNanoseconds.store(budget, ordering: .relaxed)
        if elapsed > worstNanoseconds.load(ordering: .relaxed) { worstNanoseconds.store(elapsed, ordering: .relaxed) }
    }

    /// One line for a bypassed plugin, e.g. "overran its budget (2.7 ms, half of each block)
    /// 8 cycles in a row, up to 100.2 ms; bypassed, the take goes on without it".
    public var bypassDescription: String {
        let budget = Double(lastBudgetNanoseconds.load(ordering: .relaxed)) / 1e6
        let worst = Double(worstNanoseconds.load(ordering: .relaxed)) / 1e6
        return
            "overran its real-time budget (\(budget.formatted(places: 2)) ms, half of each block) \(Self.overrunLimit) cycles in a row, up to \(worst.formatted(places: 1)) ms per cycle; bypassed, the take goes on without it"
    }
}

/// A deferred plugin as a JackHost ``DeferredAudioConsumer``: its `process` runs on the
/// plugin's own worker thread, fed through its own ring.
final class DeferredPluginConsumer: DeferredAudioConsumer {
    let instance: PluginInstance
    /// The plugin's name, for reports and error messages.
    let consumerName: String
    private let blockSize = UInt32(MemoryLayout<jackhost_plugin_block_t>.size)

    init(instance: PluginInstance) {
        self.instance = instance
        consumerName = instance.library.name
    }

    /// Hands the format to the plugin; throws with the plugin's reason if it refuses.
    func prepare(format: StreamFormat) throws { try instance.prepare(format: format) }

    /// Frames of the stream before the next block (worker thread only): the frame clock.
    private var framesBefore = 0

    /// Host event thread: queues the event for the plugin's next `process` (ABI 2 plugins that take events).
    func handle(_ event: AudioSessionEvent) { instance.mailbox?.post(event) }

    /// Worker thread: waiting events first, then the block, with its drop count, to the plugin.
    func consume(_ block: AudioBlock) {
        framesBefore += block.droppedFramesBefore
        instance.services?.setFrameClock(framesBefore)
        instance.deliverEvents()
        var cBlock = makeBlock(block, structSize: blockSize)
        instance.processFunction(instance.handle, &cBlock)
        framesBefore += block.frameCount
    }

    /// Calls the plugin's `finish` after the last block.
    func finish() { instance.finish() }
}
