import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import Synchronization
import XCTest

@testable import JackHostConsumers

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

    /// Everything about the takes is given at creation: a triggered recorder numbers its first
    /// take from `-0001`, writes the sidecar asked for, and reports its files to `onFileEvent`.
    func testSettingsGivenAtCreationShapeTheTakes() throws {
        let path = directory.appendingPathComponent("take.wav").path
        let events = Mutex<[RecorderFileEvent]>([])
        let settings = Recorder.Settings(
            sampleFormat: .int16, sidecar: true, trigger: .level(thresholdDBFS: -20, holdSeconds: 1), syncSeconds: nil,
            onFileEvent: { event in events.withLock { $0.append(event) } })
        let recorder = Recorder(path: path, settings: settings)
        XCTAssertEqual(recorder.trigger, settings.trigger)
        XCTAssertEqual(recorder.container, .wav)
        XCTAssertTrue(recorder.sidecar)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        withBlock([[Float](repeating: 0.5, count: 256)]) { recorder.consume($0) }
        recorder.finish()
        let first = Recorder.numberedPath(path, index: 1)
        XCTAssertEqual(recorder.files, [first])
        XCTAssertEqual(recorder.takesStarted, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: first + ".json"), "the sidecar is written")
        XCTAssertEqual(
            events.withLock { $0 },
            [.opened(path: first), .closed(RecorderFileSummary(path: first, frames: 256, xruns: 0, droppedFrames: 0))])
    }

    /// `--min-take` with `--pre-roll`: a cough leaves no file; a take opened once it has lasted the
    /// minimum still starts at its first loud frame less the pre-roll, every frame in order.
    func testAMinimumTakeLeavesNoFileForACoughAndStartsTheTakeAtItsFirstLoudFrame() throws {
        let path = directory.appendingPathComponent("take.wav").path
        var settings = Recorder.Settings(trigger: .level(thresholdDBFS: -20, holdSeconds: 0.1), preRollSeconds: 0.05, syncSeconds: nil)
        settings.levelShape = LevelShape(minTakeSeconds: 0.5)
        let recorder = Recorder(path: path, settings: settings)
        try recorder.prepare(format: StreamFormat(sampleRate: 8000, channelCount: 1))
        // Frame n carries n / 1e6 (quiet), plus 0.5 while loud: frames 800-999 (a 25 ms cough),
        // then 4000-11999 (a second of sound).
        func sample(_ n: Int) -> Float { Float(n) / 1e6 + ((800..<1000).contains(n) || (4000..<12000).contains(n) ? 0.5 : 0) }
        for start in stride(from: 0, to: 16000, by: 64) { withBlock([(start..<start + 64).map(sample)]) { recorder.consume($0) } }
        recorder.finish()
        XCTAssertEqual(recorder.files.count, 1, "one take, none for the cough: \(recorder.files)")
        var info = SF_INFO()
        let handle = try XCTUnwrap(sf_open(recorder.files.first ?? "", Int32(SFM_READ), &info))
        defer { sf_close(handle) }
        var samples = [Float](repeating: 0, count: Int(info.frames))
        XCTAssertEqual(sf_readf_float(handle, &samples, info.frames), info.frames)
        // From 0.05 s (400 frames) before frame 4000, to the hold (800 frames) after frame 11999.
        XCTAssertEqual(samples.count, 400 + 8000 + 800)
        XCTAssertEqual(samples.first ?? 0, sample(3600), accuracy: 1e-9)
        XCTAssertEqual(zip(samples, 3600..<12800).filter { abs($0.0 - sample($0.1)) > 1e-9 }.count, 0, "every frame in order")
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

    /// A rotate request ends the file before the next block and the take goes on in the next
    /// numbered file: every frame once, in order; a request while no file is open does nothing.
    func testARotateRequestContinuesInTheNextNumberedFile() throws {
        let path = directory.appendingPathComponent("take.wav").path
        let recorder = Recorder(path: path)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        recorder.requestRotate()  // before any file: nothing to end
        var next: Float = 0
        func feed(_ blocks: Int) {
            for _ in 0..<blocks {
                let samples = (0..<64).map { index in (next + Float(index)) / 65536 }
                next += 64
                withBlock([samples]) { recorder.consume($0) }
            }
        }
        feed(3)
        recorder.requestRotate()
        feed(2)
        recorder.requestRotate()
        recorder.requestRotate()  // two requests before a block: one rotation
        feed(1)
        recorder.finish()
        let files = [path, Recorder.numberedPath(path, index: 2), Recorder.numberedPath(path, index: 3)]
        XCTAssertEqual(recorder.files, files)
        XCTAssertEqual(recorder.rotations, 2)
        XCTAssertEqual(SF_INFOProbe.frames(files), [192, 128, 64])
        var samples: [Float] = []
        for file in files {
            var info = SF_INFO()
            let handle = try XCTUnwrap(sf_open(file, Int32(SFM_READ), &info))
            var buffer = [Float](repeating: -1, count: Int(info.frames))
            XCTAssertEqual(sf_readf_float(handle, &buffer, info.frames), info.frames)
            sf_close(handle)
            samples += buffer
        }
        XCTAssertEqual(samples, (0..<384).map { Float($0) / 65536 }, "every frame once, in order, across the three files")
    }

    /// A container's channel limit is per file: with channel files each holds one input, so 16
    /// inputs go into FLAC or MP3 (found by the encoders benchmark: the CLI refused them).
    func testChannelFilesTakeMoreInputsThanTheContainerHoldsInOneFile() throws {
        for container in [AudioContainer.flac, .mp3] {
            let path = directory.appendingPathComponent("take.\(container.fileExtension)").path
            let format: SampleFormat = container == .mp3 ? .float32 : .int16
            let single = Recorder(path: path, settings: Recorder.Settings(container: container, sampleFormat: format))
            XCTAssertThrowsError(try single.validate(channels: 16), "\(container): one file cannot hold 16")
            let perChannel = Recorder(
                path: path, settings: Recorder.Settings(container: container, sampleFormat: format, channelFiles: true))
            XCTAssertNoThrow(try perChannel.validate(channels: 16), "\(container): one input per file")
        }
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
