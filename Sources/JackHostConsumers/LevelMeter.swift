import CSampleKernels
import FoundationEssentials
import Glibc
import JackHostSupport
import JackHostTypes
import Synchronization

/// A real-time peak/RMS meter: levels are computed in the process callback,
/// drawing happens elsewhere (``MeterDisplay``).
///
/// The real-time side is the only writer. It keeps running totals per channel in its own
/// memory and publishes them with relaxed atomic stores: no compare-and-swap loop, no
/// allocation, no lock, no system call. The display side derives a window's RMS from the
/// difference between two readings of the running sums, and asks for the window peak to
/// restart by bumping an epoch counter that the real-time side checks once per cycle.
public final class LevelMeter: RealtimeAudioConsumer, @unchecked Sendable {
    // @unchecked: per-channel working state is touched only by the real-time thread (process) after prepare; displays read atomics, and prepare and snapshots take `displayLock`.
    /// The name shown in reports.
    public let consumerName = "meter"

    /// One state per channel, on its own cache line (`jh_meter_channel`): the real-time side's
    /// running totals and the values it publishes with relaxed atomic stores. One contiguous
    /// array, updated by one C call per block, so a cycle touches a line per channel and no
    /// per-channel object (at 2 channels the old objects' misses cost more than measuring).
    private var channelStates: OpaquePointer?
    /// One block's measurements per channel, for the portable kernels only (real-time thread;
    /// sized in `prepare`). The AVX2 path measures and accumulates in one pass without them.
    private var blockPeaks = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var blockSums = UnsafeMutablePointer<Double>.allocate(capacity: 1)
    private var blockClips = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    /// Display side only: each channel's sum of squares and frames at the previous snapshot.
    private var snapshotSums: [(sum: Double, frames: Int)] = []
    /// Bumped by the display to start a new peak window; the real-time side follows.
    private let windowEpoch = Atomic<Int>(0)
    /// Whether `process` measures (see ``pause()``); read once a cycle.
    private let measuring: Atomic<Bool>
    /// The epoch the real-time side last applied (real-time thread only).
    private var appliedEpoch = 0
    /// ``channelCount`` for the real-time side: a private property, so that reading it needs no
    /// dynamic exclusivity check (`swift_beginAccess`, which walks thread-local storage) as
    /// reading the public one does.
    private var realtimeChannelCount = 0
    /// Whether `process` takes the AVX2 block kernel: decided once at init, so the real-time
    /// side asks the CPU nothing.
    private let usesBlockKernel: Bool
    /// Serialises `prepare` (which may run again after a reconnect) against the display
    /// side's reads. The real-time side never takes it: it only runs between prepare and finish.
    private let displayLock = Lock()
    /// The number of channels metered, known after `prepare`.
    public private(set) var channelCount = 0
    /// The format the meter was prepared with.
    public private(set) var format: StreamFormat?

    /// The measuring kernels this meter uses.
    public let kernels: SampleConversion.Kernels

    /// Creates a meter; it sizes itself in `prepare`. `kernels` defaults to the process's
    /// (``SampleConversion/activeKernels``); both give identical levels. A meter created
    /// `paused` measures nothing until ``resume()``.
    public init(kernels: SampleConversion.Kernels = SampleConversion.activeKernels, paused: Bool = false) {
        precondition(SampleConversion.isSupported(kernels), "the AVX2 kernels need a CPU with AVX2")
        self.kernels = kernels
        usesBlockKernel = kernels == .avx2
        measuring = Atomic(!paused)
    }

    /// Stops measuring: until ``resume()``, `process` returns at once, so a meter nobody reads
    /// costs the real-time thread one relaxed load a cycle. Levels and totals stay as they were.
    /// Any thread.
    public func pause() { measuring.store(false, ordering: .relaxed) }

    /// Measures again from the next cycle. Take a snapshot first to start a fresh window: the
    /// paused time is in no window's frames. Any thread.
    public func resume() { measuring.store(true, ordering: .relaxed) }

    /// Whether the meter is paused (``pause()``).
    public var isPaused: Bool { !measuring.load(ordering: .relaxed) }

    deinit {
        jh_meter_channels_destroy(channelStates)
        blockPeaks.deallocate()
        blockSums.deallocate()
        blockClips.deallocate()
    }

    /// Allocates per-channel state.
    public func prepare(format: StreamFormat) throws {
        displayLock.lock()
        defer { displayLock.unlock() }
        let slots = max(format.channelCount, 1)
        guard let states = jh_meter_channels_create(slots) else { throw LevelMeterError.outOfMemory }
        jh_meter_channels_destroy(channelStates)
        channelStates = states
        blockPeaks.deallocate()
        blockSums.deallocate()
        blockClips.deallocate()
        blockPeaks = .allocate(capacity: slots)
        blockSums = .allocate(capacity: slots)
        blockClips = .allocate(capacity: slots)
        blockPeaks.initialize(repeating: 0, count: slots)
        blockSums.initialize(repeating: 0, count: slots)
        blockClips.initialize(repeating: 0, count: slots)
        snapshotSums = Array(repeating: (0, 0), count: format.channelCount)
        channelCount = format.channelCount
        realtimeChannelCount = format.channelCount
        self.format = format
        appliedEpoch = windowEpoch.load(ordering: .relaxed)
        // The first call into generic SIMD code instantiates type metadata under a runtime
        // lock (RealtimeSanitizer caught this in debug builds). Measuring once here, off the
        // real-time thread, fills those caches before the process callback needs them.
        let warmUp = [Float](repeating: 0, count: 17)
        _ = warmUp.withUnsafeBufferPointer { LevelMeter.measure($0, using: .portable) }
        // The same for the block's channel pointers as `process` reads them (an
        // `UnsafeBufferPointer<UnsafePointer<Float>>`, rebound for C): RealtimeSanitizer caught
        // the debug build instantiating that type's metadata in the first cycle.
        warmUp.withUnsafeBufferPointer { samples in
            let bases = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
            defer { bases.deallocate() }
            bases.initialize(to: samples.baseAddress!)
            let view = AudioBufferListView(channels: bases, channelCount: 1, frameCount: samples.count)
            _ = view.channelPointers.withMemoryRebound(to: Optional<UnsafePointer<Float>>.self) { $0.count }
        }
    }

    /// **Real-time.** Measures one block: with AVX2 one C call measures every channel and
    /// updates its state; otherwise the portable kernels measure and one C call accumulates.
    public func process(_ block: AudioBlock) {
        guard measuring.load(ordering: .relaxed) else { return }
        let epoch = windowEpoch.load(ordering: .relaxed)
        let newWindow: Int32 = epoch != appliedEpoch ? 1 : 0
        appliedEpoch = epoch
        let channels = min(block.channelCount, realtimeChannelCount)
        let frames = block.frameCount
        if usesBlockKernel {
            block.buffers.channelPointers.withMemoryRebound(to: Optional<UnsafePointer<Float>>.self) {
                jh_avx2_meter_block(channelStates, $0.baseAddress!, channels, frames, newWindow)
            }
            return
        }
        LevelMeter.measure(
            block.buffers, channels: channels, peaks: blockPeaks, sums: blockSums, clips: blockClips,
            using: kernels)
        jh_meter_accumulate(channelStates, channels, frames, blockPeaks, blockSums, blockClips, newWindow)
    }

    /// Nothing to release.
    public func finish() {}

    /// **Real-time safe.** ``measure(_:using:)`` for the first `channels` channels of a block at
    /// once, into `peaks`, `sums` and `clips` (`channels` elements each). With the AVX2 kernels
    /// this is one call into C for the whole block: a call per 64-frame channel costs more
    /// than the work.
    @inline(__always)
    public static func measure(
        _ buffers: AudioBufferListView, channels: Int,
        peaks: UnsafeMutablePointer<Float>, sums: UnsafeMutablePointer<Double>,
        clips: UnsafeMutablePointer<Int32>,
        using kernels: SampleConversion.Kernels = SampleConversion.activeKernels
    ) {
        precondition(channels <= buffers.channelCount, "more channels than the block has")
        if kernels == .avx2 {
            precondition(SampleConversion.isSupported(.avx2), "the AVX2 kernels need a CPU with AVX2")
            buffers.channelPointers.withMemoryRebound(to: Optional<UnsafePointer<Float>>.self) {
                jh_avx2_measure_channels($0.baseAddress!, channels, buffers.frameCount, peaks, sums, clips)
            }
            return
        }
        for channel in 0..<channels {
            let measured = measure(buffers[channel], using: .portable)
            peaks[channel] = measured.peak
            sums[channel] = measured.sumSquares
            clips[channel] = Int32(measured.clips)
        }
    }

    /// **Real-time safe.** Peak, sum of squares and clipped-sample count of a buffer, 8 lanes at a time.
    ///
    /// `kernels` picks the implementation (AVX2 C or portable Swift SIMD, as for
    /// ``SampleConversion``). Both do the same operations in the order `jh_avx2_measure_channels`
    /// documents, so the results are identical bit for bit.
    @inline(__always)
    public static func measure(
        _ samples: UnsafeBufferPointer<Float>,
        using kernels: SampleConversion.Kernels = SampleConversion.activeKernels
    )
        -> (peak: Float, sumSquares: Double, clips: Int)
    {
        guard var base = samples.baseAddress else { return (0, 0, 0) }
        if kernels == .avx2 {
            var peak: Float = 0, sum: Double = 0, clips: Int32 = 0
            withUnsafePointer(to: &base) { channel in
                channel.withMemoryRebound(to: Optional<UnsafePointer<Float>>.self, capacity: 1) {
                    jh_avx2_measure_channels($0, 1, samples.count, &peak, &sum, &clips)
                }
            }
            return (peak, sum, Int(clips))
        }
        let count = samples.count
        var peakVector = SIMD8<Float>(repeating: 0)
        var squaresVector = SIMD8<Float>(repeating: 0)
        var clipVector = SIMD8<Int32>(repeating: 0)
        let one = SIMD8<Float>(repeating: 1)
        let raw = UnsafeRawPointer(base)
        let vectorCount = count & ~7
        var index = 0
        while index < vectorCount {
            let lanes = raw.loadUnaligned(fromByteOffset: index * 4, as: SIMD8<Float>.self)
            // Plain lane-wise operations: pointwiseMax and max() are out-of-line generic stdlib
            // calls, and addProduct becomes a libm fmaf call per lane on baseline x86-64
            // (callgrind: 24 % of a 64-channel cycle). Clearing the sign bit is |x|.
            let magnitude = unsafeBitCast(unsafeBitCast(lanes, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
            peakVector.replace(with: magnitude, where: magnitude .> peakVector)
            squaresVector += lanes * lanes
            clipVector &-= unsafeBitCast(magnitude .>= one, to: SIMD8<Int32>.self)
            index += 8
        }
        var peak: Float = 0
        for lane in 0..<8 where peakVector[lane] > peak { peak = peakVector[lane] }
        // The documented order: (l0+l4, l1+l5, l2+l6, l3+l7), then (a0+a2, a1+a3), then b0+b1.
        let halves = squaresVector.lowHalf + squaresVector.highHalf
        let pairs = halves.lowHalf + halves.highHalf
        var sum = Double(pairs[0] + pairs[1])
        var clips = Int(clipVector.wrappedSum())
        while index < count {
            let magnitude = abs(base[index])
            peak = max(peak, magnitude)
            sum += Double(base[index] * base[index])
            if magnitude >= 1 { clips += 1 }
            index += 1
        }
        return (peak, sum, clips)
    }

    // MARK: Display side (ordinary threads)

    /// Reads each channel's window since the previous snapshot (and starts a new one),
    /// plus the running totals. Call from one display thread.
    public func takeSnapshot() -> [ChannelLevels] {
        displayLock.lock()
        defer { displayLock.unlock() }
        let levels = (0..<channelCount).map { channel -> ChannelLevels in
            let reading = jh_meter_channel_read(channelStates, channel)
            let frames = Int(reading.frames)
            let windowFrames = frames - snapshotSums[channel].frames
            let windowSum = max(0, reading.total_sum - snapshotSums[channel].sum)
            snapshotSums[channel] = (reading.total_sum, frames)
            return ChannelLevels(
                peak: reading.window_peak,
                rms: windowFrames > 0 ? Float((windowSum / Double(windowFrames)).squareRoot()) : 0,
                overallPeak: 0, overallRMS: 0, clips: 0
            )
            .withTotals(from: reading)
        }
        windowEpoch.add(1, ordering: .relaxed)
        return levels
    }

    /// The running totals, without touching the windows.
    public func totals() -> [ChannelLevels] {
        displayLock.lock()
        defer { displayLock.unlock() }
        return (0..<channelCount).map {
            ChannelLevels(peak: 0, rms: 0, overallPeak: 0, overallRMS: 0, clips: 0)
                .withTotals(from: jh_meter_channel_read(channelStates, $0))
        }
    }
}

/// Why ``LevelMeter/prepare(format:)`` failed.
public enum LevelMeterError: Error, CustomStringConvertible {
    /// The channel states could not be allocated.
    case outOfMemory

    /// One line for the user.
    public var description: String { "the meter could not allocate its channel states (out of memory)" }
}

extension LevelMeter {
    /// A linear level in dBFS; silence is -infinity.
    public static func dB(_ linear: Float) -> Float { ChannelLevels.dBFS(linear) }
}

extension ChannelLevels {
    fileprivate func withTotals(from reading: jh_meter_reading) -> ChannelLevels {
        var copy = self
        copy.overallPeak = reading.total_peak
        copy.overallRMS = reading.frames > 0 ? Float((reading.total_sum / Double(reading.frames)).squareRoot()) : 0
        copy.clips = Int(reading.clips)
        return copy
    }
}
