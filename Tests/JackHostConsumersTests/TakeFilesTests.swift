import CSndFile
import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// Takes are never overwritten by accident: existing files, links and segments are refused
/// before the run and, atomically, at creation; automatic names never collide.
final class TakeFilesTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("takes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    private func refusal(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch { return String(describing: error) }
    }

    func testExistingFileIsRefusedAndLeftUntouched() throws {
        let take = path("take.wav")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: take))
        XCTAssertTrue(refusal { try TakeFiles(name: .exact(take)).validate() }.contains("exists and jackhost never overwrites a take"))
        var files = TakeFiles(name: .exact(take))
        XCTAssertTrue(refusal { _ = try files.createNext() }.contains("exists"))
        XCTAssertEqual(try String(contentsOfFile: take, encoding: .utf8), "precious")
        // --overwrite replaces it.
        var replacing = TakeFiles(name: .exact(take), overwrite: true)
        try replacing.validate()
        let created = try replacing.createNext().files[0]
        close(created.descriptor)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: take)).count, 0)
    }

    func testSymbolicLinksAreNeverFollowedWithoutOverwrite() throws {
        let target = path("target.wav")
        try Data("target".utf8).write(to: URL(fileURLWithPath: target))
        let link = path("link.wav")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        XCTAssertTrue(refusal { try TakeFiles(name: .exact(link)).validate() }.contains("exists"))
        var files = TakeFiles(name: .exact(link))
        XCTAssertTrue(refusal { _ = try files.createNext() }.contains("exists"))
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "target", "the link's target is untouched")

        let dangling = path("dangling.wav")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: path("nowhere.wav"))
        let message = refusal { try TakeFiles(name: .exact(dangling)).validate() }
        XCTAssertTrue(message.contains("symbolic link to a file that does not exist"), message)
        XCTAssertFalse(message.contains("File exists"), message)
    }

    func testSegmentsOfAnEarlierTakeAreRefusedAndNeverClobbered() throws {
        let take = path("take.wav")
        let segment = TakeFiles.numberedPath(take, index: 2)
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: segment))
        XCTAssertTrue(refusal { try TakeFiles(name: .exact(take)).validate() }.contains("take-0002.wav exists from an earlier take"))
        // At run time (a segment that appears mid-run), a taken number is skipped.
        var files = TakeFiles(name: .exact(take))
        let first = try files.createNext().files[0]
        let second = try files.createNext().files[0]
        close(first.descriptor)
        close(second.descriptor)
        XCTAssertEqual([first.path, second.path], [take, TakeFiles.numberedPath(take, index: 3)])
        XCTAssertEqual(try String(contentsOfFile: segment, encoding: .utf8), "earlier")
    }

    func testAutomaticNamesNeverCollide() throws {
        let name = TakeFiles.TakeName.automatic(directory: directory.path, prefix: "jackhost", fileExtension: "wav")
        try TakeFiles(name: name).validate()
        let now = time(nil)
        var a = TakeFiles(name: name), b = TakeFiles(name: name)
        let first = try a.createNext(now: now).files[0]
        let second = try b.createNext(now: now).files[0]
        close(first.descriptor)
        close(second.descriptor)
        let stamp = TakeFiles.timestamp(now)
        XCTAssertEqual(first.path, path("jackhost-\(stamp).wav"))
        XCTAssertEqual(second.path, path("jackhost-\(stamp)-2.wav"))
        XCTAssertTrue(stamp.range(of: #"^\d{8}-\d{6}$"#, options: .regularExpression) != nil, stamp)
        // Its later segments follow its own name.
        let third = try a.createNext(now: now).files[0]
        close(third.descriptor)
        XCTAssertEqual(third.path, path("jackhost-\(stamp)-0002.wav"))
    }

    func testRecorderRefusesAFileThatAppearsAfterValidation() throws {
        let take = path("late.wav")
        let recorder = Recorder(path: take, container: .wav, sampleFormat: .float32)
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: take))
        var samples: [Float] = [0.5, 0.25]
        samples.withUnsafeMutableBufferPointer { buffer in
            var pointer = UnsafePointer(buffer.baseAddress!)
            withUnsafeMutablePointer(to: &pointer) { pointers in
                let view = AudioBufferListView(channels: pointers, channelCount: 1, frameCount: 2)
                recorder.consume(
                    AudioBlock(
                        buffers: view,
                        timestamp: .init(
                            frameTime: 0, microseconds: 0, sequence: 0,
                            xrunSincePreviousCycle: false), droppedFramesBefore: 0))
            }
        }
        recorder.finish()
        XCTAssertEqual(recorder.failure, .fileExists(path: take))
        XCTAssertEqual(recorder.framesLostToErrors, 2, "the frames are counted, not silently lost")
        XCTAssertEqual(try String(contentsOfFile: take, encoding: .utf8), "someone else's")
    }

    // MARK: Template names

    /// What strftime(3) makes of `format` at the local time `time`: the reference the
    /// template's own expansion must equal.
    static func strftimeString(_ format: String, _ time: time_t) -> String {
        var seconds = time
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 512)
        let count = strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func closeAll(_ segment: TakeSegment) {
        for file in segment.files { close(file.descriptor) }
    }

    func testTemplateNamesExpandFromEachSegmentsTime() throws {
        let template = path("log-%Y%m%d-%H%M%S-%j-%y-%%.wav")
        XCTAssertTrue(TakeFiles.isTemplate(template))
        XCTAssertFalse(TakeFiles.isTemplate(path("take.wav")))
        try TakeFiles.validateTemplate(template)
        var files = TakeFiles(name: .template(template), numbersEveryFile: true)
        try files.validate()
        XCTAssertEqual(files.displayName, template)
        let start: time_t = 1_780_000_000
        let first = try files.createNext(now: start)
        let second = try files.createNext(now: start + 3600)
        closeAll(first)
        closeAll(second)
        // Each segment from its own time, and never numbered -0001.
        XCTAssertEqual(first.basePath, Self.strftimeString(template, start))
        XCTAssertEqual(second.basePath, Self.strftimeString(template, start + 3600))
        XCTAssertEqual(first.files.map(\.path), [first.basePath])
        XCTAssertTrue(first.basePath.hasSuffix("-%.wav"), first.basePath)
        XCTAssertTrue(FileManager.default.fileExists(atPath: second.basePath))
        XCTAssertEqual(try TakeFiles.expandTemplate(template, at: start), first.basePath)
    }

    func testTemplateCollisionsGetACounterAndNothingIsOverwritten() throws {
        let template = path("log-%Y%m%d.wav")
        let now: time_t = 1_780_000_000
        let taken = Self.strftimeString(template, now)
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: taken))
        var files = TakeFiles(name: .template(template))
        let first = try files.createNext(now: now)
        let second = try files.createNext(now: now + 60)  // the same day: the same name
        closeAll(first)
        closeAll(second)
        let (stem, _) = taken.splittingPathExtension
        XCTAssertEqual([first.basePath, second.basePath], ["\(stem)-2.wav", "\(stem)-3.wav"])
        XCTAssertEqual(try String(contentsOfFile: taken, encoding: .utf8), "earlier")

        // --overwrite replaces an earlier take's file, but never this take's own segments.
        var replacing = TakeFiles(name: .template(template), overwrite: true)
        let third = try replacing.createNext(now: now)
        let fourth = try replacing.createNext(now: now + 60)
        closeAll(third)
        closeAll(fourth)
        XCTAssertEqual([third.basePath, fourth.basePath], [taken, "\(stem)-2.wav"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: taken)).count, 0)
    }

    func testTemplatesWithUnsupportedFieldsAreRefused() {
        let cases = [
            ("log-%Z.wav", "%Z is not a supported field; use %Y %m %d %H %M %S %j %y or %%"),
            ("log-%Y%.wav", "ends with a lone %"),
            ("logs/%Y/../log-%m.wav", "a directory named .. after a field would leave the log's tree"),
            ("logs/%Y/./log-%m.wav", "a directory named . after a field would leave the log's tree"),
            ("logs/%Y//log-%m.wav", "an empty directory name (//) after a field"),
            ("logs/%Q/log-%m.wav", "%Q is not a supported field"),
            ("logs/100%/log-%m.wav", "ends with a lone %"),
            ("log-%Y.%m", "put the fields before the extension"),
            ("logs/", "has no file name"),
        ]
        for (template, expected) in cases {
            let message = refusal { try TakeFiles.validateTemplate(template) }
            XCTAssertTrue(message.hasPrefix("cannot use the name template \(template): "), message)
            XCTAssertTrue(message.contains(expected), message)
            XCTAssertTrue(refusal { try TakeFiles(name: .template(template)).validate() }.contains(expected))
        }
        // A template whose directory does not exist is refused like any name.
        let missing = refusal { try TakeFiles(name: .template(path("nowhere/log-%Y.wav"))).validate() }
        XCTAssertTrue(missing.contains("does not exist"), missing)
    }

    func testRetentionTemplateOfEachKindOfName() {
        XCTAssertEqual(
            TakeFiles.TakeName.automatic(directory: "/var/log/audio", prefix: "jackhost", fileExtension: "wav").retentionTemplate,
            "/var/log/audio/jackhost-%Y%m%d-%H%M%S.wav")
        XCTAssertEqual(TakeFiles.TakeName.automatic(directory: "", prefix: "a%b", fileExtension: "flac").retentionTemplate, "a%%b-%Y%m%d-%H%M%S.flac")
        XCTAssertEqual(TakeFiles.TakeName.template("x/log-%Y.wav").retentionTemplate, "x/log-%Y.wav")
        XCTAssertNil(TakeFiles.TakeName.exact("take.wav").retentionTemplate)
    }

    // MARK: Channel file sets

    func testChannelNamesAreSanitisedAndMadeUnique() {
        XCTAssertEqual(
            TakeFiles.channelFileNames(["system:capture 1", "mic", "mic", "", "Gain+3.5dB-L", "é/\\", "mic_2"]),
            ["system_capture_1", "mic", "mic_2", "in_4", "Gain+3.5dB-L", "___", "mic_2_2"])
        XCTAssertEqual(TakeFiles.channelFileNames([String(repeating: "x", count: 300)]).first?.count, 64)
        XCTAssertEqual(TakeFiles.channelPath("d/take-0002.wav", channel: "in_1"), "d/take-0002_in_1.wav")
        XCTAssertEqual(TakeFiles.channelPath("d/take", channel: "in_1"), "d/take_in_1")
    }

    func testChannelSetsAreNamedAfterEachSegment() throws {
        let take = path("take.wav")
        var files = TakeFiles(name: .exact(take))
        try files.validate(channelNames: ["in_1", "in_2"])
        let first = try files.createNext(channelNames: ["in_1", "in_2"])
        let second = try files.createNext(channelNames: ["in_1", "in_2"])
        closeAll(first)
        closeAll(second)
        XCTAssertEqual(first.basePath, take)
        XCTAssertEqual(first.files.map(\.path), [path("take_in_1.wav"), path("take_in_2.wav")])
        XCTAssertEqual(second.files.map(\.path), [path("take-0002_in_1.wav"), path("take-0002_in_2.wav")])
        XCTAssertFalse(FileManager.default.fileExists(atPath: take), "the base name itself is not created")
        XCTAssertTrue(first.files.allSatisfy { $0.descriptor >= 0 })

        // Automatic and template names likewise, sanitised.
        let now: time_t = 1_780_000_000
        var automatic = TakeFiles(name: .automatic(directory: directory.path, prefix: "jackhost", fileExtension: "wav"))
        let made = try automatic.createNext(now: now, channelNames: ["system:capture_1", "system:capture_1"])
        closeAll(made)
        let stamp = TakeFiles.timestamp(now)
        XCTAssertEqual(made.files.map(\.path), [path("jackhost-\(stamp)_system_capture_1.wav"), path("jackhost-\(stamp)_system_capture_1_2.wav")])
        var templated = TakeFiles(name: .template(path("log-%Y%m%d.flac")))
        let logged = try templated.createNext(now: now, channelNames: ["L", "R"])
        closeAll(logged)
        let (stem, _) = Self.strftimeString(path("log-%Y%m%d.flac"), now).splittingPathExtension
        XCTAssertEqual(logged.files.map(\.path), ["\(stem)_L.flac", "\(stem)_R.flac"])
    }

    func testAChannelSetIsCreatedAllOrNothing() throws {
        let take = path("take.wav")
        // The second channel's name is taken by a directory: its creation fails.
        try FileManager.default.createDirectory(atPath: path("take_b.wav"), withIntermediateDirectories: false)
        var files = TakeFiles(name: .exact(take))
        XCTAssertTrue(refusal { _ = try files.createNext(channelNames: ["a", "b", "c"]) }.contains("take_b.wav exists"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("take_a.wav")), "the first file was removed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("take_c.wav")), "the third was never made")

        // Where a taken name is skipped (templates, numbered segments), the partial set is
        // removed and the next name is used.
        let now: time_t = 1_780_000_000
        let template = path("log-%Y%m%d.wav")
        let (stem, _) = Self.strftimeString(template, now).splittingPathExtension
        try FileManager.default.createDirectory(atPath: "\(stem)_b.wav", withIntermediateDirectories: false)
        var logger = TakeFiles(name: .template(template))
        let segment = try logger.createNext(now: now, channelNames: ["a", "b"])
        closeAll(segment)
        XCTAssertEqual(segment.files.map(\.path), ["\(stem)-2_a.wav", "\(stem)-2_b.wav"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(stem)_a.wav"))

        // An error other than a taken name (here a name too long for the file system) also
        // removes the files already created, and is thrown.
        var long = TakeFiles(name: .exact(path(String(repeating: "t", count: 200) + ".wav")))
        let message = refusal { _ = try long.createNext(channelNames: ["x", String(repeating: "y", count: 64)]) }
        XCTAssertTrue(message.contains("cannot create"), message)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("ttt") }
        XCTAssertEqual(left, [])
    }

    func testValidateRefusesAnExistingChannelFileOrChannelSegment() throws {
        let take = path("take.wav")
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: path("take_in_2.wav")))
        try TakeFiles(name: .exact(take)).validate()
        let message = refusal { try TakeFiles(name: .exact(take)).validate(channelNames: ["in_1", "in_2"]) }
        XCTAssertTrue(message.contains("take_in_2.wav exists and jackhost never overwrites a take"), message)
        try TakeFiles(name: .exact(take), overwrite: true).validate(channelNames: ["in_1", "in_2"])
        try FileManager.default.removeItem(atPath: path("take_in_2.wav"))

        try Data("earlier".utf8).write(to: URL(fileURLWithPath: path("take-0003_in_1.wav")))
        let segment = refusal { try TakeFiles(name: .exact(take)).validate(channelNames: ["in_1", "in_2"]) }
        XCTAssertTrue(segment.contains("take-0003_in_1.wav exists from an earlier take"), segment)
        // Other channels' segments are not this take's concern.
        try TakeFiles(name: .exact(take)).validate(channelNames: ["L", "R"])
        try TakeFiles(name: .exact(take), overwrite: true).validate(channelNames: ["in_1"])
    }
}
