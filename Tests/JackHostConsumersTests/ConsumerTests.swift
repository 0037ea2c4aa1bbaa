import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// Feeds consumers without a server, by building blocks by hand (shared by this target's tests).
func withBlock(_ channels: [[Float]], sequence: UInt64 = 0, dropped: Int = 0, _ body: (AudioBlock) -> Void) {
    let pointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels.count)
    let copies = channels.map { channel -> UnsafeMutablePointer<Float> in
        let copy = UnsafeMutablePointer<Float>.allocate(capacity: max(1, channel.count))
        copy.initialize(from: channel, count: channel.count)
        return copy
    }
    for (index, copy) in copies.enumerated() { pointers[index] = UnsafePointer(copy) }
    defer {
        copies.forEach { $0.deallocate() }
        pointers.deallocate()
    }
    let view = AudioBufferListView(channels: pointers, channelCount: channels.count, frameCount: channels.first?.count ?? 0)
    body(
        AudioBlock(
            buffers: view, timestamp: .init(frameTime: 0, microseconds: 0, sequence: sequence, xrunSincePreviousCycle: false),
            droppedFramesBefore: dropped))
}

final class LevelMeterTests: XCTestCase {
    func testMeasureMatchesScalarFormulaIncludingTails() {
        for count in [0, 1, 7, 8, 9, 63, 64, 67] {
            let samples = (0..<count).map { Float(sin(Double($0) * 0.37)) * 1.2 }
            let result = samples.withUnsafeBufferPointer { LevelMeter.measure($0) }
            XCTAssertEqual(result.peak, samples.map { abs($0) }.max() ?? 0, "count \(count)")
            XCTAssertEqual(result.sumSquares, samples.reduce(0) { $0 + Double($1 * $1) }, accuracy: 1e-3)
            XCTAssertEqual(result.clips, samples.filter { abs($0) >= 1 }.count, "count \(count)")
        }
    }

    func testMeasureIsIdenticalWithBothKernelSets() throws {
        // Random bit patterns (NaN, infinities, denormals included) and audio-like values, at
        // lengths that exercise the vector body and the tail.
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        for count in [0, 5, 8, 64, 67, 256, 1000] {
            let samples: [Float] = (0..<count).map { index in
                let bits = next()
                return index % 3 == 0
                    ? Float(bitPattern: UInt32(truncatingIfNeeded: bits))
                    : Float(Int32(truncatingIfNeeded: bits >> 32)) / 1_500_000_000
            }
            let portable = samples.withUnsafeBufferPointer { LevelMeter.measure($0, using: .portable) }
            XCTAssertEqual(portable.clips, samples.filter { abs($0) >= 1 }.count, "count \(count)")
            guard SampleConversion.isSupported(.avx2) else { continue }
            let avx2 = samples.withUnsafeBufferPointer { LevelMeter.measure($0, using: .avx2) }
            XCTAssertEqual(avx2.peak.bitPattern, portable.peak.bitPattern, "peak, count \(count)")
            XCTAssertEqual(avx2.sumSquares.bitPattern, portable.sumSquares.bitPattern, "sum of squares, count \(count)")
            XCTAssertEqual(avx2.clips, portable.clips, "clips, count \(count)")
        }
        // A NaN after the peak in the same lane must not make the lane forget its peak.
        var lanes = [Float](repeating: 0, count: 24)
        lanes[0] = 0.9
        lanes[8] = .nan
        lanes[16] = 0.1
        for kernels in SampleConversion.Kernels.allCases where SampleConversion.isSupported(kernels) {
            let result = lanes.withUnsafeBufferPointer { LevelMeter.measure($0, using: kernels) }
            XCTAssertEqual(result.peak, 0.9, "\(kernels)")
        }
        try XCTSkipUnless(SampleConversion.isSupported(.avx2), "this CPU has no AVX2: only the portable meter was tested")
    }

    func testMetersWithEitherKernelSetReportIdenticalLevels() throws {
        try XCTSkipUnless(SampleConversion.isSupported(.avx2), "this CPU has no AVX2: one kernel set only")
        let portable = LevelMeter(kernels: .portable), avx2 = LevelMeter(kernels: .avx2)
        for meter in [portable, avx2] { try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 3)) }
        var state: UInt32 = 12345
        for frames in [64, 61, 1024, 3] {
            let channels: [[Float]] = (0..<3).map { _ in
                (0..<frames).map { _ in
                    state = state &* 1_664_525 &+ 1_013_904_223
                    return Float(Int32(bitPattern: state)) / 1.9e9
                }
            }
            withBlock(channels) { block in
                portable.process(block)
                avx2.process(block)
            }
        }
        XCTAssertEqual(portable.takeSnapshot(), avx2.takeSnapshot())
    }

    func testSineLevelsAndClips() throws {
        let meter = LevelMeter()
        try meter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let sine = (0..<4800).map { 0.5 * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let clipped = (0..<4800).map { $0 % 100 == 0 ? Float(1.0) : 0 }
        withBlock([sine, clipped]) { meter.process($0) }
        let snapshot = meter.takeSnapshot()
        XCTAssertEqual(LevelMeter.dB(snapshot[0].peak), -6.0206, accuracy: 0.001)
        XCTAssertEqual(LevelMeter.dB(snapshot[0].rms), -9.0309, accuracy: 0.01)
        XCTAssertEqual(snapshot[1].clips, 48)
        withBlock([[0, 0], [0, 0]]) { meter.process($0) }
        let next = meter.takeSnapshot()[0]
        XCTAssertEqual(next.peak, 0, "a snapshot starts a new window from the next cycle")
        XCTAssertEqual(next.rms, 0, "the window's RMS covers only the frames since the last snapshot")
        XCTAssertEqual(LevelMeter.dB(meter.totals()[0].overallPeak), -6.0206, accuracy: 0.001, "totals persist")
        let summary = MeterDisplay.summary(levels: meter.totals(), counters: .init(droppedFrames: 5, xruns: 2))
        XCTAssertTrue(summary.contains("in_1"))
        XCTAssertTrue(summary.contains("-6.02"))
        XCTAssertTrue(summary.hasPrefix("channel  peak_dBFS  rms_dBFS  clips  dropped  skipped  xruns"))
    }
}

final class RecorderTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func testDroppedFramesBecomeSilenceAndSplitsAreExact() throws {
        let path = directory.appendingPathComponent("take.wav").path
        let recorder = Recorder(path: path, sampleFormat: .int16, split: .seconds(0.01))  // 480 frames per file
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let ramp = (0..<400).map { Float($0) / 32768 }
        withBlock([ramp, ramp], sequence: 0) { recorder.consume($0) }
        withBlock([ramp, ramp], sequence: 2, dropped: 400) { recorder.consume($0) }
        recorder.finish()
        XCTAssertEqual(recorder.framesWritten, 1200)
        XCTAssertEqual(recorder.silenceFramesInserted, 400)
        XCTAssertEqual(recorder.files, [1, 2, 3].map { Recorder.numberedPath(path, index: $0) })
        XCTAssertEqual(recorder.files.sorted(), recorder.files, "split names sort in order")
        var info = SF_INFOProbe.frames(recorder.files)
        XCTAssertEqual(info, [480, 480, 240])
        info = []
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "with --split only numbered files exist")
    }

    /// What the host does on a sample-rate or route change: finish, then prepare with the new
    /// format. The recorder rotates to the next numbered file with the new rate and channels.
    func testFormatChangeRotatesToANewFile() throws {
        let path = directory.appendingPathComponent("take.wav").path
        let recorder = Recorder(path: path)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        withBlock([[0.25, 0.5], [0.25, 0.5]]) { recorder.consume($0) }
        recorder.finish()
        try recorder.prepare(format: StreamFormat(sampleRate: 44100, channelCount: 3))
        withBlock([[0.25], [0.5], [0.75]]) { recorder.consume($0) }
        recorder.finish()
        XCTAssertEqual(recorder.files, [path, Recorder.numberedPath(path, index: 2)])
        var first = SF_INFO(), second = SF_INFO()
        let a = sf_open(recorder.files[0], Int32(SFM_READ), &first), b = sf_open(recorder.files[1], Int32(SFM_READ), &second)
        defer {
            sf_close(a)
            sf_close(b)
        }
        XCTAssertEqual([first.samplerate, first.channels, Int32(first.frames)], [48000, 2, 2])
        XCTAssertEqual([second.samplerate, second.channels, Int32(second.frames)], [44100, 3, 1])
    }

    func testNothingCapturedLeavesNoFile() throws {
        let path = directory.appendingPathComponent("empty.wav").path
        let recorder = Recorder(path: path)
        try recorder.validate()
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        recorder.finish()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(recorder.files, [])
    }

    func testWriteErrorStopsWithTheOSErrorAndCountsLostFrames() throws {
        let recorder = Recorder(path: "/dev/full", container: .wav, sampleFormat: .float32)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let block = [Float](repeating: 0.25, count: 48000)
        for _ in 0..<4 { withBlock([block, block]) { recorder.consume($0) } }
        recorder.finish()
        let failure = try XCTUnwrap(recorder.failure)
        XCTAssertTrue(failure.description.contains("no space left on device"), failure.description)
        XCTAssertFalse(failure.description.contains("System error"), "libsndfile's raw text stays out: \(failure.description)")
        XCTAssertGreaterThan(recorder.framesLostToErrors, 0)
        XCTAssertEqual(
            recorder.framesWritten + recorder.framesLostToErrors, 4 * 48000, "written \(recorder.framesWritten) lost \(recorder.framesLostToErrors)")
    }

    /// WAV past 4 GiB becomes RF64 instead of truncating: 64 channels of float silence, 4.1 GiB.
    func testWavBecomesRF64PastFourGiB() throws {
        let path = directory.appendingPathComponent("huge.wav").path
        let recorder = Recorder(path: path, container: .wav, sampleFormat: .float32)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 64))
        let frames = 65536
        let zeros = [Float](repeating: 0, count: frames)
        let blocks = (Int(4.1 * 1024 * 1024 * 1024) / (frames * 64 * 4)) + 1
        withBlock(Array(repeating: zeros, count: 64)) { block in
            for _ in 0..<blocks { recorder.consume(block) }
        }
        recorder.finish()
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertNil(recorder.failure)
        XCTAssertEqual(recorder.framesWritten, blocks * frames)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertGreaterThan(size, 4 * 1024 * 1024 * 1024)
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        let magic = String(decoding: handle.readData(ofLength: 4), as: UTF8.self)
        try handle.close()
        XCTAssertEqual(magic, "RF64", "past 4 GiB the header is RF64")
        XCTAssertEqual(SF_INFOProbe.frames([path]), [blocks * frames], "and every frame is readable")
    }

    func testSplitLimitParsing() {
        XCTAssertEqual(SplitLimit(parsing: "30s"), .seconds(30))
        XCTAssertEqual(SplitLimit(parsing: "10m"), .seconds(600))
        XCTAssertEqual(SplitLimit(parsing: "1h"), .seconds(3600))
        XCTAssertEqual(SplitLimit(parsing: "500M"), .bytes(500 * 1024 * 1024))
        XCTAssertEqual(SplitLimit(parsing: "2G"), .bytes(2 * 1024 * 1024 * 1024))
        XCTAssertEqual(SplitLimit(parsing: "1T"), .bytes(1 << 40))
        XCTAssertNil(SplitLimit(parsing: "lots"))
        XCTAssertNil(SplitLimit(parsing: "-5s"))
        XCTAssertNil(SplitLimit(parsing: "0x10s"), "decimal only")
        XCTAssertNil(SplitLimit(parsing: "1e3s"), "no exponent")
        XCTAssertNil(SplitLimit(parsing: "infs"))
        // Huge values are out of range, not a trap converting a Double to Int.
        XCTAssertEqual(SplitLimit(parsing: "9000000000G")?.isInRange, false)
        XCTAssertEqual(SplitLimit(parsing: "99999999999999999999999T")?.isInRange, false)
        XCTAssertEqual(SplitLimit(parsing: "1000000000h")?.isInRange, false)
        XCTAssertEqual(SplitLimit(parsing: "1K")?.isInRange, false, "below 64K")
        XCTAssertEqual(SplitLimit(parsing: "64K")?.isInRange, true)
        // Zero is well-formed, and refused by its range (too short), not as malformed.
        XCTAssertEqual(SplitLimit(parsing: "0s"), .seconds(0))
        XCTAssertEqual(SplitLimit(parsing: "0s")?.isInRange, false)
    }

    func testContainerFormatCombinations() {
        XCTAssertTrue(AudioContainer.wav.supports(.float32))
        XCTAssertTrue(AudioContainer.flac.supports(.int24))
        XCTAssertFalse(AudioContainer.flac.supports(.float32))
        XCTAssertFalse(AudioContainer.wav.supports(.fixed8_24))
        XCTAssertEqual(AudioContainer(path: "/a/b.CAF"), .caf)
        XCTAssertNil(AudioContainer(path: "/a.b/take"))
    }
}

/// Reads frame counts with libsndfile.
enum SF_INFOProbe {
    static func frames(_ paths: [String]) -> [Int] {
        paths.map { path in
            var info = SF_INFO()
            guard let file = sf_open(path, Int32(SFM_READ), &info) else { return -1 }
            sf_close(file)
            return Int(info.frames)
        }
    }
}

final class SharedConverterTests: XCTestCase {
    final class Sink: EncodedAudioConsumer {
        let consumerName: String
        let encoding: AudioEncoding
        var received: [[UInt8]] = []
        var bases: [UnsafeRawPointer] = []
        init(_ name: String, _ encoding: AudioEncoding) {
            consumerName = name
            self.encoding = encoding
        }
        func prepare(format: StreamFormat) throws {}
        func consume(_ block: EncodedBlock) {
            received.append(Array(block.bytes))
            bases.append(block.bytes.baseAddress!)
        }
        func finish() {}
        func handle(_ event: AudioSessionEvent) {}
    }

    func testEachEncodingIsConvertedOncePerBlockAndShared() throws {
        let s16 = AudioEncoding(sampleFormat: .int16, interleaved: true)
        let a = Sink("a", s16), b = Sink("b", s16), c = Sink("c", AudioEncoding(sampleFormat: .float32, interleaved: false))
        let converter = SharedConverter([a, b, c])
        XCTAssertEqual(converter.consumerName, "a+b+c")
        try converter.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        let left: [Float] = [0.5, -0.5, 0.25], right: [Float] = [0, 1, -1]
        withBlock([left, right]) { converter.consume($0) }
        withBlock([left, right]) { converter.consume($0) }
        XCTAssertEqual(converter.conversions, 4, "two blocks x two distinct encodings")
        XCTAssertEqual(a.received, b.received)
        XCTAssertEqual(a.bases, b.bases, "both sinks saw the very same converted bytes")
        let expected: [Int16] = [16384, 0, -16384, 32767, 8192, -32768]
        XCTAssertEqual(a.received[0], expected.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } })
        XCTAssertEqual(c.received[0].count, 6 * 4)
    }

    func testRecorderEncodingMatchesTheStreamOnlyWhereLibsndfileAgrees() {
        XCTAssertEqual(
            Recorder(path: "/tmp/x.wav", sampleFormat: .int16).encoding,
            StreamWriter(descriptor: 1, sampleFormat: .int16, interleaved: true).encoding)
        XCTAssertNotEqual(
            Recorder(path: "/tmp/x.wav", sampleFormat: .int24).encoding,
            StreamWriter(descriptor: 1, sampleFormat: .int24, interleaved: true).encoding,
            "libsndfile takes 24-bit in 32-bit words; a raw stream is packed")
    }
}
