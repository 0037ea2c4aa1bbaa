// SampleConversion.swift
//
// Purpose: turn JACK's planar float32 audio into the sample formats the recorder
// (libsndfile) and the stream consumer (raw little-endian bytes on stdout) write.
//
// The scalar `reference…` functions are the *definition* of every conversion; the
// SIMD kernels must match them bit for bit (the tests check this lane by lane).
//
// Why the kernels avoid `Float.rounded(.toNearestOrEven)` and `Int32(Float)`:
// Swift on Linux x86_64 targets baseline SSE2, where round-to-even is a libm call
// per lane, and `Int32(Float)` traps on out-of-range lanes. Instead the kernels
// round with the "magic number" trick (adding 1.5 * 2^23 makes the FPU's default
// round-to-nearest-even rounding drop the fraction, and the integer can then be
// read straight out of the float's bit pattern). That needs only adds, multiplies,
// compares and integer ops, all of which vectorise on every target. It relies on
// the default IEEE rounding mode, which Swift never changes.
//
// Two implementations of every kernel:
// - the portable ones below, Swift SIMD on baseline SSE2 (and any other CPU);
// - AVX2 ones in C (Sources/CSampleKernels), used when the CPU has AVX2, because Swift
//   cannot compile one function for a newer CPU than the rest of the module.
// `SampleConversion.activeKernels` says which runs; JACKHOST_SIMD=portable forces the
// portable ones. Both must match the reference formulas bit for bit (the tests check both).
//
// Everything here is allocation-free: vectors live in registers or on the stack.

import CSampleKernels

/// Vectorised float32 to integer / fixed-point conversion, interleaving and wire encoding.
public enum SampleConversion {
    // MARK: - Choosing the kernels

    /// The implementations of the conversion kernels.
    public enum Kernels: String, Sendable, CaseIterable {
        /// AVX2 kernels in C, for x86_64 CPUs that have AVX2.
        case avx2
        /// Swift SIMD kernels for any CPU (baseline SSE2 on x86_64).
        case portable
    }

    /// The kernels this process uses by default: `.avx2` when the CPU supports it, unless the
    /// environment variable `JACKHOST_SIMD=portable` was set at start-up; otherwise `.portable`.
    /// Decided once before `main` runs, so reading it is a plain load on any thread.
    public static var activeKernels: Kernels { jh_sample_kernels_use_avx2() != 0 ? .avx2 : .portable }

    /// Whether `kernels` can run on this CPU (`.portable` always can).
    public static func isSupported(_ kernels: Kernels) -> Bool {
        kernels == .portable || jh_sample_kernels_cpu_has_avx2() != 0
    }

    /// Hands a channel list to C as `const float *const *` (an optional pointer has the same layout).
    @inline(__always)
    private static func withCChannels<R>(
        _ channels: UnsafeBufferPointer<UnsafePointer<Float>>,
        _ body: (UnsafePointer<UnsafePointer<Float>?>) -> R
    ) -> R {
        channels.withMemoryRebound(to: Optional<UnsafePointer<Float>>.self) { body($0.baseAddress!) }
    }

    /// The C kernels' name for a format.
    private static func wireFormat(_ format: SampleFormat) -> jh_wire_format {
        switch format {
        case .float32: return JH_WIRE_FLOAT32
        case .int16: return JH_WIRE_INT16
        case .int24: return JH_WIRE_INT24_PACKED
        case .int32: return JH_WIRE_INT32
        case .fixed8_24: return JH_WIRE_FIXED8_24
        }
    }

    /// Runs one contiguous conversion with `kernels`: the AVX2 C kernel or the portable Swift one.
    @inline(__always)
    private static func convert(
        _ kernels: Kernels, _ format: jh_wire_format, _ source: UnsafePointer<Float>,
        _ destination: UnsafeMutableRawPointer, count: Int, portable: () -> Void
    ) {
        precondition(count >= 0, "negative sample count")
        switch kernels {
        case .avx2:
            precondition(isSupported(.avx2), "the AVX2 kernels need a CPU with AVX2")
            jh_avx2_convert(format, source, destination, count)
        case .portable:
            portable()
        }
    }

    // MARK: - Scalar reference formulas (the definition the kernels are tested against)

    /// Reference float to 16-bit conversion: NaN to 0, clamp to [-1, 1], scale by 2^15, round half to even, saturate.
    public static func referenceInt16(_ x: Float) -> Int16 {
        Int16(referenceSignedInteger(x, bits: 16))
    }

    /// Reference float to 24-bit conversion; the result lies in [-8388608, 8388607].
    public static func referenceInt24(_ x: Float) -> Int32 {
        referenceSignedInteger(x, bits: 24)
    }

    /// Reference float to 32-bit conversion: +1.0 saturates to Int32.max because 2^31 does not fit.
    public static func referenceInt32(_ x: Float) -> Int32 {
        referenceSignedInteger(x, bits: 32)
    }

    /// Reference float to 8.24 fixed point: NaN to 0, scale by 2^24 without clamping, round half to even, saturate to Int32.
    public static func referenceFixed8_24(_ x: Float) -> Int32 {
        if x.isNaN { return 0 }
        // Scaling by a power of two is exact (or overflows to ±inf, which saturates below).
        let rounded = (x * 16_777_216).rounded(.toNearestOrEven)
        if rounded >= 2_147_483_648 { return .max }
        if rounded < -2_147_483_648 { return .min }
        return Int32(rounded)
    }

    /// Shared intN formula so the three integer references cannot drift apart.
    private static func referenceSignedInteger(_ x: Float, bits: Int) -> Int32 {
        if x.isNaN { return 0 }
        let clamped = min(max(x, -1), 1)
        // 2^(bits-1) is exact in Float, so the multiply only shifts the exponent.
        let limit = Float(sign: .plus, exponent: bits - 1, significand: 1)
        let rounded = (clamped * limit).rounded(.toNearestOrEven)
        // Only the top can overflow: after the clamp the bottom is exactly -limit.
        if rounded >= limit { return Int32(truncatingIfNeeded: (Int64(1) << (bits - 1)) - 1) }
        return Int32(rounded)
    }

    // MARK: - Vector plumbing

    // 8 lanes = one AVX or two SSE registers. Measured against 16 lanes on the x86_64
    // (SSE2 baseline) build: equal for most formats and ~1.5x faster for int16, whose
    // 32-to-16-bit narrowing maps onto a single pack instruction at this width.
    private typealias Vector<Scalar: SIMDScalar> = SIMD8<Scalar>
    // Computed constants rather than `static let`, so they fold into the loops with no lazy-init check.
    private static var width: Int { Vector<Float>.scalarCount }

    /// 1.5 * 2^23: adding it to |y| <= 2^22 leaves a float whose ulp is exactly 1.
    private static var magic: Float { 12_582_912 }
    /// The bit pattern of `magic`; subtracting it from the sum's bits yields the rounded integer.
    private static var magicBits: Int32 { 0x4B40_0000 }

    /// Loads a full vector from possibly unaligned memory (JACK buffers are only float-aligned).
    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>) -> Vector<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: Vector<Float>.self)
    }

    /// Loads `lanes` floats (the tail), zero-filling the rest so the same vector code handles tails.
    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>, lanes: Int) -> Vector<Float> {
        if lanes == width { return load(pointer) }
        var vector = Vector<Float>()
        for lane in 0..<lanes { vector[lane] = pointer[lane] }
        return vector
    }

    /// Stores the first `lanes` lanes to a typed pointer, as one unaligned vector store when full.
    @inline(__always)
    private static func store<T: SIMDScalar>(_ vector: Vector<T>, to pointer: UnsafeMutablePointer<T>, lanes: Int) {
        if lanes == width {
            UnsafeMutableRawPointer(pointer).storeBytes(of: vector, as: Vector<T>.self)
        } else {
            for lane in 0..<lanes { pointer[lane] = vector[lane] }
        }
    }

    /// Converts one channel vector by vector; the tail goes through the same `convert` so it cannot diverge.
    @inline(__always)
    private static func forEachVector<Output>(
        _ source: UnsafePointer<Float>, count: Int,
        _ convert: (Vector<Float>) -> Output,
        _ body: (_ output: Output, _ offset: Int, _ lanes: Int) -> Void
    ) {
        precondition(count >= 0, "negative sample count")
        var offset = 0
        while offset + width <= count {
            body(convert(load(source + offset)), offset, width)
            offset += width
        }
        if offset < count {
            let lanes = count - offset
            body(convert(load(source + offset, lanes: lanes)), offset, lanes)
        }
    }

    /// Replaces NaN lanes with 0 (NaN is the only value not equal to itself).
    @inline(__always)
    private static func zeroingNaN(_ x: Vector<Float>) -> Vector<Float> {
        x.replacing(with: 0, where: x .!= x)
    }

    /// Clamps lanes to [lower, upper] with compare-and-select; NaN must already be gone.
    @inline(__always)
    private static func clamped(_ x: Vector<Float>, _ lower: Float, _ upper: Float) -> Vector<Float> {
        x.replacing(with: lower, where: x .< lower).replacing(with: upper, where: x .> upper)
    }

    /// Rounds |y| <= 2^22 to the nearest integer, ties to even, via the magic-number trick.
    @inline(__always)
    private static func roundSmall(_ y: Vector<Float>) -> (integer: Vector<Int32>, float: Vector<Float>) {
        // y + 1.5*2^23 lands in [2^23, 2^24], where consecutive floats are exactly 1 apart,
        // so the FPU rounds the fraction away (half to even, because 1.5*2^23 is even).
        let sum = y + magic
        let integer = unsafeBitCast(sum, to: Vector<Int32>.self) &- magicBits
        return (integer, sum - magic)
    }

    /// Rounds |y| <= 2^31 to the nearest integer, ties to even; y == +2^31 wraps to Int32.min (callers saturate).
    @inline(__always)
    private static func roundToInt32(_ y: Vector<Float>) -> Vector<Int32> {
        // Split y = high * 2^16 + low: `high` is y / 2^16 rounded (|high| <= 2^15), and
        // low = y - high * 2^16 is exact (it is y's low-order bits) with |low| <= 2^15.
        // Both fit roundSmall, and rounding low equals rounding y because high * 2^16
        // is an even integer, so even ties resolve identically. Integer wrap-around in
        // the recombination is harmless: the true result fits Int32 (except +2^31).
        let high = roundSmall(y * (1 / 65_536))
        let low = roundSmall(y - high.float * 65_536)
        return (high.integer &<< 16) &+ low.integer
    }

    /// Vector form of referenceInt16 (widened to Int32 lanes).
    @inline(__always)
    private static func int16Lanes(_ x: Vector<Float>) -> Vector<Int32> {
        // Clamping the top to 32767/32768 instead of 1 folds the saturation into the
        // clamp: every x in (32767/32768, 1] would round to 32767 or 32768 and saturate to 32767.
        let y = clamped(zeroingNaN(x), -1, 32_767.0 / 32_768.0) * 32_768
        return roundSmall(y).integer
    }

    /// Vector form of referenceInt16.
    @inline(__always)
    private static func int16Vector(_ x: Vector<Float>) -> Vector<Int16> {
        Vector<Int16>(truncatingIfNeeded: int16Lanes(x))
    }

    /// Vector form of referenceInt24.
    @inline(__always)
    private static func int24Vector(_ x: Vector<Float>) -> Vector<Int32> {
        // Same trick as int16: 1 - 2^-23 is exactly representable and maps to 8388607.
        let y = clamped(zeroingNaN(x), -1, 8_388_607.0 / 8_388_608.0) * 8_388_608
        return roundToInt32(y)
    }

    /// Vector form of referenceInt32.
    @inline(__always)
    private static func int32Vector(_ x: Vector<Float>) -> Vector<Int32> {
        // 1 - 2^-31 is not a Float, so the top cannot be clamped away; mask it instead.
        let y = clamped(zeroingNaN(x), -1, 1) * 2_147_483_648
        return roundToInt32(y).replacing(with: .max, where: y .>= 2_147_483_648)
    }

    /// Vector form of referenceFixed8_24.
    @inline(__always)
    private static func fixed8_24Vector(_ x: Vector<Float>) -> Vector<Int32> {
        // No clamp (8.24 spans [-128, 128)); out-of-range and infinite lanes compute
        // garbage in roundToInt32 (never a trap) and are overwritten by the masks.
        let y = zeroingNaN(x) * 16_777_216
        return roundToInt32(y)
            .replacing(with: .max, where: y .>= 2_147_483_648)
            .replacing(with: .min, where: y .< -2_147_483_648)
    }

    // MARK: - Per-channel kernels

    /// Converts `count` floats to 16-bit PCM, matching referenceInt16 exactly.
    public static func floatToInt16(
        _ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int16>, count: Int,
        using kernels: Kernels = activeKernels
    ) {
        convert(kernels, JH_WIRE_INT16, source, destination, count: count) {
            forEachVector(source, count: count, { int16Vector($0) }) { store($0, to: destination + $1, lanes: $2) }
        }
    }

    /// Converts `count` floats to 24-bit PCM in the low bits of Int32, matching referenceInt24 exactly.
    public static func floatToInt24(
        _ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int32>, count: Int,
        using kernels: Kernels = activeKernels
    ) {
        convert(kernels, JH_WIRE_INT24_IN_INT32, source, destination, count: count) {
            forEachVector(source, count: count, { int24Vector($0) }) { store($0, to: destination + $1, lanes: $2) }
        }
    }

    /// Same as floatToInt24 but shifted left by 8 (what libsndfile's sf_write_int expects for 24-bit PCM).
    public static func floatToInt24LeftJustified(
        _ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int32>,
        count: Int, using kernels: Kernels = activeKernels
    ) {
        // libsndfile treats int data as full-scale 32-bit and drops the low byte for 24-bit files.
        convert(kernels, JH_WIRE_INT24_LEFT_JUSTIFIED, source, destination, count: count) {
            forEachVector(source, count: count, { int24Vector($0) &<< 8 }) { store($0, to: destination + $1, lanes: $2) }
        }
    }

    /// Converts `count` floats to 32-bit PCM, matching referenceInt32 exactly.
    public static func floatToInt32(
        _ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int32>, count: Int,
        using kernels: Kernels = activeKernels
    ) {
        convert(kernels, JH_WIRE_INT32, source, destination, count: count) {
            forEachVector(source, count: count, { int32Vector($0) }) { store($0, to: destination + $1, lanes: $2) }
        }
    }

    /// Converts `count` floats to 8.24 fixed point, matching referenceFixed8_24 exactly.
    public static func floatToFixed8_24(
        _ source: UnsafePointer<Float>, _ destination: UnsafeMutablePointer<Int32>, count: Int,
        using kernels: Kernels = activeKernels
    ) {
        convert(kernels, JH_WIRE_FIXED8_24, source, destination, count: count) {
            forEachVector(source, count: count, { fixed8_24Vector($0) }) { store($0, to: destination + $1, lanes: $2) }
        }
    }

    // MARK: - Interleaving and wire encoding

    /// Interleaves planar float channels: destination[frame * channels + channel].
    public static func interleave(
        _ channels: UnsafeBufferPointer<UnsafePointer<Float>>, frames: Int,
        into destination: UnsafeMutablePointer<Float>, using kernels: Kernels = activeKernels
    ) {
        // The AVX2 kernels exist only on x86, which is little-endian: native floats are wire floats.
        if kernels == .avx2, !channels.isEmpty {
            encodeAVX2(JH_WIRE_FLOAT32, channels, frames: frames, interleaved: true, into: UnsafeMutableRawPointer(destination))
            return
        }
        layOut(NativeFloatLayout.self, channels, frames: frames, interleaved: true, into: UnsafeMutableRawPointer(destination))
    }

    /// Encodes planar channels as 24-bit samples left-justified in Int32 (libsndfile's int
    /// data for 24-bit files), interleaved or one run per channel.
    /// `destination` holds `channels.count * frames` values; `scratch` (same size) is used by
    /// the portable kernels to interleave and is not read afterwards.
    public static func encodeInt24LeftJustified(
        _ channels: UnsafeBufferPointer<UnsafePointer<Float>>, frames: Int,
        interleaved: Bool, into destination: UnsafeMutablePointer<Int32>,
        scratch: UnsafeMutablePointer<Int32>, using kernels: Kernels = activeKernels
    ) {
        precondition(frames >= 0, "negative frame count")
        guard !channels.isEmpty, frames > 0 else { return }
        if kernels == .avx2 {
            encodeAVX2(
                JH_WIRE_INT24_LEFT_JUSTIFIED, channels, frames: frames, interleaved: interleaved,
                into: UnsafeMutableRawPointer(destination))
            return
        }
        let channelCount = channels.count
        for channel in 0..<channelCount {
            let target = interleaved ? scratch + channel * frames : destination + channel * frames
            floatToInt24LeftJustified(channels[channel], target, count: frames, using: .portable)
        }
        if interleaved {
            for frame in 0..<frames {
                for channel in 0..<channelCount { destination[frame * channelCount + channel] = scratch[channel * frames + frame] }
            }
        }
    }

    /// Runs the AVX2 encoder after checking the CPU and the arguments.
    private static func encodeAVX2(
        _ format: jh_wire_format, _ channels: UnsafeBufferPointer<UnsafePointer<Float>>,
        frames: Int, interleaved: Bool, into destination: UnsafeMutableRawPointer
    ) {
        precondition(frames >= 0, "negative frame count")
        precondition(isSupported(.avx2), "the AVX2 kernels need a CPU with AVX2")
        withCChannels(channels) { jh_avx2_encode(format, $0, channels.count, frames, interleaved ? 1 : 0, destination) }
    }

    /// Number of bytes `encode` writes.
    public static func encodedByteCount(channels: Int, frames: Int, format: SampleFormat) -> Int {
        channels * frames * format.bytesPerSample
    }

    /// Encodes planar float channels into little-endian bytes of `format`.
    /// interleaved == true: frame-major (L R L R ...). false: channel-major blocks (all of channel 0's `frames` samples, then channel 1's ...).
    /// int24 is packed 3 bytes per sample, little-endian. `destination` must hold encodedByteCount bytes.
    public static func encode(
        _ channels: UnsafeBufferPointer<UnsafePointer<Float>>, frames: Int, format: SampleFormat,
        interleaved: Bool, into destination: UnsafeMutableRawPointer, using kernels: Kernels = activeKernels
    ) {
        if kernels == .avx2 {
            guard !channels.isEmpty else { return }
            encodeAVX2(wireFormat(format), channels, frames: frames, interleaved: interleaved, into: destination)
            return
        }
        // Dispatch once per call, so each layout is a fully specialised loop with no per-sample branching.
        switch format {
        case .float32: layOut(Float32Layout.self, channels, frames: frames, interleaved: interleaved, into: destination)
        case .int16: layOut(Int16Layout.self, channels, frames: frames, interleaved: interleaved, into: destination)
        case .int24: layOut(Int24Layout.self, channels, frames: frames, interleaved: interleaved, into: destination)
        case .int32: layOut(Int32Layout.self, channels, frames: frames, interleaved: interleaved, into: destination)
        case .fixed8_24: layOut(Fixed8_24Layout.self, channels, frames: frames, interleaved: interleaved, into: destination)
        }
    }

    /// How one output format converts a vector and writes it as bytes.
    ///
    /// Writes go through raw `storeBytes`, which allows unaligned addresses and never
    /// rebinds memory, so callers may pass any byte buffer (e.g. an odd offset into [UInt8]).
    private protocol WireLayout {
        associatedtype Lane: SIMDScalar
        /// Bytes one sample occupies in the output.
        static var bytesPerSample: Int { get }
        /// Converts a vector of floats to output lanes.
        static func convert(_ x: Vector<Float>) -> Vector<Lane>
        /// Writes the first `lanes` lanes contiguously (packed) at `pointer`.
        static func store(_ vector: Vector<Lane>, lanes: Int, to pointer: UnsafeMutableRawPointer)
        /// Writes one sample at `pointer`.
        static func store(_ sample: Lane, to pointer: UnsafeMutableRawPointer)
    }

    /// Native-endian floats, for `interleave` (typed output, not wire bytes).
    private enum NativeFloatLayout: WireLayout {
        static var bytesPerSample: Int { 4 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Float> { x }
        @inline(__always) static func store(_ vector: Vector<Float>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            if lanes == width {
                pointer.storeBytes(of: vector, as: Vector<Float>.self)
            } else {
                for lane in 0..<lanes { store(vector[lane], to: pointer + lane * 4) }
            }
        }
        @inline(__always) static func store(_ sample: Float, to pointer: UnsafeMutableRawPointer) {
            pointer.storeBytes(of: sample, as: Float.self)
        }
    }

    /// Stores vectors of 32-bit lanes little-endian; on big-endian hosts lane by lane, byte-swapped.
    @inline(__always)
    private static func storeLittleEndian32<T: SIMDScalar>(
        _ vector: Vector<T>, lanes: Int, to pointer: UnsafeMutableRawPointer, _ bits: (T) -> UInt32
    ) {
        #if _endian(little)
            if lanes == width {
                pointer.storeBytes(of: vector, as: Vector<T>.self)
                return
            }
        #endif
        for lane in 0..<lanes { pointer.storeBytes(of: bits(vector[lane]).littleEndian, toByteOffset: lane * 4, as: UInt32.self) }
    }

    /// Little-endian IEEE float32.
    private enum Float32Layout: WireLayout {
        static var bytesPerSample: Int { 4 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Float> { x }
        @inline(__always) static func store(_ vector: Vector<Float>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            storeLittleEndian32(vector, lanes: lanes, to: pointer) { $0.bitPattern }
        }
        @inline(__always) static func store(_ sample: Float, to pointer: UnsafeMutableRawPointer) {
            pointer.storeBytes(of: sample.bitPattern.littleEndian, as: UInt32.self)
        }
    }

    /// Little-endian signed 16-bit.
    private enum Int16Layout: WireLayout {
        static var bytesPerSample: Int { 2 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Int16> { int16Vector(x) }
        @inline(__always) static func store(_ vector: Vector<Int16>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            #if _endian(little)
                if lanes == width {
                    pointer.storeBytes(of: vector, as: Vector<Int16>.self)
                    return
                }
            #endif
            for lane in 0..<lanes { store(vector[lane], to: pointer + lane * 2) }
        }
        @inline(__always) static func store(_ sample: Int16, to pointer: UnsafeMutableRawPointer) {
            pointer.storeBytes(of: sample.littleEndian, as: Int16.self)
        }
    }

    /// Little-endian signed 24-bit, packed 3 bytes per sample.
    private enum Int24Layout: WireLayout {
        static var bytesPerSample: Int { 3 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Int32> { int24Vector(x) }
        @inline(__always) static func store(_ vector: Vector<Int32>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            guard lanes == width else {
                for lane in 0..<lanes { store(vector[lane], to: pointer + lane * 3) }
                return
            }
            // Pack in two widening steps using only lane-wise shifts/ors (no byte shuffles,
            // which baseline SSE2 lacks): sample pairs become 48-bit values in 64-bit lanes,
            // then pairs of pairs become one 64-bit + one 32-bit store per 4 samples (12 bytes).
            let bits = Vector<UInt32>(truncatingIfNeeded: vector) & 0x00FF_FFFF
            let pairs =
                SIMD4<UInt64>(truncatingIfNeeded: bits.evenHalf)
                | SIMD4<UInt64>(truncatingIfNeeded: bits.oddHalf) &<< 24
            let low = pairs.evenHalf | pairs.oddHalf &<< 48
            let high = SIMD2<UInt32>(truncatingIfNeeded: pairs.oddHalf &>> 16)
            for quad in 0..<(width / 4) {
                pointer.storeBytes(of: low[quad].littleEndian, toByteOffset: 12 * quad, as: UInt64.self)
                pointer.storeBytes(of: high[quad].littleEndian, toByteOffset: 12 * quad + 8, as: UInt32.self)
            }
        }
        @inline(__always) static func store(_ sample: Int32, to pointer: UnsafeMutableRawPointer) {
            // Exactly 3 bytes: a 4-byte store would clobber a neighbour already written.
            pointer.storeBytes(of: UInt16(truncatingIfNeeded: sample).littleEndian, as: UInt16.self)
            pointer.storeBytes(of: UInt8(truncatingIfNeeded: sample >> 16), toByteOffset: 2, as: UInt8.self)
        }
    }

    /// Little-endian signed 32-bit.
    private enum Int32Layout: WireLayout {
        static var bytesPerSample: Int { 4 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Int32> { int32Vector(x) }
        @inline(__always) static func store(_ vector: Vector<Int32>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            storeLittleEndian32(vector, lanes: lanes, to: pointer) { UInt32(bitPattern: $0) }
        }
        @inline(__always) static func store(_ sample: Int32, to pointer: UnsafeMutableRawPointer) {
            pointer.storeBytes(of: sample.littleEndian, as: Int32.self)
        }
    }

    /// Little-endian 8.24 fixed point in 32 bits.
    private enum Fixed8_24Layout: WireLayout {
        static var bytesPerSample: Int { 4 }
        @inline(__always) static func convert(_ x: Vector<Float>) -> Vector<Int32> { fixed8_24Vector(x) }
        @inline(__always) static func store(_ vector: Vector<Int32>, lanes: Int, to pointer: UnsafeMutableRawPointer) {
            storeLittleEndian32(vector, lanes: lanes, to: pointer) { UInt32(bitPattern: $0) }
        }
        @inline(__always) static func store(_ sample: Int32, to pointer: UnsafeMutableRawPointer) {
            pointer.storeBytes(of: sample.littleEndian, as: Int32.self)
        }
    }

    /// Interleaves two vectors lane by lane: (a0 b0 a1 b1 ...) as a low and a high vector.
    @inline(__always)
    private static func zip(_ a: Vector<Float>, _ b: Vector<Float>) -> (low: Vector<Float>, high: Vector<Float>) {
        // Constant lane indices after unrolling; LLVM turns this into unpack shuffles.
        var low = Vector<Float>(), high = Vector<Float>()
        let half = width / 2
        for lane in 0..<half {
            low[2 * lane] = a[lane]
            low[2 * lane + 1] = b[lane]
            high[2 * lane] = a[half + lane]
            high[2 * lane + 1] = b[half + lane]
        }
        return (low, high)
    }

    /// Floats in the interleaving scratch: 1 KiB, small enough that
    /// withUnsafeTemporaryAllocation always places it on the stack.
    private static var scratchCapacity: Int { 256 }

    /// Greatest common divisor, for picking block sizes that are whole vectors.
    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// Converts `count` contiguous floats and writes them packed at `destination`.
    @inline(__always)
    private static func convertContiguous<Layout: WireLayout>(
        _: Layout.Type, _ source: UnsafePointer<Float>, count: Int, to destination: UnsafeMutableRawPointer
    ) {
        let bytes = Layout.bytesPerSample
        forEachVector(source, count: count, { Layout.convert($0) }) { vector, offset, lanes in
            Layout.store(vector, lanes: lanes, to: destination + offset * bytes)
        }
    }

    /// Converts and writes planar channels in `Layout`'s format, interleaved or channel-major.
    private static func layOut<Layout: WireLayout>(
        _: Layout.Type, _ channels: UnsafeBufferPointer<UnsafePointer<Float>>,
        frames: Int, interleaved: Bool, into destination: UnsafeMutableRawPointer
    ) {
        precondition(frames >= 0, "negative frame count")
        let channelCount = channels.count
        let bytes = Layout.bytesPerSample
        guard channelCount > 0, frames > 0 else { return }

        if !interleaved || channelCount == 1 {
            // Channel-major (one channel is the same either way): contiguous vector stores.
            for channel in 0..<channelCount {
                convertContiguous(
                    Layout.self, channels[channel], count: frames,
                    to: destination + channel * frames * bytes)
            }
        } else if channelCount == 2 {
            // Stereo, the common streaming case: interleave the *floats* in registers, then
            // convert the interleaved vectors (conversion is lane-wise, so order does not
            // matter) and store them contiguously. Zipping floats before narrowing keeps the
            // shuffles on 32-bit lanes, which every SIMD unit handles natively.
            let left = channels[0], right = channels[1]
            var frame = 0
            while frame < frames {
                let lanes = min(width, frames - frame)
                let pair = zip(load(left + frame, lanes: lanes), load(right + frame, lanes: lanes))
                let base = destination + 2 * frame * bytes
                Layout.store(Layout.convert(pair.low), lanes: min(2 * lanes, width), to: base)
                if lanes > width / 2 {
                    Layout.store(Layout.convert(pair.high), lanes: 2 * lanes - width, to: base + width * bytes)
                }
                frame += width
            }
        } else {
            // Three or more channels: gather a block of frames into a small interleaved float
            // scratch (cheap scalar copies), then convert that block with the contiguous vector
            // path. Scattering lanes of converted vectors one by one measured about 2x slower.
            withUnsafeTemporaryAllocation(of: Float.self, capacity: scratchCapacity) { buffer in
                let scratch = buffer.baseAddress!
                if channelCount <= scratchCapacity {
                    // Prefer blocks whose sample count is a whole number of vectors (no tails).
                    var framesPerBlock = scratchCapacity / channelCount
                    let step = width / gcd(channelCount, width)
                    if framesPerBlock >= step { framesPerBlock -= framesPerBlock % step }
                    var frame = 0
                    while frame < frames {
                        let blockFrames = min(framesPerBlock, frames - frame)
                        for channel in 0..<channelCount {
                            // Pointer stepping instead of index arithmetic: no overflow checks in the loop.
                            var source = channels[channel] + frame
                            var target = scratch + channel
                            for _ in 0..<blockFrames {
                                target.pointee = source.pointee
                                source += 1
                                target += channelCount
                            }
                        }
                        convertContiguous(
                            Layout.self, scratch, count: blockFrames * channelCount,
                            to: destination + frame * channelCount * bytes)
                        frame += blockFrames
                    }
                } else {
                    // More channels than the scratch holds: a frame is split into runs of
                    // channels; each run is contiguous in the output.
                    for frame in 0..<frames {
                        var first = 0
                        while first < channelCount {
                            let run = min(scratchCapacity, channelCount - first)
                            for index in 0..<run { scratch[index] = channels[first + index][frame] }
                            convertContiguous(
                                Layout.self, scratch, count: run,
                                to: destination + (frame * channelCount + first) * bytes)
                            first += run
                        }
                    }
                }
            }
        }
    }
}
