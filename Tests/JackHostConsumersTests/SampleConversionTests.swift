// SampleConversionTests.swift
//
// Checks the SIMD conversion kernels -- both implementations, the portable Swift ones
// and, on a CPU that has AVX2, the C ones -- lane by lane against the scalar reference
// formulas, pins the reference formulas themselves to hand-computed values (so the
// comparison is not circular), and decodes `encode`'s bytes by hand.

import XCTest

@testable import JackHostConsumers

final class SampleConversionTests: XCTestCase {
    // MARK: - Helpers

    /// Every kernel implementation this CPU can run; each test checks all of them.
    private static var kernelsUnderTest: [SampleConversion.Kernels] {
        SampleConversion.Kernels.allCases.filter(SampleConversion.isSupported)
    }

    /// Tiny deterministic xorshift64 generator, so failures reproduce exactly.
    private struct XorShift64 {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        /// A mix of in-range audio, overs, 16/24-bit rounding ties, the 8.24 grid and arbitrary bit patterns.
        mutating func nextSample() -> Float {
            let bits = next()
            switch bits % 6 {
            case 0: return Float(Int32(truncatingIfNeeded: bits >> 32)) / 2_147_483_648  // [-1, 1)
            case 1: return Float(Int32(truncatingIfNeeded: bits >> 32)) / 1_073_741_824  // [-2, 2), overs
            case 2: return (Float(Int16(truncatingIfNeeded: bits >> 40)) + 0.5) / 32_768  // 16-bit ties
            case 3: return (Float(Int32(truncatingIfNeeded: bits >> 40) >> 8) + 0.5) / 8_388_608  // 24-bit ties
            case 4: return Float(Int32(truncatingIfNeeded: bits >> 32)) / 16_777_216  // 8.24 grid, [-128, 128)
            default: return Float(bitPattern: UInt32(truncatingIfNeeded: bits >> 32))  // anything, incl. NaN/inf
            }
        }
    }

    /// Values where rounding, clamping and saturation are easiest to get wrong.
    private static let edgeValues: [Float] = {
        let one: Float = 1
        let minusOne: Float = -1
        let limit8_24: Float = 128
        var values: [Float] = [
            0, -0.0, 1, -1, 0.5, -0.5, 0.25, -0.75,
            one.nextUp, one.nextDown, minusOne.nextUp, minusOne.nextDown, 2, -2,
            .infinity, -.infinity, .nan, -.nan, .signalingNaN,
            .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            Float.leastNormalMagnitude.nextDown, -Float.leastNormalMagnitude.nextDown,  // largest denormals
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            0.5 / 32_768, 1.5 / 32_768, 2.5 / 32_768, -0.5 / 32_768, -1.5 / 32_768, -2.5 / 32_768,
            32_767.5 / 32_768, -32_767.5 / 32_768, 32_766.5 / 32_768, -32_766.5 / 32_768,
            0.5 / 8_388_608, 1.5 / 8_388_608, -2.5 / 8_388_608, 8_388_606.5 / 8_388_608,
            0.5 / 16_777_216, 1.5 / 16_777_216, -1.5 / 16_777_216,
            limit8_24, -limit8_24, limit8_24.nextDown, limit8_24.nextUp, (-limit8_24).nextDown, (-limit8_24).nextUp,
            1e-10, -1e-10, 0.999_999, -0.999_999, 3.5, -1e30,
        ]
        values += values.map { -$0 }
        return values
    }()

    /// Runs `kernel` over `input`, with a canary element behind the output to catch overruns.
    private func run<T: Equatable>(
        _ input: [Float], canary: T,
        _ kernel: (UnsafePointer<Float>, UnsafeMutablePointer<T>, Int) -> Void,
        file: StaticString = #filePath, line: UInt = #line
    ) -> [T] {
        // Allocated by hand: an empty array's buffer has no base address, but count 0 must work.
        let source = UnsafeMutablePointer<Float>.allocate(capacity: input.count + 1)
        defer { source.deallocate() }
        source.initialize(from: input, count: input.count)
        let destination = UnsafeMutablePointer<T>.allocate(capacity: input.count + 1)
        defer { destination.deallocate() }
        destination.initialize(repeating: canary, count: input.count + 1)
        kernel(source, destination, input.count)
        XCTAssertEqual(destination[input.count], canary, "kernel wrote past count \(input.count)", file: file, line: line)
        return Array(UnsafeBufferPointer(start: destination, count: input.count))
    }

    /// Compares a kernel with its reference lane by lane, reporting the first mismatches with their inputs.
    private func assertKernel<T: Equatable>(
        _ name: String, _ input: [Float], canary: T,
        _ kernel: (UnsafePointer<Float>, UnsafeMutablePointer<T>, Int) -> Void,
        matches reference: (Float) -> T,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let output = run(input, canary: canary, kernel, file: file, line: line)
        XCTAssertEqual(output.count, input.count, file: file, line: line)
        var mismatches = 0
        for (index, x) in input.enumerated() where output[index] != reference(x) {
            mismatches += 1
            if mismatches <= 5 {
                XCTFail(
                    "\(name)[\(index)] of \(input.count): x = \(x) (0x\(String(x.bitPattern, radix: 16))) gave \(output[index]), reference \(reference(x))",
                    file: file, line: line)
            }
        }
        XCTAssertEqual(mismatches, 0, "\(name): \(mismatches) mismatches", file: file, line: line)
    }

    /// All five kernels of every implementation against their references on one input.
    private func assertAllKernels(_ input: [Float], file: StaticString = #filePath, line: UInt = #line) {
        for kernels in Self.kernelsUnderTest {
            let tag = " (\(kernels))"
            assertKernel(
                "int16" + tag, input, canary: Int16(0x5A5A), { SampleConversion.floatToInt16($0, $1, count: $2, using: kernels) },
                matches: SampleConversion.referenceInt16, file: file, line: line)
            assertKernel(
                "int24" + tag, input, canary: Int32(0x5A5A_5A5A), { SampleConversion.floatToInt24($0, $1, count: $2, using: kernels) },
                matches: SampleConversion.referenceInt24, file: file, line: line)
            assertKernel(
                "int24<<8" + tag, input, canary: Int32(0x5A5A_5A5A),
                { SampleConversion.floatToInt24LeftJustified($0, $1, count: $2, using: kernels) },
                matches: { SampleConversion.referenceInt24($0) << 8 }, file: file, line: line)
            assertKernel(
                "int32" + tag, input, canary: Int32(0x5A5A_5A5A), { SampleConversion.floatToInt32($0, $1, count: $2, using: kernels) },
                matches: SampleConversion.referenceInt32, file: file, line: line)
            assertKernel(
                "8.24" + tag, input, canary: Int32(0x5A5A_5A5A), { SampleConversion.floatToFixed8_24($0, $1, count: $2, using: kernels) },
                matches: SampleConversion.referenceFixed8_24, file: file, line: line)
        }
    }

    /// Planar test channels owning their memory, with the pointer list `encode`/`interleave` take.
    private final class Channels {
        let samples: [[Float]]
        let frames: Int
        private let storage: [UnsafeMutablePointer<Float>]

        init(channels: Int, frames: Int, generator: inout XorShift64) {
            self.frames = frames
            samples = (0..<channels).map { _ in (0..<frames).map { _ in generator.nextSample() } }
            storage = samples.map { channel in
                let pointer = UnsafeMutablePointer<Float>.allocate(capacity: max(frames, 1))
                pointer.initialize(from: channel, count: frames)
                return pointer
            }
        }

        deinit { storage.forEach { $0.deallocate() } }

        func withPointers<R>(_ body: (UnsafeBufferPointer<UnsafePointer<Float>>) -> R) -> R {
            storage.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
        }
    }

    /// Decodes sample `index` of little-endian `format` bytes back to an integer (or float bit pattern).
    private func decode(_ bytes: [UInt8], index: Int, format: SampleFormat) -> Int64 {
        let size = format.bytesPerSample
        var value: UInt64 = 0
        for byte in 0..<size { value |= UInt64(bytes[index * size + byte]) << (8 * UInt64(byte)) }
        switch format {
        case .int16: return Int64(Int16(truncatingIfNeeded: value))
        case .int24: return value & 0x80_0000 != 0 ? Int64(value) - 0x100_0000 : Int64(value)  // sign-extend 24 bits
        case .int32, .fixed8_24: return Int64(Int32(truncatingIfNeeded: value))
        case .float32: return Int64(value)  // bit pattern, so NaN payloads compare exactly
        }
    }

    /// What `encode` must produce for one input sample, in `decode`'s representation.
    private func expected(_ x: Float, format: SampleFormat) -> Int64 {
        switch format {
        case .float32: return Int64(x.bitPattern)
        case .int16: return Int64(SampleConversion.referenceInt16(x))
        case .int24: return Int64(SampleConversion.referenceInt24(x))
        case .int32: return Int64(SampleConversion.referenceInt32(x))
        case .fixed8_24: return Int64(SampleConversion.referenceFixed8_24(x))
        }
    }

    // MARK: - SampleFormat

    func testSampleFormatParsesAllAcceptedNamesCaseInsensitively() {
        let accepted: [(String, SampleFormat)] = [
            ("float32", .float32), ("f32", .float32), ("float", .float32),
            ("int16", .int16), ("s16", .int16), ("16", .int16),
            ("int24", .int24), ("s24", .int24), ("24", .int24),
            ("int32", .int32), ("s32", .int32), ("32", .int32),
            ("8.24", .fixed8_24), ("fixed8.24", .fixed8_24), ("fixed824", .fixed8_24),
        ]
        for (name, format) in accepted {
            XCTAssertEqual(SampleFormat(name: name), format, name)
            XCTAssertEqual(SampleFormat(name: name.uppercased()), format, name.uppercased())
        }
        XCTAssertEqual(SampleFormat(name: "Float32"), .float32)
        XCTAssertEqual(SampleFormat(name: "FiXeD8.24"), .fixed8_24)
    }

    func testSampleFormatRejectsInvalidNames() {
        for name in [
            "", " ", "f64", "float64", "int8", "s8", "8", "u16", "int 16", "s16 ", " s24",
            "8.23", "8,24", "fixed", "24bit", "pcm", "int16x", "ｆ32",
        ] {
            XCTAssertNil(SampleFormat(name: name), "\"\(name)\" should not parse")
        }
    }

    func testSampleFormatCanonicalNamesAndSizes() {
        XCTAssertEqual(SampleFormat.allCases.map(\.name), ["f32", "s16", "s24", "s32", "8.24"])
        XCTAssertEqual(SampleFormat.allCases.map(\.bytesPerSample), [4, 2, 3, 4, 4])
        for format in SampleFormat.allCases {
            XCTAssertEqual(SampleFormat(name: format.name), format, "canonical name must round-trip")
        }
    }

    // MARK: - Reference formulas pinned to hand-computed values

    func testReferenceInt16KnownValues() {
        XCTAssertEqual(SampleConversion.referenceInt16(0), 0)
        XCTAssertEqual(SampleConversion.referenceInt16(-0.0), 0)
        XCTAssertEqual(SampleConversion.referenceInt16(1), 32_767)  // 32768 clipped
        XCTAssertEqual(SampleConversion.referenceInt16(-1), -32_768)
        XCTAssertEqual(SampleConversion.referenceInt16(0.5), 16_384)
        XCTAssertEqual(SampleConversion.referenceInt16(-0.5), -16_384)
        XCTAssertEqual(SampleConversion.referenceInt16(2), 32_767)
        XCTAssertEqual(SampleConversion.referenceInt16(-2), -32_768)
        XCTAssertEqual(SampleConversion.referenceInt16(.infinity), 32_767)
        XCTAssertEqual(SampleConversion.referenceInt16(-.infinity), -32_768)
        XCTAssertEqual(SampleConversion.referenceInt16(.nan), 0)
        XCTAssertEqual(SampleConversion.referenceInt16(.leastNonzeroMagnitude), 0)
        // Ties go to even.
        XCTAssertEqual(SampleConversion.referenceInt16(0.5 / 32_768), 0)
        XCTAssertEqual(SampleConversion.referenceInt16(1.5 / 32_768), 2)
        XCTAssertEqual(SampleConversion.referenceInt16(2.5 / 32_768), 2)
        XCTAssertEqual(SampleConversion.referenceInt16(-1.5 / 32_768), -2)
        XCTAssertEqual(SampleConversion.referenceInt16(32_766.5 / 32_768), 32_766)
        XCTAssertEqual(SampleConversion.referenceInt16(32_767.5 / 32_768), 32_767)  // rounds to 32768, saturates
        XCTAssertEqual(SampleConversion.referenceInt16(-32_767.5 / 32_768), -32_768)
    }

    func testReferenceInt24KnownValues() {
        XCTAssertEqual(SampleConversion.referenceInt24(1), 8_388_607)
        XCTAssertEqual(SampleConversion.referenceInt24(-1), -8_388_608)
        XCTAssertEqual(SampleConversion.referenceInt24(0.5), 4_194_304)
        XCTAssertEqual(SampleConversion.referenceInt24(Float(1).nextDown), 8_388_607)  // 2^23 - 0.5 -> 2^23, saturated
        XCTAssertEqual(SampleConversion.referenceInt24(.infinity), 8_388_607)
        XCTAssertEqual(SampleConversion.referenceInt24(-.infinity), -8_388_608)
        XCTAssertEqual(SampleConversion.referenceInt24(.nan), 0)
        XCTAssertEqual(SampleConversion.referenceInt24(0.5 / 8_388_608), 0)
        XCTAssertEqual(SampleConversion.referenceInt24(1.5 / 8_388_608), 2)
        XCTAssertEqual(SampleConversion.referenceInt24(-2.5 / 8_388_608), -2)
        XCTAssertEqual(SampleConversion.referenceInt24(8_388_606.5 / 8_388_608), 8_388_606)
    }

    func testReferenceInt32KnownValues() {
        XCTAssertEqual(SampleConversion.referenceInt32(1), .max)  // 2^31 does not fit
        XCTAssertEqual(SampleConversion.referenceInt32(-1), .min)
        XCTAssertEqual(SampleConversion.referenceInt32(0.5), 1_073_741_824)
        XCTAssertEqual(SampleConversion.referenceInt32(-0.5), -1_073_741_824)
        XCTAssertEqual(SampleConversion.referenceInt32(Float(1).nextDown), 2_147_483_520)  // (1 - 2^-24) * 2^31
        XCTAssertEqual(SampleConversion.referenceInt32(.infinity), .max)
        XCTAssertEqual(SampleConversion.referenceInt32(-.infinity), .min)
        XCTAssertEqual(SampleConversion.referenceInt32(.nan), 0)
        XCTAssertEqual(SampleConversion.referenceInt32(0.5 / 2_147_483_648), 0)
        XCTAssertEqual(SampleConversion.referenceInt32(1.5 / 2_147_483_648), 2)
        XCTAssertEqual(SampleConversion.referenceInt32(.leastNonzeroMagnitude), 0)
    }

    func testReferenceFixed8_24KnownValues() {
        XCTAssertEqual(SampleConversion.referenceFixed8_24(1), 16_777_216)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(-1), -16_777_216)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(0.5), 8_388_608)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(2), 33_554_432)  // no [-1, 1] clamp
        XCTAssertEqual(SampleConversion.referenceFixed8_24(-128), .min)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(128), .max)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(Float(128).nextDown), 2_147_483_520)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(Float(-128).nextDown), .min)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(.infinity), .max)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(-.infinity), .min)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(.nan), 0)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(0.5 / 16_777_216), 0)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(1.5 / 16_777_216), 2)
        XCTAssertEqual(SampleConversion.referenceFixed8_24(-1.5 / 16_777_216), -2)
    }

    // MARK: - Kernels against references

    func testKernelsMatchReferenceOnEdgeValues() {
        // Every edge value in every lane position: rotate the list so each value also hits the tail.
        let values = Self.edgeValues
        for rotation in 0..<17 {
            assertAllKernels(Array(values[rotation...] + values[..<rotation]))
        }
    }

    func testKernelsMatchReferenceOnEachEdgeValueAlone() {
        // Length-1 inputs go entirely through the tail path.
        for value in Self.edgeValues {
            assertAllKernels([value])
        }
    }

    func testKernelsMatchReferenceOnRandomValuesForAllLengthsUpTo67() {
        var generator = XorShift64(state: 0x9E37_79B9_7F4A_7C15)
        for length in 0...67 {
            for _ in 0..<4 {
                assertAllKernels((0..<length).map { _ in generator.nextSample() })
            }
        }
    }

    func testKernelsMatchReferenceAcrossFloatBitPatterns() {
        // A strided sweep of all 2^32 bit patterns: every exponent, both signs, NaN and inf.
        var input: [Float] = []
        var bits: UInt32 = 0
        while true {
            input.append(Float(bitPattern: bits))
            let (next, overflow) = bits.addingReportingOverflow(65_521)
            if overflow { break }
            bits = next
        }
        XCTAssertGreaterThan(input.count, 65_000)
        assertAllKernels(input)
    }

    func testKernelsAreExactForDenseRangesAroundFullScale() {
        // Consecutive floats just below/above ±1 and ±128, where clipping and the 2^31 edge live.
        var input: [Float] = []
        for start: Float in [1, -1, 128, -128, 0.5] {
            var up = start, down = start
            for _ in 0..<300 {
                input.append(up)
                input.append(down)
                up = up.nextUp
                down = down.nextDown
            }
        }
        assertAllKernels(input)
    }

    func testFixed8_24IsExactOnTheGrid() {
        // Every float that is a multiple of 2^-24 inside [-128, 128) must come back as exactly that multiple.
        var generator = XorShift64(state: 0xDEAD_BEEF_CAFE_F00D)
        var inputs: [Float] = []
        var expected: [Int32] = []
        for step in -4_096...4_096 {  // dense around zero, all exactly representable
            inputs.append(Float(step) / 16_777_216)
            expected.append(Int32(step))
        }
        for _ in 0..<20_000 {
            // Float(k) may round k, but the rounded value is still an integer multiple; use it.
            let k = Float(Int32(truncatingIfNeeded: generator.next() >> 32))
            guard k < 2_147_483_648 else { continue }
            inputs.append(k / 16_777_216)
            expected.append(Int32(k))
        }
        inputs.append(-128)
        expected.append(.min)
        inputs.append(Float(128).nextDown)
        expected.append(2_147_483_520)
        for kernels in Self.kernelsUnderTest {
            let output = run(inputs, canary: Int32(0x5A5A_5A5A)) { SampleConversion.floatToFixed8_24($0, $1, count: $2, using: kernels) }
            XCTAssertEqual(output, expected, "\(kernels)")
        }
        XCTAssertEqual(inputs.map(SampleConversion.referenceFixed8_24), expected)
    }

    func testInt24LeftJustifiedIsReferenceShiftedBy8() {
        var generator = XorShift64(state: 42)
        let input = (0..<67).map { _ in generator.nextSample() } + [1, -1, 0.5]
        for kernels in Self.kernelsUnderTest {
            let output = run(input, canary: Int32(0x5A5A_5A5A)) {
                SampleConversion.floatToInt24LeftJustified($0, $1, count: $2, using: kernels)
            }
            for (index, x) in input.enumerated() {
                XCTAssertEqual(output[index] & 0xFF, 0, "low byte must be zero (\(kernels))")
                XCTAssertEqual(output[index] >> 8, SampleConversion.referenceInt24(x), "\(kernels)")
            }
            XCTAssertEqual(output[input.count - 3], 0x7FFF_FF00)
            XCTAssertEqual(output[input.count - 2], Int32(bitPattern: 0x8000_0000))
            XCTAssertEqual(output[input.count - 1], 0x4000_0000)
        }
    }

    func testKernelsHandleUnalignedPointers() {
        // JACK buffers are float-aligned but not vector-aligned; start one float into an allocation.
        var generator = XorShift64(state: 7)
        let input = (0..<41).map { _ in generator.nextSample() }
        let source = UnsafeMutablePointer<Float>.allocate(capacity: 42)
        defer { source.deallocate() }
        (source + 1).initialize(from: input, count: 41)
        let destination = UnsafeMutablePointer<Int32>.allocate(capacity: 43)
        defer { destination.deallocate() }
        for kernels in Self.kernelsUnderTest {
            destination.initialize(repeating: 99, count: 43)
            SampleConversion.floatToInt24(source + 1, destination + 1, count: 41, using: kernels)
            XCTAssertEqual(destination[0], 99)
            XCTAssertEqual(destination[42], 99)
            XCTAssertEqual(
                Array(UnsafeBufferPointer(start: destination + 1, count: 41)),
                input.map(SampleConversion.referenceInt24), "\(kernels)")
        }
    }

    // MARK: - Interleave

    func testInterleave() {
        var generator = XorShift64(state: 0x1234_5678)
        for kernels in Self.kernelsUnderTest {
            for channelCount in [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64] {
                for frames in [0, 1, 7, 8, 15, 16, 17, 33, 67, 300] {
                    let channels = Channels(channels: channelCount, frames: frames, generator: &generator)
                    let total = channelCount * frames
                    let output = UnsafeMutablePointer<Float>.allocate(capacity: total + 1)
                    defer { output.deallocate() }
                    output.initialize(repeating: 12_345, count: total + 1)
                    channels.withPointers { SampleConversion.interleave($0, frames: frames, into: output, using: kernels) }
                    var mismatches = 0
                    for frame in 0..<frames {
                        for channel in 0..<channelCount
                        where output[frame * channelCount + channel].bitPattern != channels.samples[channel][frame].bitPattern {
                            mismatches += 1
                        }
                    }
                    let context = "\(kernels): channels \(channelCount), frames \(frames)"
                    XCTAssertEqual(mismatches, 0, context)
                    XCTAssertEqual(output[total], 12_345, "wrote past the end: \(context)")
                }
            }
        }
    }

    func testInterleaveOfKnownStereoData() {
        let left: [Float] = [1, 2, 3]
        let right: [Float] = [-1, -2, -3]
        var output = [Float](repeating: 0, count: 6)
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                [l.baseAddress!, r.baseAddress!].withUnsafeBufferPointer { channels in
                    output.withUnsafeMutableBufferPointer {
                        SampleConversion.interleave(channels, frames: 3, into: $0.baseAddress!, using: .portable)
                    }
                }
            }
        }
        XCTAssertEqual(output, [1, -1, 2, -2, 3, -3])
    }

    // MARK: - Encode

    func testEncodedByteCount() {
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 2, frames: 100, format: .float32), 800)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 2, frames: 100, format: .int16), 400)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 2, frames: 100, format: .int24), 600)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 3, frames: 7, format: .int32), 84)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 3, frames: 7, format: .fixed8_24), 84)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 0, frames: 7, format: .int24), 0)
        XCTAssertEqual(SampleConversion.encodedByteCount(channels: 5, frames: 0, format: .int24), 0)
    }

    /// Encodes random channels and checks every decoded sample, plus guard bytes on both sides.
    private func assertEncode(
        channelCount: Int, frames: Int, format: SampleFormat, interleaved: Bool,
        byteOffset: Int, generator: inout XorShift64
    ) {
        for kernels in Self.kernelsUnderTest {
            assertEncode(
                channelCount: channelCount, frames: frames, format: format, interleaved: interleaved,
                byteOffset: byteOffset, kernels: kernels, generator: &generator)
        }
    }

    private func assertEncode(
        channelCount: Int, frames: Int, format: SampleFormat, interleaved: Bool,
        byteOffset: Int, kernels: SampleConversion.Kernels, generator: inout XorShift64
    ) {
        let channels = Channels(channels: channelCount, frames: frames, generator: &generator)
        let count = SampleConversion.encodedByteCount(channels: channelCount, frames: frames, format: format)
        let guardByte: UInt8 = 0xA5
        var buffer = [UInt8](repeating: guardByte, count: byteOffset + count + 8)
        buffer.withUnsafeMutableBytes { raw in
            channels.withPointers {
                SampleConversion.encode(
                    $0, frames: frames, format: format, interleaved: interleaved,
                    into: raw.baseAddress! + byteOffset, using: kernels)
            }
        }
        let context = "\(kernels) \(format) interleaved=\(interleaved) channels=\(channelCount) frames=\(frames) offset=\(byteOffset)"
        XCTAssertTrue(buffer[..<byteOffset].allSatisfy { $0 == guardByte }, "wrote before start: \(context)")
        XCTAssertTrue(buffer[(byteOffset + count)...].allSatisfy { $0 == guardByte }, "wrote past end: \(context)")
        let bytes = Array(buffer[byteOffset..<(byteOffset + count)])
        var mismatches = 0
        for channel in 0..<channelCount {
            for frame in 0..<frames {
                let index = interleaved ? frame * channelCount + channel : channel * frames + frame
                let x = channels.samples[channel][frame]
                if decode(bytes, index: index, format: format) != expected(x, format: format) {
                    mismatches += 1
                    if mismatches <= 3 {
                        XCTFail(
                            "\(context): channel \(channel) frame \(frame) x=\(x) decoded \(decode(bytes, index: index, format: format)), expected \(expected(x, format: format))"
                        )
                    }
                }
            }
        }
        XCTAssertEqual(mismatches, 0, context)
    }

    func testEncodeEveryFormatInterleavedAndPlanar() {
        var generator = XorShift64(state: 0x0BAD_C0DE_1234_5678)
        for format in SampleFormat.allCases {
            for interleaved in [true, false] {
                for channelCount in [1, 2, 3, 4, 6, 8, 9, 16, 23] {
                    for frames in [0, 1, 5, 8, 15, 16, 17, 31, 33, 64, 67, 100] {
                        assertEncode(
                            channelCount: channelCount, frames: frames, format: format,
                            interleaved: interleaved, byteOffset: 0, generator: &generator)
                    }
                }
            }
        }
    }

    func testEncodeToUnalignedDestination() {
        // Raw byte buffers may start anywhere (e.g. after a header); encode must not assume alignment.
        var generator = XorShift64(state: 99)
        for format in SampleFormat.allCases {
            for interleaved in [true, false] {
                for byteOffset in [1, 2, 3] {
                    assertEncode(
                        channelCount: 2, frames: 37, format: format, interleaved: interleaved,
                        byteOffset: byteOffset, generator: &generator)
                    assertEncode(
                        channelCount: 5, frames: 37, format: format, interleaved: interleaved,
                        byteOffset: byteOffset, generator: &generator)
                }
            }
        }
    }

    func testEncodeManyChannels() {
        // More channels than a single interleaving block holds.
        var generator = XorShift64(state: 2_024)
        for format in SampleFormat.allCases {
            for channelCount in [64, 100, 257, 300] {
                assertEncode(
                    channelCount: channelCount, frames: 19, format: format, interleaved: true,
                    byteOffset: 0, generator: &generator)
            }
        }
    }

    func testEncodeZeroChannels() {
        for kernels in Self.kernelsUnderTest {
            var bytes = [UInt8](repeating: 0xEE, count: 4)
            bytes.withUnsafeMutableBytes { raw in
                let none: [UnsafePointer<Float>] = []
                none.withUnsafeBufferPointer {
                    SampleConversion.encode($0, frames: 64, format: .int24, interleaved: true, into: raw.baseAddress!, using: kernels)
                }
            }
            XCTAssertEqual(bytes, [0xEE, 0xEE, 0xEE, 0xEE], "\(kernels)")
        }
    }

    func testEncodeKnownStereoInt16AndInt24Bytes() {
        // Hand-written expected bytes, independent of the reference functions.
        let left: [Float] = [1, -1]
        let right: [Float] = [0.5, -0.5]
        for kernels in Self.kernelsUnderTest {
            func encoded(_ format: SampleFormat, interleaved: Bool) -> [UInt8] {
                var bytes = [UInt8](repeating: 0, count: SampleConversion.encodedByteCount(channels: 2, frames: 2, format: format))
                left.withUnsafeBufferPointer { l in
                    right.withUnsafeBufferPointer { r in
                        [l.baseAddress!, r.baseAddress!].withUnsafeBufferPointer { channels in
                            bytes.withUnsafeMutableBytes {
                                SampleConversion.encode(
                                    channels, frames: 2, format: format, interleaved: interleaved,
                                    into: $0.baseAddress!, using: kernels)
                            }
                        }
                    }
                }
                return bytes
            }
            // 32767, 16384, -32768, -16384
            XCTAssertEqual(encoded(.int16, interleaved: true), [0xFF, 0x7F, 0x00, 0x40, 0x00, 0x80, 0x00, 0xC0])
            // 32767, -32768, 16384, -16384
            XCTAssertEqual(encoded(.int16, interleaved: false), [0xFF, 0x7F, 0x00, 0x80, 0x00, 0x40, 0x00, 0xC0])
            // 8388607, 4194304, -8388608, -4194304
            XCTAssertEqual(
                encoded(.int24, interleaved: true),
                [0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x40, 0x00, 0x00, 0x80, 0x00, 0x00, 0xC0])
            // 1.0 as float32 is 0x3F800000.
            XCTAssertEqual(Array(encoded(.float32, interleaved: true).prefix(4)), [0x00, 0x00, 0x80, 0x3F])
            // 8.24: 1.0 -> 0x01000000.
            XCTAssertEqual(Array(encoded(.fixed8_24, interleaved: true).prefix(4)), [0x00, 0x00, 0x00, 0x01])
        }
    }

    func testEncodeInt24LeftJustifiedInterleavedAndPlanar() {
        // libsndfile's int data for 24-bit files: the reference shifted left by 8, in either layout.
        var generator = XorShift64(state: 0x5EED)
        for kernels in Self.kernelsUnderTest {
            for interleaved in [true, false] {
                for (channelCount, frames) in [(1, 9), (2, 17), (3, 8), (8, 16), (11, 37), (64, 64)] {
                    let channels = Channels(channels: channelCount, frames: frames, generator: &generator)
                    let total = channelCount * frames
                    let output = UnsafeMutablePointer<Int32>.allocate(capacity: total + 1)
                    let scratch = UnsafeMutablePointer<Int32>.allocate(capacity: total)
                    defer {
                        output.deallocate()
                        scratch.deallocate()
                    }
                    output.initialize(repeating: 0x5A5A_5A5A, count: total + 1)
                    channels.withPointers {
                        SampleConversion.encodeInt24LeftJustified(
                            $0, frames: frames, interleaved: interleaved,
                            into: output, scratch: scratch, using: kernels)
                    }
                    var mismatches = 0
                    for channel in 0..<channelCount {
                        for frame in 0..<frames {
                            let index = interleaved ? frame * channelCount + channel : channel * frames + frame
                            if output[index] != SampleConversion.referenceInt24(channels.samples[channel][frame]) << 8 { mismatches += 1 }
                        }
                    }
                    let context = "\(kernels) interleaved=\(interleaved) channels=\(channelCount) frames=\(frames)"
                    XCTAssertEqual(mismatches, 0, context)
                    XCTAssertEqual(output[total], 0x5A5A_5A5A, "wrote past the end: \(context)")
                }
            }
        }
    }

    func testActiveKernelsAreSupportedAndAVX2IsUsedWhereAvailable() throws {
        XCTAssertTrue(SampleConversion.isSupported(.portable))
        XCTAssertTrue(SampleConversion.isSupported(SampleConversion.activeKernels))
        // Unless the environment asked for the portable kernels, a CPU with AVX2 uses them.
        if ProcessInfo.processInfo.environment["JACKHOST_SIMD"] != "portable" {
            XCTAssertEqual(SampleConversion.activeKernels == .avx2, SampleConversion.isSupported(.avx2))
        }
        try XCTSkipUnless(SampleConversion.isSupported(.avx2), "this CPU has no AVX2: only the portable kernels were tested")
    }
}
