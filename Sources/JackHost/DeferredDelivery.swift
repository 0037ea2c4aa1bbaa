import CJack
import Dispatch
import Glibc
import Synchronization

/// Feeds one ``DeferredAudioConsumer``: the real-time side copies each cycle into
/// the consumer's ``AudioBlockRing``; a worker thread drains it.
///
/// Why the worker polls instead of being woken: waking a sleeping thread from the
/// process callback (a semaphore post or condition signal) is a system call when
/// someone waits. The worker (or, with an elastic stage, the transfer thread) instead
/// sleeps about a period between drains, so the real-time side stays free of system
/// calls; an elastic consumer's own thread sleeps until the transfer thread wakes it.
final class DeferredConsumerRunner: @unchecked Sendable {
    // @unchecked: `pendingDropped` is touched only by the real-time side (push); everything the worker and the host share is atomic, and `finished` is a semaphore.
    // The fields `push` touches every cycle come first, so they share the object's first cache
    // line; the worker's counters, which it writes per block, sit on later lines (a Swift class
    // lays stored properties out in declaration order).
    let ring: AudioBlockRing
    /// Frames dropped since the last block that made it into the ring (real-time thread only).
    private var pendingDropped = 0
    /// Frames accepted into the ring, since start (written by the process thread only).
    let acceptedFrames = Atomic<Int>(0)
    /// When true, a full ring makes the real-time side wait instead of dropping (freewheel only).
    let backpressure = Atomic<Bool>(false)
    /// Frames this consumer lost to a full ring, since start.
    let droppedFrames = Atomic<Int>(0)
    let consumer: any DeferredAudioConsumer
    /// The consumer's position among the host's deferred consumers (statistics key by it).
    let index: Int
    /// Frames delivered to the consumer, since start.
    let deliveredFrames = Atomic<Int>(0)
    /// Frames still queued when the drain limit passed, given up instead of delivered.
    let abandonedFrames = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    /// Set when the drain limit passes: the worker stops delivering and counts what is left.
    private let abandonRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let pollMicroseconds: UInt32
    /// The elastic stage, when the consumer has one: a transfer thread moves blocks from the
    /// small real-time ring into this growable queue, and the consumer's thread drains it, so
    /// a consumer that stalls for seconds loses nothing until the queue's bound.
    let elastic: ElasticQueue?
    /// Set by the transfer thread when it has moved (or given up) everything it will.
    private let transferDone = Atomic<Bool>(false)
    /// Frames the elastic stage keeps back from the consumer until the transfer ends (see
    /// ``CaptureHost/add(deferred:ringSeconds:maximumBuffer:holdBackSeconds:)``).
    private let holdBackFrames: Int

    /// The shortest period JACK servers run (jackd accepts 16 frames): the ring keeps a
    /// header slot for every period its frames can hold, so its depth in seconds never
    /// shrinks at short periods.
    static let smallestPeriod = 16

    init(
        consumer: any DeferredAudioConsumer, index: Int, channelCount: Int, ringFrames: Int,
        minimumPeriod: Int = DeferredConsumerRunner.smallestPeriod, pollMicroseconds: UInt32,
        elasticFrames: Int? = nil, holdBackFrames: Int = 0
    ) {
        // At most half the elastic bound: holding back must never make the transfer drop frames.
        self.holdBackFrames = min(max(holdBackFrames, 0), (elasticFrames ?? 0) / 2)
        self.consumer = consumer
        self.index = index
        self.elastic = elasticFrames.map { ElasticQueue(channelCount: channelCount, limitFrames: $0) }
        self.ring = AudioBlockRing(
            channelCount: channelCount, minimumFrames: ringFrames,
            maximumBlocks: ringFrames / max(minimumPeriod, 1) + 2)
        self.pollMicroseconds = pollMicroseconds
    }

    // MARK: Real-time side

    /// **Real-time safe.** Offers one cycle to the ring; counts it as dropped when the ring is full.
    @inline(__always)
    func push(_ buffers: AudioBufferListView, timestamp: AudioTimestamp) {
        if ring.write(buffers, timestamp: timestamp, droppedFramesBefore: pendingDropped) {
            pendingDropped = 0
            acceptedFrames.addFromSoleWriter(buffers.frameCount)
            return
        }
        if backpressure.load(ordering: .relaxed) {
            // Freewheeling: the server has no deadline, so waiting for the worker is allowed
            // and makes offline renders lossless. sched_yield is a system call, but only
            // reached while freewheeling, where the real-time rules do not apply.
            // Leave the sanitizer's real-time section while waiting: freewheel has no deadline.
            cjack_rt_exit()
            defer { cjack_rt_enter() }
            while backpressure.load(ordering: .relaxed) && !stopRequested.load(ordering: .relaxed) {
                if ring.write(buffers, timestamp: timestamp, droppedFramesBefore: pendingDropped) {
                    pendingDropped = 0
                    acceptedFrames.addFromSoleWriter(buffers.frameCount)
                    return
                }
                sched_yield()
            }
        }
        pendingDropped += buffers.frameCount
        droppedFrames.add(buffers.frameCount, ordering: .relaxed)
    }

    // MARK: Worker side

    /// Starts the worker thread (and, with an elastic stage, its transfer thread).
    func startWorker() {
        guard let elastic else {
            WorkerThread.start(name: "jackhost-\(consumer.consumerName)") { [self] in
                self.workerLoop()
                self.finished.signal()
            }
            return
        }
        WorkerThread.start(name: "jackhost-transfer") { [self] in
            self.transferLoop(into: elastic)
            self.transferDone.store(true, ordering: .releasing)
            elastic.wakeConsumer()
        }
        WorkerThread.start(name: "jackhost-\(consumer.consumerName)") { [self] in
            self.elasticConsumerLoop(from: elastic)
            self.finished.signal()
        }
    }

    // MARK: Elastic stage (ordinary threads)

    /// Moves blocks from the ring into the queue as fast as they come: this thread only copies,
    /// so the small real-time ring never fills while the consumer stalls. Past the queue's
    /// bound a block is dropped and counted, and the next one carries the count. In freewheel
    /// (no deadline) it waits for room instead, and keeps the queue to the ring's size: a render
    /// faster than the disk would otherwise fill the whole bound with memory it does not need.
    private func transferLoop(into queue: ElasticQueue) {
        var overflow = 0
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            var moved = 0
            while !abandonRequested.load(ordering: .acquiring),
                ring.readNext({ block in
                    while backpressure.load(ordering: .relaxed) && !abandonRequested.load(ordering: .relaxed)
                        && !queue.hasRoom(for: block.frameCount, softLimit: ring.capacityFrames)
                    {
                        usleep(200)
                    }
                    if queue.hasRoom(for: block.frameCount) {
                        queue.append(block, droppedFramesBefore: block.droppedFramesBefore + overflow)
                        overflow = 0
                    } else {
                        overflow += block.droppedFramesBefore + block.frameCount
                        droppedFrames.add(block.frameCount, ordering: .relaxed)
                    }
                })
            {
                moved += 1
            }
            if abandonRequested.load(ordering: .acquiring) {
                while ring.readNext({ block in abandonedFrames.add(block.frameCount, ordering: .relaxed) }) {}
                return
            }
            if stopping { return }
            if moved == 0 { usleep(backpressure.load(ordering: .relaxed) ? 50 : pollMicroseconds) }
        }
    }

    /// Hands the queue's blocks to the consumer; ends when the transfer thread is done and the
    /// queue is empty, or when the drain is abandoned (what is still queued is counted).
    private func elasticConsumerLoop(from queue: ElasticQueue) {
        while true {
            if abandonRequested.load(ordering: .acquiring) {
                abandonedFrames.add(queue.discardAll(), ordering: .relaxed)
                while !transferDone.load(ordering: .acquiring) { usleep(1000) }
                abandonedFrames.add(queue.discardAll(), ordering: .relaxed)
                return
            }
            // Read before looking at the queue: once the transfer thread is done, everything it
            // queued is visible, so an empty queue then means the end.
            let transferFinished = transferDone.load(ordering: .acquiring)
            let keep = transferFinished ? 0 : holdBackFrames
            if let block = queue.takeOldest(leaving: keep) {
                consumer.consume(block.audioBlock)
                deliveredFrames.add(block.frameCount, ordering: .relaxed)
                queue.recycle(block)
                continue
            }
            if transferFinished { return }
            // Sleep until the transfer thread appends a block (or ends, or a stop abandons the
            // queue); the timeout only bounds a missed wake-up. This thread used to poll too,
            // doubling the wake-ups of every elastic consumer.
            if let block = queue.takeOldest(leaving: keep, waitingUpTo: .milliseconds(50)) {
                consumer.consume(block.audioBlock)
                deliveredFrames.add(block.frameCount, ordering: .relaxed)
                queue.recycle(block)
            }
        }
    }

    private func workerLoop() {
        while true {
            // Read the flag before draining, so blocks written before the stop are all delivered.
            let stopping = stopRequested.load(ordering: .acquiring)
            var drained = 0
            while !abandonRequested.load(ordering: .acquiring),
                ring.readNext({ block in
                    consumer.consume(block)
                    deliveredFrames.add(block.frameCount, ordering: .relaxed)
                })
            {
                drained += 1
            }
            if abandonRequested.load(ordering: .acquiring) {
                // Count what is left, exactly, so the report can say what was given up.
                while ring.readNext({ block in abandonedFrames.add(block.frameCount, ordering: .relaxed) }) {}
                return
            }
            if stopping { return }
            // Freewheel has no deadline and the process callback may be waiting on us: poll fast.
            if drained == 0 { usleep(backpressure.load(ordering: .relaxed) ? 50 : pollMicroseconds) }
        }
    }

    /// Stops the real-time side from waiting on a full ring (freewheel backpressure), so that
    /// deactivation cannot wait on a consumer that no longer drains; a block still waiting is
    /// counted as dropped.
    func releaseBackpressure() {
        backpressure.store(false, ordering: .relaxed)
    }

    /// Asks the worker to deliver what is left in the ring and then exit; see ``awaitWorker(until:abandonWhen:)``.
    /// Also releases a real-time side waiting on a full ring in freewheel.
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Waits for the worker to drain and exit, until `deadline` (a `DispatchTime`) or until
    /// `abandonWhen` returns true; then makes it give up what is left (counted in
    /// ``abandonedFrames``) and waits a little longer for the consumer's current call to return.
    ///
    /// - Returns: false when the worker is still inside the consumer (a hung consumer): it is
    ///   left running, detached, and its consumer must not be finished.
    func awaitWorker(until deadline: DispatchTime, abandonWhen: () -> Bool) -> Bool {
        while DispatchTime.now() < deadline && !abandonWhen() {
            if finished.wait(timeout: .now() + .milliseconds(10)) == .success { return true }
        }
        abandonRequested.store(true, ordering: .releasing)
        elastic?.wakeConsumer()
        return finished.wait(timeout: .now() + .milliseconds(DeferredConsumerRunner.returnGraceMilliseconds)) == .success
    }

    /// How long a consumer's current `consume` call may take to return once its queue is abandoned.
    static let returnGraceMilliseconds = 250

    /// Asks the worker to deliver what is left in the ring and exit, then waits for it, without limit.
    func stopWorker() {
        requestStop()
        finished.wait()
    }
}
