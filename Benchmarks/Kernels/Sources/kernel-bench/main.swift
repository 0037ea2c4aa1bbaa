// kernel-bench: JackHost's deferred-delivery ring and sample-conversion kernels, each timed
// side by side with a plain C peer in the same process, alternating subject and peers
// round by round (A B C A B C ...), so that a noisy machine slows all of them alike.
//
// Output: one JSON object per line, one per measurement, for scripts/bench to take medians of:
//   {"case":"convert","item":"int16","subject":"jackhost","round":0,"rate":1.2e9,"unit":"samples/s"}
// Before anything is timed, every kernel's output is compared with its scalar peer's, bit for bit.
import CBaselines
import Foundation
import JackHost
import JackHostConsumers
import Synchronization

// MARK: - Options

struct Options {
    var rounds = 5
    var seconds = 0.2
    var cases: Set<String> = ["convert", "ring"]
    /// With --calls, each conversion subject runs exactly this many times (for callgrind: counts per sample).
    var calls = 0

    init(_ arguments: [String]) {
        var index = 1
        func value() -> String {
            index += 1
            guard index < arguments.count else { Options.usage() }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--rounds":
                guard let n = Int(value()), n > 0 else { Options.usage() }
                rounds = n
            case "--seconds":
                guard let s = Double(value()), s > 0 else { Options.usage() }
                seconds = s
            case "--only": cases = [value()]
            case "--calls":
                guard let n = Int(value()), n > 0 else { Options.usage() }
                calls = n
            default: Options.usage()
            }
            index += 1
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(
            Data(
                """
                usage: kernel-bench [--rounds N] [--seconds S] [--only convert|ring|shape] [--calls N]
                  --rounds N   rounds per item; subject and peers alternate within each round (default 5)
                  --seconds S  time per measurement (default 0.2)
                  --calls N    call each conversion subject exactly N times (16384 samples a call) instead
                               of for a time; for instruction counts under valgrind --tool=callgrind

                """.utf8))
        exit(2)
    }
}

// MARK: - Timing

@inline(__always)
func nowSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// Calls `body` in batches until `seconds` have passed; returns calls per second.
func callsPerSecond(seconds: Double, _ body: () -> Void) -> Double {
    body()  // warm caches and page in the destination
    var calls = 0
    var batch = 1
    let start = nowSeconds()
    var elapsed = 0.0
    while elapsed < seconds {
        for _ in 0..<batch { body() }
        calls += batch
        elapsed = nowSeconds() - start
        if elapsed < seconds / 20 { batch *= 2 }
    }
    return Double(calls) / elapsed
}

func emit(_ caseName: String, _ item: String, _ subject: String, _ round: Int, _ rate: Double, _ unit: String) {
    FileHandle.standardOutput.write(
        Data(
            ("{\"case\":\"\(caseName)\",\"item\":\"\(item)\",\"subject\":\"\(subject)\",\"round\":\(round),\"rate\":\(rate),\"unit\":\"\(unit)\"}\n")
                .utf8))
}

/// The same pointer array, typed as C sees `const float *const *`.
func cArray(_ pointers: UnsafePointer<UnsafePointer<Float>>) -> UnsafePointer<UnsafePointer<Float>?> {
    UnsafeRawPointer(pointers).assumingMemoryBound(to: UnsafePointer<Float>?.self)
}

/// A fact about the run (not a measurement), e.g. which conversion kernels are active.
func emitInfo(_ key: String, _ value: String) {
    print("{\"info\":\"\(key)\",\"value\":\"\(value)\"}")
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("kernel-bench: \(message)\n".utf8))
    exit(1)
}

// MARK: - Conversion kernels

/// Deterministic test signal: mostly in [-1, 1], with some lanes beyond full scale so the
/// clamps are exercised, like a hot input.
func fillSignal(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
    var state: UInt32 = 0x1234_5678
    for index in 0..<count {
        state = state &* 1_664_525 &+ 1_013_904_223
        buffer[index] = (Float(state >> 8) / Float(1 << 24)) * 2.5 - 1.25
    }
}

/// Values where rounding, clamping and saturation differ most easily.
let edgeValues: [Float] = [
    0, -0, 1, -1, 1.5, -1.5, .nan, .infinity, -.infinity, Float(1).nextUp, Float(-1).nextDown,
    0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -0.5 / 32768, -2.5 / 32768, 32767.5 / 32768,
    0.5 / 8_388_608, 1.5 / 8_388_608, 8_388_607.5 / 8_388_608, Float(1).nextDown, -Float(1).nextDown,
    127.99, -128, -128.5, 128, 0.5 / 16_777_216, 1.5 / 16_777_216, .ulpOfOne, -.ulpOfOne,
]

func checkEqual<T: Equatable>(_ name: String, _ a: UnsafePointer<T>, _ b: UnsafePointer<T>, _ count: Int, _ input: UnsafePointer<Float>) {
    for index in 0..<count where a[index] != b[index] {
        fail("\(name): jackhost and the scalar peer differ at \(index) for input \(input[index]): \(a[index]) vs \(b[index])")
    }
}

/// Floats compare by bit pattern: interleaving must move NaNs and signed zeros unchanged.
func checkEqual(_ name: String, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int, _ input: UnsafePointer<Float>) {
    for index in 0..<count where a[index].bitPattern != b[index].bitPattern {
        fail("\(name): jackhost and the scalar peer differ at \(index): \(a[index]) vs \(b[index])")
    }
}

func runConversion(_ options: Options) {
    emitInfo("kernels", SampleConversion.activeKernels.rawValue)
    let channels = 64, frames = 256
    let count = channels * frames
    let source = UnsafeMutablePointer<Float>.allocate(capacity: count)
    fillSignal(source, count: count)
    for (index, value) in edgeValues.enumerated() { source[index * 97] = value }
    let out16 = UnsafeMutablePointer<Int16>.allocate(capacity: count)
    let peer16 = UnsafeMutablePointer<Int16>.allocate(capacity: count)
    let out32 = UnsafeMutablePointer<Int32>.allocate(capacity: count)
    let peer32 = UnsafeMutablePointer<Int32>.allocate(capacity: count)
    let outFloat = UnsafeMutablePointer<Float>.allocate(capacity: count)
    let peerFloat = UnsafeMutablePointer<Float>.allocate(capacity: count)
    let copy = UnsafeMutablePointer<Float>.allocate(capacity: count)
    for pointer in [out32, peer32] { pointer.initialize(repeating: 0, count: count) }
    for pointer in [out16, peer16] { pointer.initialize(repeating: 0, count: count) }
    for pointer in [outFloat, peerFloat, copy] { pointer.initialize(repeating: 0, count: count) }

    // Planar channel pointers over the same samples, for interleaving.
    func channelPointers(_ channelCount: Int) -> UnsafeMutableBufferPointer<UnsafePointer<Float>> {
        let pointers = UnsafeMutableBufferPointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        let length = count / channelCount
        for channel in 0..<channelCount { pointers[channel] = UnsafePointer(source + channel * length) }
        return pointers
    }
    let planar64 = channelPointers(64)
    let planar2 = channelPointers(2)

    // `jackhost` runs the kernels a default build uses on this CPU (SampleConversion.activeKernels:
    // AVX2 where the CPU has it); `portable` forces the Swift SIMD kernels every CPU runs.
    struct Kernel {
        var item: String
        var jackhost: (SampleConversion.Kernels) -> Void
        var scalar: () -> Void
        var swiftScalar: (() -> Void)?
        var check: () -> Void
    }
    let kernels: [Kernel] = [
        Kernel(
            item: "int16",
            jackhost: { SampleConversion.floatToInt16(source, out16, count: count, using: $0) },
            scalar: { cb_float_to_int16(source, peer16, count) },
            swiftScalar: { for i in 0..<count { out16[i] = SampleConversion.referenceInt16(source[i]) } },
            check: { checkEqual("int16", out16, peer16, count, source) }),
        Kernel(
            item: "int24",
            jackhost: { SampleConversion.floatToInt24(source, out32, count: count, using: $0) },
            scalar: { cb_float_to_int24(source, peer32, count) },
            swiftScalar: { for i in 0..<count { out32[i] = SampleConversion.referenceInt24(source[i]) } },
            check: { checkEqual("int24", out32, peer32, count, source) }),
        // What the recorder calls for 24-bit files: the same conversion shifted left by 8.
        Kernel(
            item: "int24 left-justified",
            jackhost: { SampleConversion.floatToInt24LeftJustified(source, out32, count: count, using: $0) },
            scalar: { cb_float_to_int24_left_justified(source, peer32, count) },
            swiftScalar: nil,
            check: { checkEqual("int24 left-justified", out32, peer32, count, source) }),
        Kernel(
            item: "int32",
            jackhost: { SampleConversion.floatToInt32(source, out32, count: count, using: $0) },
            scalar: { cb_float_to_int32(source, peer32, count) },
            swiftScalar: { for i in 0..<count { out32[i] = SampleConversion.referenceInt32(source[i]) } },
            check: { checkEqual("int32", out32, peer32, count, source) }),
        Kernel(
            item: "8.24",
            jackhost: { SampleConversion.floatToFixed8_24(source, out32, count: count, using: $0) },
            scalar: { cb_float_to_fixed8_24(source, peer32, count) },
            swiftScalar: { for i in 0..<count { out32[i] = SampleConversion.referenceFixed8_24(source[i]) } },
            check: { checkEqual("8.24", out32, peer32, count, source) }),
        Kernel(
            item: "interleave x64",
            jackhost: { SampleConversion.interleave(UnsafeBufferPointer(planar64), frames: count / 64, into: outFloat, using: $0) },
            scalar: { cb_interleave(cArray(planar64.baseAddress!), 64, count / 64, peerFloat) },
            swiftScalar: nil,
            check: { checkEqual("interleave x64", outFloat, peerFloat, count, source) }),
        Kernel(
            item: "interleave x2",
            jackhost: { SampleConversion.interleave(UnsafeBufferPointer(planar2), frames: count / 2, into: outFloat, using: $0) },
            scalar: { cb_interleave(cArray(planar2.baseAddress!), 2, count / 2, peerFloat) },
            swiftScalar: nil,
            check: { checkEqual("interleave x2", outFloat, peerFloat, count, source) }),
        // What `jackhost stream --format s16` does per block: convert and interleave in one pass.
        Kernel(
            item: "s16 interleaved x64",
            jackhost: {
                SampleConversion.encode(
                    UnsafeBufferPointer(planar64), frames: count / 64, format: .int16,
                    interleaved: true, into: UnsafeMutableRawPointer(out16), using: $0)
            },
            scalar: { cb_encode_int16_interleaved(cArray(planar64.baseAddress!), 64, count / 64, peer16) },
            swiftScalar: nil,
            check: { checkEqual("s16 interleaved x64", out16, peer16, count, source) }),
    ]
    let memcpyPeer = { cb_memcpy(copy, source, count * MemoryLayout<Float>.stride) }

    // The meter's per-buffer kernel (case 1's real-time work), 64 buffers of 64 frames per call.
    var meterSink: Float = 0
    // 64 channels of 64 frames, measured as LevelMeter.process does: the whole block at once.
    let meterChannels = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 64)
    for channel in 0..<64 { meterChannels[channel] = UnsafePointer(source + channel * 64) }
    let meterBlock = AudioBufferListView(channels: meterChannels, channelCount: 64, frameCount: 64)
    let meterPeaks = UnsafeMutablePointer<Float>.allocate(capacity: 64)
    let meterSums = UnsafeMutablePointer<Double>.allocate(capacity: 64)
    let meterClips = UnsafeMutablePointer<Int32>.allocate(capacity: 64)
    func measureBlock(_ kernels: SampleConversion.Kernels) {
        LevelMeter.measure(meterBlock, channels: 64, peaks: meterPeaks, sums: meterSums, clips: meterClips, using: kernels)
        meterSink = max(meterSink, meterPeaks[63])
    }
    var meterKernels: [(String, () -> Void)] = [
        ("jackhost", { measureBlock(SampleConversion.activeKernels) }),
        (
            "scalar",
            {
                var peak: Float = 0, sum: Double = 0, clips = 0
                for channel in 0..<64 {
                    cb_measure(source + channel * 64, 64, &peak, &sum, &clips)
                    meterSink = max(meterSink, peak)
                }
            }
        ),
    ]
    if SampleConversion.activeKernels != .portable {
        meterKernels.append(("portable", { measureBlock(.portable) }))
    }
    do {  // the kernel and its peer agree on peak and clips (on a NaN-free stretch: the edge values include NaN)
        let t = UnsafeBufferPointer(start: source + 8192, count: 4096)
        let x = LevelMeter.measure(t)
        var peak: Float = 0, sum: Double = 0, clips = 0
        cb_measure(source + 8192, 4096, &peak, &sum, &clips)
        if x.peak != peak || x.clips != clips { fail("meter kernels disagree: \(x) \(peak) \(clips)") }
    }

    // Same work first: a kernel that disagrees with its peer is not benchmarked.
    for kernel in kernels {
        for implementation in SampleConversion.Kernels.allCases where SampleConversion.isSupported(implementation) {
            kernel.jackhost(implementation)
            kernel.scalar()
            kernel.check()
        }
        // NaN lanes make the Swift reference and the C peer agree too; check it as well.
        if let swiftScalar = kernel.swiftScalar {
            swiftScalar()
            kernel.check()
        }
    }

    for round in 0..<options.rounds {
        var subjects = meterKernels
        let rotation = round % subjects.count
        subjects = Array(subjects[rotation...] + subjects[..<rotation])
        for (subject, body) in subjects {
            let rate: Double
            if options.calls > 0 {
                let start = nowSeconds()
                for _ in 0..<options.calls { body() }
                rate = Double(options.calls * 4096) / (nowSeconds() - start)
            } else {
                rate = callsPerSecond(seconds: options.seconds, body) * 4096
            }
            emit("meter", "LevelMeter.measure 64 x 64", subject, round, rate, "samples/s")
        }
    }
    if meterSink < 0 { print(meterSink) }

    for kernel in kernels {
        for round in 0..<options.rounds {
            // Rotate the order every round, so that no subject always runs first.
            var subjects: [(String, () -> Void)] = [
                ("jackhost", { kernel.jackhost(SampleConversion.activeKernels) }), ("scalar", kernel.scalar), ("memcpy", memcpyPeer),
            ]
            if SampleConversion.activeKernels != .portable { subjects.append(("portable", { kernel.jackhost(.portable) })) }
            if let swiftScalar = kernel.swiftScalar { subjects.append(("swift-reference", swiftScalar)) }
            let rotation = round % subjects.count
            subjects = Array(subjects[rotation...] + subjects[..<rotation])
            for (subject, body) in subjects {
                if options.calls > 0 {
                    let start = nowSeconds()
                    for _ in 0..<options.calls { body() }
                    emit("convert", kernel.item, subject, round, Double(options.calls * count) / (nowSeconds() - start), "samples/s")
                    continue
                }
                let rate = callsPerSecond(seconds: options.seconds, body) * Double(count)
                emit("convert", kernel.item, subject, round, rate, "samples/s")
            }
        }
    }
}

// MARK: - Deferred delivery

/// The worker side, as `DeferredConsumerRunner.workerLoop` runs it (Sources/JackHost/DeferredDelivery.swift,
/// which is internal and cannot be called from here): drain every ready block into the consumer;
/// when there was none, sleep 50 us while the writer applies backpressure (freewheel, which is what
/// this throughput test models: the writer waits when the ring is full) and `pollMicroseconds`
/// otherwise; exit after a final drain once asked to stop. The consumer reads one sample per
/// channel, like a tap that looks at its data. Keep this in step with the runner.
final class DeliveryWorker: @unchecked Sendable {
    let ring: AudioBlockRing
    let stop = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
    var delivered = 0
    var sink: UInt32 = 0
    let pollMicroseconds: UInt32
    /// The writer waits instead of dropping when the ring is full (freewheel); always true here.
    let backpressure = true

    init(ring: AudioBlockRing, pollMicroseconds: UInt32) {
        self.ring = ring
        self.pollMicroseconds = pollMicroseconds
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                let stopping = stop.load(ordering: .acquiring)
                var drained = 0
                while ring.readNext({ block in
                    for channel in 0..<block.channelCount { sink ^= block.buffers[channel][0].bitPattern }
                    delivered += block.frameCount
                }) {
                    drained += 1
                }
                if stopping { break }
                if drained == 0 { usleep(backpressure ? 50 : pollMicroseconds) }
            }
            finished.signal()
        }
        thread.start()
    }
}

func runRing(_ options: Options) {
    // Ring sizing as CaptureHost.makeRunners does for a 2 s ring at 48 kHz; the worker polls at
    // a quarter period clamped to 0.5...5 ms, as the host configures it.
    let sampleRate = 48_000
    for (channels, frames) in [(64, 64), (64, 1024)] {
        let minimumFrames = max(2 * sampleRate, 8 * max(frames, 1024))
        let period = Double(frames) / Double(sampleRate)
        let poll = UInt32(min(max(period / 4, 0.0005), 0.005) * 1_000_000)
        let item = "\(channels)ch x \(frames)"
        // Source buffers, like JACK's port buffers: one small buffer per channel.
        let sources = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
        for channel in 0..<channels {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            fillSignal(buffer, count: frames)
            sources[channel] = UnsafePointer(buffer)
        }
        let view = AudioBufferListView(channels: sources, channelCount: channels, frameCount: frames)
        let blockBytes = Double(channels * frames * MemoryLayout<Float>.stride)

        let ring = AudioBlockRing(channelCount: channels, minimumFrames: minimumFrames)
        let capacity = ring.capacityFrames
        let peerRing = UnsafeMutablePointer<Float>.allocate(capacity: channels * capacity)
        peerRing.initialize(repeating: 0, count: channels * capacity)

        // Correctness: what the worker receives is what was written.
        do {
            let worker = DeliveryWorker(ring: ring, pollMicroseconds: poll)
            var mismatch = false
            _ = ring.write(
                view, timestamp: AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false),
                droppedFramesBefore: 0)
            _ = ring.readNext { block in
                for channel in 0..<channels where !block.buffers[channel].elementsEqual(UnsafeBufferPointer(start: sources[channel], count: frames)) {
                    mismatch = true
                }
            }
            if mismatch { fail("ring delivered different samples than were written") }
            _ = worker
        }

        for round in 0..<options.rounds {
            let order = round % 2 == 0 ? ["jackhost", "memcpy"] : ["memcpy", "jackhost"]
            for subject in order {
                let rate: Double
                if subject == "jackhost" {
                    let worker = DeliveryWorker(ring: ring, pollMicroseconds: poll)
                    worker.start()
                    var sequence: UInt64 = 0
                    var blocks = 0
                    let start = nowSeconds()
                    while true {
                        for _ in 0..<64 {
                            let stamp = AudioTimestamp(
                                frameTime: UInt32(truncatingIfNeeded: sequence) &* UInt32(frames),
                                microseconds: 0, sequence: sequence, xrunSincePreviousCycle: false)
                            // A full ring waits, as in freewheel (backpressure): nothing is dropped.
                            while !ring.write(view, timestamp: stamp, droppedFramesBefore: 0) { sched_yield() }
                            sequence &+= 1
                        }
                        blocks += 64
                        if nowSeconds() - start >= options.seconds { break }
                    }
                    worker.stop.store(true, ordering: .releasing)
                    worker.finished.wait()
                    let elapsed = nowSeconds() - start
                    if worker.delivered != blocks * frames { fail("worker received \(worker.delivered) frames of \(blocks * frames)") }
                    rate = Double(blocks) * blockBytes / elapsed
                } else {
                    var offset = 0
                    var blocks = 0
                    let start = nowSeconds()
                    var elapsed = 0.0
                    while elapsed < options.seconds {
                        for _ in 0..<64 {
                            cb_copy_block_into_ring(cArray(sources), channels, frames, peerRing, capacity, offset)
                            offset = (offset + frames) % capacity  // AudioBlockRing's capacity need not be a power of two
                        }
                        blocks += 64
                        elapsed = nowSeconds() - start
                    }
                    rate = Double(blocks) * blockBytes / elapsed
                }
                emit("ring", item, subject, round, rate, "bytes/s")
            }
        }
    }
}

// MARK: - Block shaping

/// Takes shaped blocks and does nothing with them but count frames (the consumer's own work
/// is not what is measured).
final class FrameCounter: DeferredAudioConsumer {
    var frames = 0
    var channels = 0
    func prepare(format: StreamFormat) throws { channels = format.channelCount }
    func consume(_ block: AudioBlock) { frames += block.frameCount }
    func finish() {}
}

/// What a BlockShape costs on a deferred consumer's worker, per input sample, beside the
/// memcpy of the same samples (what any deferred consumer's ring already pays): 64 channels
/// of 256-frame blocks at 48 kHz in, shaped four ways.
func runShape(_ options: Options) {
    let channels = 64, frames = 256, rate = 48_000.0
    let sources = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
    for channel in 0..<channels {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        fillSignal(buffer, count: frames)
        for index in 0..<frames { buffer[index] *= 0.5 }  // in range: a resampler's honest input
        sources[channel] = UnsafePointer(buffer)
    }
    let block = AudioBlock(
        buffers: AudioBufferListView(channels: sources, channelCount: channels, frameCount: frames),
        timestamp: AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false))
    let destination = UnsafeMutablePointer<Float>.allocate(capacity: channels * frames)
    let shapes: [(String, BlockShape)] = [
        ("channels=1-2", BlockShape(channels: [0, 1])),
        ("block-frames=1000", BlockShape(frames: 1000)),
        ("sample-rate=16000", BlockShape(sampleRate: 16000)),
        ("sample-rate=44100", BlockShape(sampleRate: 44100)),
    ]
    for (item, shape) in shapes {
        let counter = FrameCounter()
        let shaped = ShapedDeferredConsumer(counter, shape: shape)
        do { try shaped.prepare(format: StreamFormat(sampleRate: rate, channelCount: channels)) } catch { fail("\(item): \(error)") }
        // Correctness before timing: 1 s in gives the frames the shape promises (a partial block, and the
        // resampler's filter delay, wait for more or for finish).
        for _ in 0..<Int(rate) / frames { shaped.consume(block) }
        let expected = Int((Double(Int(rate) / frames * frames) * (shape.sampleRate ?? rate) / rate))
        if abs(counter.frames - expected) > max(shape.frames ?? 0, 2048) { fail("\(item): \(counter.frames) frames out, expected about \(expected)") }
        for round in 0..<options.rounds {
            let order = round % 2 == 0 ? ["jackhost", "memcpy"] : ["memcpy", "jackhost"]
            for subject in order {
                let calls: Double
                if subject == "jackhost" {
                    calls = callsPerSecond(seconds: options.seconds) { shaped.consume(block) }
                } else {
                    calls = callsPerSecond(seconds: options.seconds) {
                        for channel in 0..<channels { (destination + channel * frames).update(from: sources[channel], count: frames) }
                    }
                }
                emit("shape", item, subject, round, calls * Double(channels * frames), "samples/s")
            }
        }
        shaped.finish()
    }
}

// MARK: - Main

let options = Options(CommandLine.arguments)
if options.cases.contains("convert") { runConversion(options) }
if options.cases.contains("ring") { runRing(options) }
if options.cases.contains("shape") { runShape(options) }
