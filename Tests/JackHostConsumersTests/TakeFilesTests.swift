import CSndFile
import Foundation
import JackHost
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
        let created = try replacing.createNext()
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
        let first = try files.createNext()
        let second = try files.createNext()
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
        let first = try a.createNext(now: now)
        let second = try b.createNext(now: now)
        close(first.descriptor)
        close(second.descriptor)
        let stamp = TakeFiles.timestamp(now)
        XCTAssertEqual(first.path, path("jackhost-\(stamp).wav"))
        XCTAssertEqual(second.path, path("jackhost-\(stamp)-2.wav"))
        XCTAssertTrue(stamp.range(of: #"^\d{8}-\d{6}$"#, options: .regularExpression) != nil, stamp)
        // Its later segments follow its own name.
        let third = try a.createNext(now: now)
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
}
