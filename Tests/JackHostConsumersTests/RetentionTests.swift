import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// `--keep` removes a logger's own old segments, and nothing else.
final class RetentionTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    private func touch(_ path: String) throws { try Data("x".utf8).write(to: URL(fileURLWithPath: path)) }
    /// A file as jackhost leaves it: written, finalised and marked under `template`.
    private func written(_ path: String, template: String) throws {
        try touch(path)
        XCTAssertNil(TakeMark.write(path: path, template: template), path)
    }
    private func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
    private func stamp(_ time: time_t) -> String { TakeFilesTests.strftimeString("%Y%m%d-%H%M%S", time) }

    func testOnlyOldFilesOfTheTemplateAreRemoved() throws {
        let template = path("log-%Y%m%d-%H%M%S.wav")
        let now: time_t = 1_780_000_000
        let old = stamp(now - 3 * 86400)
        let new = stamp(now - 3600)
        let removable = [
            "log-\(old).wav", "log-\(old)-2.wav", "log-\(old)_in_1.wav", "log-\(old)-0002_system_capture_1.wav",
            "log-\(old)-2-0003_L.wav", "log-\(old).wav.json", "log-\(old)_in_2.wav.json",
        ]
        let kept = [
            "log-\(new).wav", "log-\(new)_in_1.wav", "log-\(new).wav.json",  // newer
            "log-\(old).flac", "log-\(old).wav.txt", "log-\(old).json",  // other extensions
            "notes.wav", "log-\(old)-x.wav", "log-\(old)_.wav", "log-\(old)_a b.wav", "xlog-\(old).wav", "log-\(old)-1-2-3.wav",  // other names
            "log-20200230-120000.wav", "log-20201301-120000.wav", "log-20200101-250000.wav",  // impossible times
            "log-\(old)-5.wav", "log-\(old)-5.wav.json",  // being written, and its sidecar
        ]
        for name in removable + kept { try written(path(name), template: template) }
        // A symbolic link and a directory named like segments, and a segment in a subdirectory.
        let target = path("target.wav")
        try touch(target)
        try FileManager.default.createSymbolicLink(atPath: path("log-\(old)-3.wav"), withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: path("log-\(old)-6.wav"), withDestinationPath: path("nowhere"))
        try FileManager.default.createDirectory(atPath: path("log-\(old)-4.wav"), withIntermediateDirectories: false)
        try written(path("log-\(old)-4.wav/log-\(old).wav"), template: template)
        try FileManager.default.createDirectory(atPath: path("sub"), withIntermediateDirectories: false)
        try written(path("sub/log-\(old).wav"), template: template)

        let retention = SegmentRetention(template: template, keepSeconds: 86400)
        let sweep = retention.sweep(now: now, protecting: [path("log-\(old)-5.wav")])
        XCTAssertEqual(sweep.removed, removable.map(path).sorted())
        XCTAssertEqual(sweep.failures, [])
        for name in removable { XCTAssertFalse(exists(path(name)), name) }
        for name in kept + ["log-\(old)-3.wav", "log-\(old)-6.wav", "log-\(old)-4.wav", "log-\(old)-4.wav/log-\(old).wav", "sub/log-\(old).wav"] {
            XCTAssertTrue(exists(path(name)), name)
        }
        XCTAssertTrue(exists(target), "a link's target is never touched")
        // A second sweep finds nothing more.
        XCTAssertEqual(retention.sweep(now: now, protecting: []).removed, [path("log-\(old)-5.wav"), path("log-\(old)-5.wav.json")])
    }

    /// Only a file whose mark proves jackhost wrote it, as it is now, under this template, is
    /// removed: the names a user gives an edit, a file restored from a backup, a copy, a file
    /// renamed into place, an edited take and another logger's take all stay.
    func testOnlyFilesTheMarkProvesAreRemoved() throws {
        let template = path("log-%Y%m%d-%H%M%S.wav")
        let now: time_t = 1_780_000_000
        let old = stamp(now - 3 * 86400)
        // Named like segments, never written by jackhost (the counter and channel rules accept them).
        let users = ["log-\(old)_edited.wav", "log-\(old)_FINAL-mix.wav", "log-\(old)-1-2.wav"]
        for name in users { try touch(path(name)) }
        // Restored from a backup: the same name, no mark.
        try touch(path("log-\(old).wav"))
        // A copy that kept the attribute (cp -a) under another valid name: another inode and name.
        try written(path("log-\(old)-7.wav"), template: template)
        XCTAssertEqual(try JACKTool.run("/bin/cp", ["-a", path("log-\(old)-7.wav"), path("log-\(old)-8.wav")]), 0)
        // Renamed into place: a marked take moved onto another take's name.
        try written(path("log-\(old)-9.wav"), template: template)
        XCTAssertEqual(rename(path("log-\(old)-9.wav"), path("log-\(old)-10.wav")), 0)
        // Edited in place after jackhost finalised it.
        try written(path("log-\(old)-11.wav"), template: template)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path("log-\(old)-11.wav")))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("edit".utf8))
        try handle.close()
        // Another logger's take in the same folder.
        try written(path("log-\(old)-12.wav"), template: path("log-%Y%m%d-%H%M%S-other.wav"))
        // And one genuine old take, which goes.
        try written(path("log-\(old)-13.wav"), template: template)

        let sweep = SegmentRetention(template: template, keepSeconds: 86400).sweep(now: now, protecting: [])
        // The original of the copy is jackhost's own take as it wrote it: it goes too.
        XCTAssertEqual(sweep.removed, [path("log-\(old)-13.wav"), path("log-\(old)-7.wav")])
        XCTAssertEqual(sweep.failures, [])
        for name in users + ["log-\(old).wav", "log-\(old)-8.wav", "log-\(old)-10.wav", "log-\(old)-11.wav", "log-\(old)-12.wav"] {
            XCTAssertTrue(exists(path(name)), "\(name) is not provably jackhost's")
        }
        XCTAssertEqual(sweep.unproven.count, 8, "\(sweep.unproven)")
    }

    func testProtectedFilesAreRecognisedUnderAnotherSpelling() throws {
        let now: time_t = 1_780_000_000
        let name = "log-\(stamp(now - 86400 * 10)).wav"
        try written(path(name), template: path("log-%Y%m%d-%H%M%S.wav"))
        let retention = SegmentRetention(template: path("log-%Y%m%d-%H%M%S.wav"), keepSeconds: 60)
        XCTAssertEqual(retention.sweep(now: now, protecting: [directory.path + "/./" + name]).removed, [])
        XCTAssertEqual(retention.sweep(now: now, protecting: []).removed, [path(name)])
    }

    func testAutomaticNamesAreSweptThroughTheirRetentionTemplate() throws {
        let now: time_t = 1_780_000_000
        let name = TakeFiles.TakeName.automatic(directory: directory.path, prefix: "jackhost", fileExtension: "wav")
        var files = TakeFiles(name: name)
        let first = try files.createNext(now: now - 7200)
        let second = try files.createNext(now: now - 7200)
        for file in first.files + second.files { close(file.descriptor) }
        var recent = TakeFiles(name: name)
        let current = try recent.createNext(now: now, channelNames: ["L", "R"])
        for file in current.files { close(file.descriptor) }
        let template = try XCTUnwrap(name.retentionTemplate)
        for file in first.files + second.files + current.files { XCTAssertNil(TakeMark.write(path: file.path, template: template)) }
        let retention = SegmentRetention(template: template, keepSeconds: 3600)
        let sweep = retention.sweep(now: now, protecting: [])
        XCTAssertEqual(sweep.removed, [first.basePath, second.basePath].sorted())
        XCTAssertTrue(current.files.allSatisfy { exists($0.path) })
    }

    func testADateOnlyNameCountsFromTheEndOfItsDay() throws {
        // 00:30 local time on some day; yesterday's file counts from 23:59:59 yesterday.
        var parts = tm()
        parts.tm_year = 126
        parts.tm_mon = 5
        parts.tm_mday = 10
        parts.tm_hour = 0
        parts.tm_min = 30
        parts.tm_isdst = -1
        let now = mktime(&parts)
        let yesterday = "log-\(TakeFilesTests.strftimeString("%Y%m%d", now - 86400)).wav"
        let template = path("log-%Y%m%d.wav")
        try written(path(yesterday), template: template)
        XCTAssertEqual(SegmentRetention(template: template, keepSeconds: 3600).sweep(now: now, protecting: []).removed, [])
        XCTAssertEqual(SegmentRetention(template: template, keepSeconds: 600).sweep(now: now, protecting: []).removed, [path(yesterday)])
    }

    func testATemplateWithoutADateRemovesNothingAndIsRefused() throws {
        let template = path("log-%H%M%S.wav")
        try written(path("log-120000.wav"), template: template)
        XCTAssertEqual(SegmentRetention(template: template, keepSeconds: 60).sweep(now: time(nil), protecting: []).removed, [])
        XCTAssertTrue(exists(path("log-120000.wav")))
        XCTAssertThrowsError(try SegmentRetention.validate(template: template)) { error in
            XCTAssertTrue(String(describing: error).contains("--keep needs a date in the name"), "\(error)")
        }
        try SegmentRetention.validate(template: path("log-%Y%m%d.wav"))
        try SegmentRetention.validate(template: path("log-%y%j.wav"))
        XCTAssertThrowsError(try SegmentRetention.validate(template: path("log-%Q.wav")))
    }

    func testKeepValues() {
        XCTAssertEqual(SegmentRetention.parseKeep("90s"), 90)
        XCTAssertEqual(SegmentRetention.parseKeep("30m"), 1800)
        XCTAssertEqual(SegmentRetention.parseKeep("12h"), 43200)
        XCTAssertEqual(SegmentRetention.parseKeep("7d"), 604_800)
        XCTAssertEqual(SegmentRetention.parseKeep("2w"), 1_209_600)
        XCTAssertEqual(SegmentRetention.parseKeep("1.5h"), 5400)
        XCTAssertEqual(SegmentRetention.parseKeep("520w"), 520 * 604_800)
        for bad in ["", "7", "d", "59s", "0m", "30s", "521w", "3641d", "11000d", "-7d", "+7d", "1e3s", "0x10m", "7D", "7 d", "7dd", "1..5h", "7y"] {
            XCTAssertNil(SegmentRetention.parseKeep(bad), bad)
        }
    }
}

/// Runs a tool and returns its exit status.
enum JACKTool {
    static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
