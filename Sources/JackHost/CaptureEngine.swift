import CJack
import Synchronization

// ============================================================================
// REAL-TIME CODE. Everything in `runCycle` and the C callbacks below runs on
// JACK's process thread (or, for xrun/freewheel under PipeWire, may). It does
// no allocation, no locking, no system call and no printing. All memory it
// touches is allocated before activation. Builds linked with RealtimeSanitizer
// check this on every cycle (docs/REALTIME.md).
// ============================================================================

/// The state the process callback works on, preallocated before activation.
final class CaptureEngine: @unchecked Sendable {
    // @unchecked: the process-thread fields (`sequence`, `xrunsReported`, `expectedFrameTime`, `deliveredFrames`) are touched only by JACK's process thread; everything shared is atomic; buffers are allocated before activation and freed after close.
    // Field order is the real-time thread's: a Swift class lays its stored properties out in
    // declaration order, and every cycle reads or writes all of those from `clientHandle` to
    // `readsTransport`. Kept together they take three cache lines; the flags other threads write
    // (connection and port changes, server loss, buffer size, rate) come after them, so those
    // writes never evict a line the callback needs. At small widths the callback's cost is
    // mostly these lines coming back from memory (bench case 2c).

    /// The client's handle, for `jack_get_cycle_times` on the real-time thread without touching
    /// the client object (the client owns this engine and outlives every callback).
    private let clientHandle: OpaquePointer
    let channelCount: Int
    /// The host's input ports, one per channel, followed in the same allocation by
    /// `channelPointers`: one region for the callback's per-channel reads and writes.
    private let ports: UnsafeMutablePointer<OpaquePointer>
    /// This cycle's channel buffers; rewritten every cycle.
    private let channelPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    /// The real-time consumers, unowned: reading a strong reference out of memory retains it,
    /// once per consumer per cycle. The host's ``ConsumerRegistry`` keeps them alive.
    private let realtimeConsumers: UnsafeMutableBufferPointer<RealtimeSlot>
    /// The deferred runners, unretained for the same reason; ``LiveSessionView`` keeps them alive.
    private let deferredRunners: UnsafeMutableBufferPointer<Unmanaged<DeferredConsumerRunner>>
    /// Times each cycle when set (benchmarks, `--callback-time`).
    /// Unretained: the host's ``CaptureHost/callbackTimer`` keeps it alive, and reading a
    /// strong (or even an unowned) optional reference retains it every cycle.
    private let timer: Unmanaged<CallbackTimer>?
    /// Frames to deliver before stopping delivery (`Int.max`: no limit).
    private let frameLimit: Int
    /// Frames delivered to consumers so far (process thread only).
    private var deliveredFrames = 0
    /// Cycle sequence number (process thread only).
    private var sequence: UInt64 = 0
    /// The xrun total the process thread last reported (process thread only).
    private var xrunsReported = 0
    /// The frame time the next cycle should start at (process thread only). A session
    /// rebuilt on the same server (a route change) starts with the previous one's, so the
    /// frames between the two sessions are counted as a gap instead of vanishing.
    private var expectedFrameTime: UInt32?
    /// `expectedFrameTime` published for the supervisor: the value plus one, 0 for none.
    private let publishedExpectedFrameTime = Atomic<UInt64>(0)
    /// Cycles completed. The counters below are written by the process thread only (``Atomic/addFromSoleWriter(_:)``).
    let cycles = Atomic<Int>(0)
    /// Frames captured and delivered (every cycle's frame count, up to the frame limit).
    let capturedFrames = Atomic<Int>(0)
    /// Frames the server skipped for this client (jumps in frame time between cycles).
    let timelineGapFrames = Atomic<Int>(0)
    /// How many such jumps there were.
    let timelineGaps = Atomic<Int>(0)
    /// Xruns reported by the server, excluding those around freewheel transitions.
    let xruns = Atomic<Int>(0)
    /// Whether the server is freewheeling.
    let freewheeling = Atomic<Bool>(false)
    /// Set once `frameLimit` frames were delivered.
    let limitReached = Atomic<Bool>(false)
    /// Set just before deactivation: jack2 disconnects the ports first and may still run a
    /// cycle with silent inputs, which must not reach consumers as if it were audio.
    let deliveryStopped = Atomic<Bool>(false)
    /// Whether each cycle asks JACK if transport rolls (``CaptureHost/Configuration/readsTransport``).
    private let readsTransport: Bool
    /// The control input's port and queue (``CaptureHost/Configuration/controlInput``), or nil.
    /// The queue unretained: the host keeps it alive.
    private let controlPort: OpaquePointer?
    private let controlQueue: Unmanaged<MIDIControlQueue>?
    /// Cycles to ignore xruns for after a freewheel transition (see `handleFreewheel`).
    private let xrunGraceCycles = Atomic<Int>(0)

    // Written by other threads (JACK's notification thread), read by the monitor thread.

    /// Set by the port-connect callback; the monitor thread re-reads connections.
    let connectionsChanged = Atomic<Bool>(false)
    /// Set by the port-registration callback; the monitor thread checks the capture ports.
    let portsChanged = Atomic<Bool>(false)
    /// Ports unregistered anywhere in the graph, counted by the port-registration callback: a
    /// source that goes away and returns between two looks of the monitor leaves only this trace.
    let portUnregistrations = Atomic<Int>(0)
    /// Set by the shutdown callback when the server goes away.
    let serverLost = Atomic<Bool>(false)
    /// The server's buffer size in frames, updated by the buffer-size callback.
    let bufferSize: Atomic<Int>
    /// The server's sample rate, updated by the sample-rate callback.
    let sampleRate: Atomic<Int>
    /// Strong references that keep the runners alive as long as the engine.
    private let runnerOwners: [DeferredConsumerRunner]

    init(
        client: JackClient, ports: [JackPort], realtime: [any RealtimeAudioConsumer],
        deferred: [DeferredConsumerRunner], frameLimit: Int, expectedFrameTime: UInt32? = nil, timer: CallbackTimer? = nil,
        readsTransport: Bool = true, control: (port: JackPort, queue: MIDIControlQueue)? = nil
    ) {
        clientHandle = client.handle
        self.readsTransport = readsTransport
        controlPort = control?.port.handle
        controlQueue = control.map { Unmanaged.passUnretained($0.queue) }
        self.expectedFrameTime = expectedFrameTime
        self.timer = timer.map { Unmanaged.passUnretained($0) }
        self.frameLimit = frameLimit
        channelCount = ports.count
        // One allocation for everything the callback reads per channel and per consumer: the
        // port handles, this cycle's buffer pointers, the real-time slots, the deferred runners.
        // At 2 channels that is one cache line instead of four allocations' worth.
        let slots = max(1, ports.count)
        let pointerBytes = slots * MemoryLayout<OpaquePointer>.stride
        let slotOffset = 2 * pointerBytes
        let runnerOffset = slotOffset + realtime.count * MemoryLayout<RealtimeSlot>.stride
        let region = UnsafeMutableRawPointer.allocate(
            byteCount: runnerOffset + deferred.count * MemoryLayout<Unmanaged<DeferredConsumerRunner>>.stride,
            alignment: 64)
        self.ports = region.bindMemory(to: OpaquePointer.self, capacity: slots)
        for (index, port) in ports.enumerated() { (self.ports + index).initialize(to: port.handle) }
        channelPointers = (region + pointerBytes).bindMemory(to: UnsafePointer<Float>.self, capacity: slots)
        realtimeConsumers = UnsafeMutableBufferPointer(
            start: (region + slotOffset).bindMemory(to: RealtimeSlot.self, capacity: realtime.count),
            count: realtime.count)
        _ = realtimeConsumers.initialize(from: realtime.map { RealtimeSlot(consumer: $0) })
        deferredRunners = UnsafeMutableBufferPointer(
            start: (region + runnerOffset).bindMemory(to: Unmanaged<DeferredConsumerRunner>.self, capacity: deferred.count),
            count: deferred.count)
        _ = deferredRunners.initialize(from: deferred.map { Unmanaged.passUnretained($0) })
        runnerOwners = deferred
        bufferSize = Atomic(client.bufferSize)
        sampleRate = Atomic(client.sampleRate)
    }

    deinit {
        _ = realtimeConsumers.deinitialize()
        _ = deferredRunners.deinitialize()
        UnsafeMutableRawPointer(ports).deallocate()  // the one region (see init)
    }

    /// **Real-time.** One process cycle: build the buffer view, call the real-time
    /// consumers, then copy into every deferred consumer's ring.
    @inline(__always)
    func runCycle(frames: UInt32) {
        let began = timer == nil ? 0 : MonotonicClock.nanoseconds
        defer { timer?._withUnsafeGuaranteedRef { $0.record(nanoseconds: MonotonicClock.nanoseconds &- began) } }
        for channel in 0..<channelCount {
            channelPointers[channel] = UnsafePointer(JackClient.buffer(of: ports[channel], frames: frames))
        }
        let times = JackClient.cycleTimes(of: clientHandle)
        if let controlPort, let controlQueue { Self.copyControlEvents(from: controlPort, frames: frames, start: times.frames, into: controlQueue) }
        // A jump in frame time means the server's clock moved on without running this client
        // for those frames: audio from a capture device in that time never reached us. Some
        // servers (PipeWire's dummy driver) report no xrun for it, so jackhost measures it,
        // counts it and flags the block. It is not filled with silence: sources that are
        // clients (not devices) may still deliver a contiguous stream across the jump.
        // Freewheel transitions move the clock and are ignored.
        var gap = 0
        if let expected = expectedFrameTime, times.frames != expected,
            !freewheeling.load(ordering: .relaxed), xrunGraceCycles.load(ordering: .relaxed) == 0
        {
            let jump = Int(Int32(bitPattern: times.frames &- expected))
            if jump > 0 && jump < 1 << 24 {
                gap = jump
                timelineGapFrames.addFromSoleWriter(jump)
                timelineGaps.addFromSoleWriter(1)
            }
        }
        expectedFrameTime = times.frames &+ frames
        publishedExpectedFrameTime.store(UInt64(times.frames &+ frames) + 1, ordering: .relaxed)
        let xrunTotal = xruns.load(ordering: .relaxed)
        let timestamp = AudioTimestamp(
            frameTime: times.frames, microseconds: times.microseconds, sequence: sequence,
            xrunSincePreviousCycle: xrunTotal != xrunsReported || gap > 0,
            transportRolling: readsTransport && JackClient.transportRolling(of: clientHandle),
            freewheeling: freewheeling.load(ordering: .relaxed))
        xrunsReported = xrunTotal
        sequence &+= 1
        // With a frame limit, the last cycle is cut to the exact frame and later ones are skipped.
        let deliverable = deliveryStopped.load(ordering: .acquiring) ? 0 : min(Int(frames), frameLimit - deliveredFrames)
        if deliverable > 0 {
            let view = AudioBufferListView(channels: channelPointers, channelCount: channelCount, frameCount: deliverable)
            let block = AudioBlock(buffers: view, timestamp: timestamp, droppedFramesBefore: 0)
            for index in 0..<realtimeConsumers.count {
                realtimeConsumers[index].process(block)
            }
            for index in 0..<deferredRunners.count {
                deferredRunners[index]._withUnsafeGuaranteedRef { $0.push(view, timestamp: timestamp) }
            }
            deliveredFrames += deliverable
            if deliveredFrames >= frameLimit { limitReached.store(true, ordering: .releasing) }
        }
        // One atomic step: the freewheel callback (another thread) may set the grace meanwhile,
        // and a load followed by a store would overwrite it.
        var remainingGrace = xrunGraceCycles.load(ordering: .relaxed)
        while remainingGrace > 0 {
            let (exchanged, original) = xrunGraceCycles.compareExchange(
                expected: remainingGrace, desired: remainingGrace - 1,
                ordering: .relaxed)
            if exchanged { break }
            remainingGrace = original
        }
        capturedFrames.addFromSoleWriter(max(deliverable, 0))
        cycles.addFromSoleWriter(1)
    }

    /// **Real-time safe.** Copies every event of the control input's buffer into its queue,
    /// stamped with its frame time. Parsing and deciding happen on the reader's thread.
    @inline(__always)
    private static func copyControlEvents(
        from port: OpaquePointer, frames: UInt32, start: UInt32, into queue: Unmanaged<MIDIControlQueue>
    ) {
        queue._withUnsafeGuaranteedRef { queue in
            JackClient.forEachMIDIEvent(of: port, frames: frames) { offset, bytes, count in
                queue.push(frameTime: start &+ offset, offset: offset, bytes: bytes, count: count)
            }
        }
    }

    /// **Real-time safe.** Counts an xrun, unless it falls in a freewheel transition.
    @inline(__always)
    func handleXrun() {
        // jack2 reports spurious xruns when freewheel starts and stops (jack2 issue 758):
        // the driver's timing jumps. They are not lost audio, so they are not counted.
        if freewheeling.load(ordering: .relaxed) || xrunGraceCycles.load(ordering: .relaxed) > 0 { return }
        xruns.add(1, ordering: .relaxed)
    }

    /// **Real-time safe.** Records a freewheel transition and switches deferred delivery
    /// between backpressure (freewheel: no deadline, lossless) and drop-on-full.
    func handleFreewheel(starting: Bool) {
        freewheeling.store(starting, ordering: .relaxed)
        xrunGraceCycles.store(4, ordering: .relaxed)
        for index in 0..<deferredRunners.count {
            deferredRunners[index]._withUnsafeGuaranteedRef { $0.backpressure.store(starting, ordering: .relaxed) }
        }
    }

    /// The frame time the session expected its next cycle to start at; nil before the first cycle.
    var nextExpectedFrameTime: UInt32? {
        let value = publishedExpectedFrameTime.load(ordering: .relaxed)
        return value == 0 ? nil : UInt32(truncatingIfNeeded: value - 1)
    }

    /// Installs every callback on `client` with this engine as their context. Only
    /// ``JackClient/install(_:)`` calls this: the client keeps the engine alive until after
    /// `jack_client_close`, so no callback can see a freed context.
    func installCallbacks(on client: JackClient) {
        // `_withUnsafeGuaranteedRef` calls into the engine without retaining it: the client
        // guarantees its lifetime, and a retain is an atomic read-modify-write on the
        // real-time thread (scripts/check-realtime-retains checks there is none).
        let context = Unmanaged.passUnretained(self).toOpaque()
        client.setProcessCallback(
            { frames, context in
                cjack_rt_enter()
                Unmanaged<CaptureEngine>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.runCycle(frames: frames) }
                cjack_rt_exit()
                return 0
            }, context: context)
        client.setXrunCallback(
            { context in
                Unmanaged<CaptureEngine>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.handleXrun() }
                return 0
            }, context: context)
        client.setBufferSizeCallback(
            { frames, context in
                Unmanaged<CaptureEngine>.fromOpaque(context!).takeUnretainedValue()
                    .bufferSize.store(Int(frames), ordering: .relaxed)
                return 0
            }, context: context)
        client.setSampleRateCallback(
            { rate, context in
                Unmanaged<CaptureEngine>.fromOpaque(context!).takeUnretainedValue()
                    .sampleRate.store(Int(rate), ordering: .relaxed)
                return 0
            }, context: context)
        client.setFreewheelCallback(
            { starting, context in
                Unmanaged<CaptureEngine>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.handleFreewheel(starting: starting != 0) }
            }, context: context)
        // Notification thread: only flag it; the monitor thread queries the graph.
        client.setPortConnectCallback(
            { _, _, _, context in
                Unmanaged<CaptureEngine>.fromOpaque(context!).takeUnretainedValue()
                    .connectionsChanged.store(true, ordering: .releasing)
            }, context: context)
        client.setPortRegistrationCallback(
            { _, registered, context in
                let engine = Unmanaged<CaptureEngine>.fromOpaque(context!).takeUnretainedValue()
                if registered == 0 { engine.portUnregistrations.add(1, ordering: .relaxed) }
                engine.portsChanged.store(true, ordering: .releasing)
            }, context: context)
        // The client is dead when this runs: only signal; the host's monitor thread cleans up.
        client.setShutdownCallback(
            { _, _, context in
                Unmanaged<CaptureEngine>.fromOpaque(context!).takeUnretainedValue()
                    .serverLost.store(true, ordering: .releasing)
            }, context: context)
    }
}

/// A real-time consumer held without a reference count (see `CaptureEngine.realtimeConsumers`):
/// the object unretained, and its type, through which ``RealtimeAudioConsumer/processUnretained(_:_:)``
/// calls `process` on a guaranteed reference. A metatype is not reference-counted, and neither
/// is a guaranteed reference; an existential (`any RealtimeAudioConsumer`) read from memory is.
struct RealtimeSlot {
    let object: Unmanaged<AnyObject>
    let type: any RealtimeAudioConsumer.Type

    init(consumer: any RealtimeAudioConsumer) {
        object = Unmanaged.passUnretained(consumer as AnyObject)
        type = Swift.type(of: consumer)
    }

    /// **Real-time safe.** Calls the consumer's `process` without retaining it.
    @inline(__always)
    func process(_ block: AudioBlock) {
        type.processUnretained(object, block)
    }
}

extension RealtimeAudioConsumer {
    /// **Real-time safe.** `process(_:)` on an unretained instance of this type.
    @inline(__always)
    static func processUnretained(_ object: Unmanaged<AnyObject>, _ block: AudioBlock) {
        object._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Self.self).process(block) }
    }
}
