import Foundation
import JackHostSupport
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// Logger layouts: name templates with date folders, names and aligned splits in UTC or local
/// time across daylight-saving changes, and retention that walks the folders. Every time is
/// given in, never read from the clock.
final class LogLayoutTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("layouts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    private func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
    private func refusal(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch { return String(describing: error) }
    }

    /// Runs `body` with `TZ` set to `zone`, and puts the previous `TZ` back, set or not.
    private func withTimeZone<T>(_ zone: String, _ body: () throws -> T) rethrows -> T {
        let previous = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return try body()
    }

    /// The segment `files` creates at `time`, closed, and marked as the recorder marks what it
    /// finalises.
    @discardableResult
    private func segment(_ files: inout TakeFiles, at time: time_t, template: String, zone: TakeTimeZone) throws -> String {
        let made = try files.createNext(now: time)
        for file in made.files {
            close(file.descriptor)
            XCTAssertNil(TakeMark.write(path: file.path, template: template, timeZone: zone), file.path)
        }
        return made.basePath
    }

    /// 2026-03-29 01:00 UTC: London's clocks go from 01:00 GMT to 02:00 BST.
    static let springChange: time_t = 1_774_746_000
    /// 2026-10-25 01:00 UTC: London's clocks go from 02:00 BST back to 01:00 GMT.
    static let autumnChange: time_t = 1_792_890_000

    // MARK: Templates with date folders

    func testDirectoryFieldsSplitIntoARootAndLevels() throws {
        let parsed = try NameTemplate(parsing: "/srv/log/%Y/%m/%d/%H%M.wav")
        XCTAssertEqual(parsed.directory, "/srv/log")
        XCTAssertEqual(parsed.directoryLevels, [[.field(UInt8(ascii: "Y"))], [.field(UInt8(ascii: "m"))], [.field(UInt8(ascii: "d"))]])
        XCTAssertTrue(parsed.hasDate, "the date is in the folders, the hour in the name")
        // A literal level after a field is a level too; `%%` is a percent sign in the root.
        let mixed = try NameTemplate(parsing: "logs/100%%/%Y-%m/audio/day-%d.flac")
        XCTAssertEqual(mixed.directory, "logs/100%")
        XCTAssertEqual(mixed.directoryLevels.count, 2)
        XCTAssertEqual(mixed.directoryLevels[1], [.literal(Array("audio".utf8))])
        // A date split between folders and name is still a date; an hour folder alone is not.
        XCTAssertTrue(try NameTemplate(parsing: "%Y/%j/%H.wav").hasDate)
        XCTAssertFalse(try NameTemplate(parsing: "%H/%M.wav").hasDate)
        // A root that leaves the current directory is the user's own choice, and stays literal.
        XCTAssertEqual(try NameTemplate(parsing: "../logs/%Y/%m%d.wav").directory, "../logs")
        XCTAssertEqual(try NameTemplate(parsing: "/%Y/%m%d.wav").directory, "/")
        XCTAssertEqual(try NameTemplate(parsing: "%Y/%m%d.wav").directory, "")
    }

    /// Fields are digits, so a field can never make `..`; a literal `..`, `.` or empty level
    /// after one is refused, since retention walks and removes the levels.
    func testLevelsThatWouldLeaveTheTreeAreRefused() {
        for template in ["logs/%Y/../x-%m.wav", "logs/%Y/./x-%m.wav", "logs/%Y//x-%m.wav", "logs/%Y/%m/../../x.wav"] {
            let message = refusal { try TakeFiles.validateTemplate(template) }
            XCTAssertTrue(message.contains("would leave the log's tree"), message)
        }
        for letter in NameTemplate.fieldWidths.keys {
            let parts = TakeTimeZone.utc.parts(of: 1_781_092_800)
            XCTAssertTrue(NameTemplate.value(of: letter, in: parts).utf8.allSatisfy { (48...57).contains($0) }, "digits only")
        }
    }

    func testDateFoldersAreMadeAsSegmentsNeedThemAndMarkedOnlyWhenJackhostMadeThem() throws {
        let mask = umask(0o022)
        defer { umask(mask) }
        let template = path("log/%Y/%m/%d/%H%M.wav")
        try FileManager.default.createDirectory(atPath: path("log/2026"), withIntermediateDirectories: true)
        var files = TakeFiles(name: .template(template), numbersEveryFile: true, timeZone: .utc)
        try files.validate()
        let time: time_t = 1_781_092_800  // 2026-06-10 12:00 UTC
        let made = try files.createNext(now: time)
        for file in made.files { close(file.descriptor) }
        XCTAssertEqual(made.basePath, path("log/2026/06/10/1200.wav"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: made.basePath))
        for level in ["log/2026/06", "log/2026/06/10"] {
            var status = stat()
            XCTAssertEqual(lstat(path(level), &status), 0)
            XCTAssertEqual(status.st_mode & 0o7777, 0o755, level)
            XCTAssertTrue(TakeMark.provesDirectory(path: path(level), template: template), "\(level) was made by jackhost")
        }
        XCTAssertFalse(TakeMark.provesDirectory(path: path("log/2026"), template: template), "log/2026 was there before")
        XCTAssertFalse(TakeMark.provesDirectory(path: path("log/2026/06"), template: path("other/%Y/%m/%d/%H%M.wav")))
        // The same time again: the folders are used as they are, and the name gets a counter.
        let again = try files.createNext(now: time)
        for file in again.files { close(file.descriptor) }
        XCTAssertEqual(again.basePath, path("log/2026/06/10/1200-2.wav"))
        // The root must exist (it is never made); a level taken by a file is refused with its reason.
        XCTAssertTrue(refusal { try TakeFiles(name: .template(path("nowhere/%Y/%m%d.wav"))).validate() }.contains("does not exist"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("log/2027")))
        var blocked = TakeFiles(name: .template(template), timeZone: .utc)
        let message = refusal { _ = try blocked.createNext(now: time + 366 * 86400) }
        XCTAssertTrue(message.contains("cannot create \(path("log/2027")): it exists and is not a directory"), message)
    }

    // MARK: UTC and local time across daylight-saving changes

    /// With TZ=Europe/London, hourly names around both of 2026's changes: UTC names go up one
    /// hour at a time and never repeat; local names skip 01:00 in March and name 01:00 twice in
    /// October, as README's logging section says.
    func testUTCNamesNeverJumpOrRepeatButLocalNamesDo() throws {
        try withTimeZone("Europe/London") {
            let template = "log/%Y/%m/%d/%H%M.wav"
            func names(around change: time_t, _ zone: TakeTimeZone) throws -> [String] {
                try (-3...3).map { try TakeFiles.expandTemplate(template, at: change + time_t($0 * 3600), timeZone: zone) }
            }
            XCTAssertEqual(
                try names(around: Self.springChange, .utc),
                [
                    "log/2026/03/28/2200.wav", "log/2026/03/28/2300.wav", "log/2026/03/29/0000.wav", "log/2026/03/29/0100.wav",
                    "log/2026/03/29/0200.wav", "log/2026/03/29/0300.wav", "log/2026/03/29/0400.wav",
                ])
            XCTAssertEqual(
                try names(around: Self.springChange, .local),
                [
                    "log/2026/03/28/2200.wav", "log/2026/03/28/2300.wav", "log/2026/03/29/0000.wav", "log/2026/03/29/0200.wav",
                    "log/2026/03/29/0300.wav", "log/2026/03/29/0400.wav", "log/2026/03/29/0500.wav",
                ], "local time skips 01:00 in spring")
            XCTAssertEqual(
                try names(around: Self.autumnChange, .utc),
                [
                    "log/2026/10/24/2200.wav", "log/2026/10/24/2300.wav", "log/2026/10/25/0000.wav", "log/2026/10/25/0100.wav",
                    "log/2026/10/25/0200.wav", "log/2026/10/25/0300.wav", "log/2026/10/25/0400.wav",
                ])
            XCTAssertEqual(
                try names(around: Self.autumnChange, .local),
                [
                    "log/2026/10/24/2300.wav", "log/2026/10/25/0000.wav", "log/2026/10/25/0100.wav", "log/2026/10/25/0100.wav",
                    "log/2026/10/25/0200.wav", "log/2026/10/25/0300.wav", "log/2026/10/25/0400.wav",
                ], "local time names 01:00 twice in autumn")
            // Read back, a UTC name gives exactly the time that made it, on both sides of both changes.
            let exact = try NameTemplate(parsing: "log/%Y/%m/%d/%H%M%S.wav", timeZone: .utc)
            for change in [Self.springChange, Self.autumnChange] {
                for hour in -3...3 {
                    let time = change + time_t(hour * 3600)
                    var levels = NameTemplate.FieldValues()
                    for (level, name) in zip(exact.directoryLevels, exact.directory(at: time).split(separator: "/").dropFirst()) {
                        XCTAssertNotNil(NameTemplate.match(level, atStartOf: Array(name.utf8)[...], into: &levels))
                    }
                    XCTAssertEqual(exact.time(atStartOf: Array(exact.stem(at: time).utf8)[...], levels: levels)?.time, time)
                }
            }
        }
    }

    /// One take's hourly segments through the autumn change: in local time the repeated hour
    /// needs a counter (`0100-2.wav`); in UTC every hour has its own name.
    func testSegmentsThroughTheAutumnChangeCollideOnlyInLocalTime() throws {
        try withTimeZone("Europe/London") {
            for zone in [TakeTimeZone.local, .utc] {
                let template = path("\(zone.rawValue)/%Y/%m/%d/%H%M.wav")
                try FileManager.default.createDirectory(atPath: path(zone.rawValue), withIntermediateDirectories: true)
                var files = TakeFiles(name: .template(template), numbersEveryFile: true, timeZone: zone)
                var made: [String] = []
                for hour in -1...1 { made.append(try segment(&files, at: Self.autumnChange + time_t(hour * 3600), template: template, zone: zone)) }
                let expected =
                    zone == .utc
                    ? ["2026/10/25/0000.wav", "2026/10/25/0100.wav", "2026/10/25/0200.wav"]
                    : [
                        "2026/10/25/0100.wav", "2026/10/25/0100-2.wav", "2026/10/25/0200.wav",
                    ]
                XCTAssertEqual(made, expected.map { path("\(zone.rawValue)/\($0)") }, "\(zone)")
            }
        }
    }

    /// `--align` in UTC counts from UTC midnight: with TZ=Asia/Kolkata (UTC+05:30) the next
    /// hourly boundary after 14:17:03 UTC is 15:00 UTC, where local alignment gives 20:00 local
    /// (14:30 UTC). The bext time reference stays samples since local midnight either way.
    func testAlignedSplitsCountFromUTCMidnightWithUTC() {
        withTimeZone("Asia/Kolkata") {
            let rate = 48000.0
            let noon = 1_781_092_800.0  // 2026-06-10 12:00 UTC
            let anchorTime: Double = noon + 8223  // 14:17:03 UTC, 19:47:03 local
            let stamp = AudioTimestamp(frameTime: 1000, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)
            let local = TakeTimeline(anchor: stamp, sampleRate: rate, realtimeNow: anchorTime, jackNow: 0, timeZone: .local)
            let utc = TakeTimeline(anchor: stamp, sampleRate: rate, realtimeNow: anchorTime, jackNow: 0, timeZone: .utc)
            let hour = Int64(3600 * rate)
            let localBoundary = local.nextBoundary(atOrAfter: local.anchorPosition + 1, splitFrames: hour)
            let utcBoundary = utc.nextBoundary(atOrAfter: utc.anchorPosition + 1, splitFrames: hour)
            XCTAssertEqual(local.wallClock(at: localBoundary), noon + 9000, accuracy: 1e-6, "20:00 local, 14:30 UTC")
            XCTAssertEqual(utc.wallClock(at: utcBoundary), noon + 10800, accuracy: 1e-6, "15:00 UTC, 20:30 local")
            // The time reference is the same local one in both: 20:30 local.
            XCTAssertEqual(utc.bextTimeReference(at: utcBoundary), UInt64(73800 * rate))
            XCTAssertEqual(local.bextTimeReference(at: utc.anchorPosition), utc.bextTimeReference(at: utc.anchorPosition))
        }
    }

    /// Through both of London's changes, from an anchor 4 h 42 min 57 s before each, 90-minute
    /// and hourly UTC boundaries stay on UTC multiples from midnight for two days. Local hourly
    /// ones stay on local hours (the offset changes by a whole hour); local 90-minute ones keep
    /// counting from the anchor day's local midnight, as `--align` always has, so after the
    /// change they are an hour (spring) or half an hour (autumn, 1800 s) off local multiples.
    func testUTCBoundariesNeverMoveAcrossEitherChange() {
        withTimeZone("Europe/London") {
            let rate = 48000.0
            let stamp = AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)
            for (change, shift) in [(Self.springChange, 3600), (Self.autumnChange, 1800)] {
                let anchorTime = Double(change - 16977)  // 20:17:03 GMT on 28 March; 21:17:03 BST on 24 October
                for zone in [TakeTimeZone.utc, .local] {
                    let timeline = TakeTimeline(anchor: stamp, sampleRate: rate, realtimeNow: anchorTime, jackNow: 0, timeZone: zone)
                    for seconds in [5400, 3600] {
                        let times = boundaries(of: timeline, every: seconds, count: 32)
                        XCTAssertGreaterThan(times.last!, change + 3600, "the boundaries cross the change")
                        for time in times {
                            let parts = zone.parts(of: time)
                            let sinceMidnight = Int(parts.tm_hour) * 3600 + Int(parts.tm_min) * 60 + Int(parts.tm_sec)
                            let shifted = zone == .local && seconds == 5400 && time > change
                            XCTAssertEqual(sinceMidnight % seconds, shifted ? shift : 0, "\(zone) \(seconds) s: \(time)")
                        }
                    }
                }
            }
        }
    }

    /// The first `count` split boundaries of `timeline`, every `seconds`, as wall-clock times.
    private func boundaries(of timeline: TakeTimeline, every seconds: Int, count: Int) -> [time_t] {
        var position = timeline.anchorPosition + 1
        var times: [time_t] = []
        while times.count < count {
            position = timeline.nextBoundary(atOrAfter: position, splitFrames: Int64(seconds) * 48000)
            let wall = timeline.wallClock(at: position)
            XCTAssertEqual(wall, wall.rounded(), "boundaries are whole seconds")
            times.append(time_t(wall))
            position += 1
        }
        return times
    }

    /// A recorder with ``Recorder/Settings/timeZone`` UTC, in TZ=Asia/Kolkata: its segment is
    /// named and foldered in UTC, its folders are made and marked, and its finalised file's
    /// mark says UTC, so its retention (given a local one, and made UTC by the recorder) proves it.
    func testARecorderInUTCNamesFoldersAndMarksInUTC() throws {
        try withTimeZone("Asia/Kolkata") {
            let template = path("%Y/%m/%d/%H%M%S.wav")
            let settings = Recorder.Settings(
                timeZone: .utc, retention: SegmentRetention(template: template, keepSeconds: 3600, timeZone: .local))
            let recorder = Recorder(name: .template(template), settings: settings)
            XCTAssertEqual(recorder.retention?.timeZone, .utc)
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
            let before = time(nil)
            var samples: [Float] = [0.5, 0.25]
            samples.withUnsafeMutableBufferPointer { buffer in
                var pointer = UnsafePointer(buffer.baseAddress!)
                withUnsafeMutablePointer(to: &pointer) { pointers in
                    let view = AudioBufferListView(channels: pointers, channelCount: 1, frameCount: 2)
                    let stamp = AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)
                    recorder.consume(AudioBlock(buffers: view, timestamp: stamp, droppedFramesBefore: 0))
                }
            }
            recorder.finish()
            let after = time(nil)
            XCTAssertNil(recorder.failure)
            let file = try XCTUnwrap(recorder.files.first)
            let candidates = (before...after).map { try? TakeFiles.expandTemplate(template, at: $0, timeZone: .utc) }
            XCTAssertTrue(candidates.contains(file), "\(file) is named in UTC")
            XCTAssertFalse((before...after).contains { (try? TakeFiles.expandTemplate(template, at: $0)) == file }, "not in local time")
            XCTAssertTrue(TakeMark.proves(path: file, template: template, timeZone: .utc))
            XCTAssertFalse(TakeMark.proves(path: file, template: template))
            XCTAssertTrue(TakeMark.provesDirectory(path: file.deletingLastPathComponent, template: template))
        }
    }

    // MARK: Retention in date folders

    /// `--keep 1d` over a UTC date-folder tree: old segments go from every date folder; the
    /// folders jackhost made go once empty, deepest first; a folder that was there before, a
    /// folder with a user's file in it, a folder moved to another date, a link to a folder
    /// elsewhere and files at the wrong level all stay.
    func testRetentionWalksTheDateFoldersAndRemovesOnlyWhatJackhostMadeOnceEmpty() throws {
        let template = path("log/%Y/%m/%d/%H%M.wav")
        let now: time_t = 1_781_092_800  // 2026-06-10 12:00 UTC
        let day: time_t = 86400
        // Before the log: 2026/06/07 (so 2026 and 2026/06 too) existed.
        try FileManager.default.createDirectory(atPath: path("log/2026/06/07"), withIntermediateDirectories: true)
        var files = TakeFiles(name: .template(template), numbersEveryFile: true, timeZone: .utc)
        let may = try segment(&files, at: now - 40 * day, template: template, zone: .utc)  // 2026/05/01: all made here
        let preexisting = try segment(&files, at: now - 3 * day, template: template, zone: .utc)  // 2026/06/07, there before
        let withUsersFile = try segment(&files, at: now - 2 * day, template: template, zone: .utc)  // 2026/06/08
        try Data("notes".utf8).write(to: URL(fileURLWithPath: path("log/2026/06/08/notes.txt")))
        try Data("restored".utf8).write(to: URL(fileURLWithPath: path("log/2026/06/08/1300.wav")))  // unmarked
        let emptied = try segment(&files, at: now - day - 3600, template: template, zone: .utc)  // 2026/06/09, emptied by hand
        XCTAssertEqual(unlink(emptied), 0)
        let moved = try segment(&files, at: now - 8 * day, template: template, zone: .utc)  // 2026/06/02, then renamed
        XCTAssertEqual(rename(path("log/2026/06/02"), path("log/2026/06/03")), 0)
        let recent = try segment(&files, at: now - 3600, template: template, zone: .utc)  // 2026/06/10/1100
        let open = try files.createNext(now: now)  // 2026/06/10/1200, being written
        for file in open.files { close(file.descriptor) }
        // A link to a folder elsewhere, holding a file marked through the link: never followed.
        let elsewhere = path("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path("log/2026/06/04"), withDestinationPath: elsewhere)
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("log/2026/06/04/1200.wav")))
        XCTAssertNil(TakeMark.write(path: path("log/2026/06/04/1200.wav"), template: template, timeZone: .utc))
        // Marked old files at the wrong level: the root and a month folder.
        for name in ["log/1200.wav", "log/2026/06/1200.wav"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: path(name)))
            XCTAssertNil(TakeMark.write(path: path(name), template: template, timeZone: .utc))
        }

        let retention = SegmentRetention(template: template, keepSeconds: Double(day), timeZone: .utc)
        let sweep = retention.sweep(now: now, protecting: [open.basePath])
        XCTAssertEqual(sweep.removed, [may, preexisting, withUsersFile].sorted())
        XCTAssertEqual(sweep.failures, [])
        XCTAssertEqual(Set(sweep.removedDirectories), Set([path("log/2026/05/01"), path("log/2026/05"), path("log/2026/06/09")]))
        let dayFirst = try XCTUnwrap(sweep.removedDirectories.firstIndex(of: path("log/2026/05/01")))
        XCTAssertLessThan(dayFirst, try XCTUnwrap(sweep.removedDirectories.firstIndex(of: path("log/2026/05"))), "deepest first")
        for kept in [
            "log/2026", "log/2026/06", "log/2026/06/07", "log/2026/06/08/notes.txt", "log/2026/06/08/1300.wav",
            "log/2026/06/03/1200.wav", "elsewhere/1200.wav", "log/1200.wav", "log/2026/06/1200.wav",
        ] {
            XCTAssertTrue(exists(path(kept)), "\(kept) stays")
        }
        XCTAssertTrue(exists(recent) && exists(open.basePath))
        XCTAssertFalse(exists(moved), "renamed with its folder")
        XCTAssertTrue(sweep.unproven.contains(path("log/2026/06/03/1200.wav")), "a file moved into another date folder is not proven")
        XCTAssertTrue(sweep.unproven.contains(path("log/2026/06/08/1300.wav")))
        // The moved folder is not proven either: emptied, it still stays.
        XCTAssertEqual(unlink(path("log/2026/06/03/1200.wav")), 0)
        let second = retention.sweep(now: now, protecting: [open.basePath])
        XCTAssertEqual(second.removed, [])
        XCTAssertEqual(second.removedDirectories, [])
        XCTAssertTrue(exists(path("log/2026/06/03")))
        // Once the open segment closes and ages, its folder goes with it; the year stays (it was there before).
        XCTAssertNil(TakeMark.write(path: open.basePath, template: template, timeZone: .utc))
        let later = retention.sweep(now: now + 3 * day, protecting: [])
        XCTAssertEqual(later.removed, [recent, open.basePath].sorted())
        XCTAssertEqual(later.removedDirectories, [path("log/2026/06/10")])
        XCTAssertTrue(exists(path("log/2026/06")))
    }

    /// Names are read back in the retention's zone, and a mark says which zone named the file:
    /// a UTC logger never removes the local-time files of the same template (their names are
    /// other times), and a local one never removes UTC files.
    func testRetentionReadsNamesInItsZoneAndProvesOnlyThatZonesFiles() throws {
        try withTimeZone("Asia/Kolkata") {
            let template = path("%Y%m%d-%H%M.wav")
            let now: time_t = 1_781_092_800  // 12:00 UTC, 17:30 local
            let named = { (zone: TakeTimeZone, time: time_t) in try TakeFiles.expandTemplate(template, at: time, timeZone: zone) }
            // 10:00 UTC two hours ago, and 07:30 local (02:00 UTC) ten hours ago. Read in the
            // other zone, each is another time: 10:00 local is 04:30 UTC, 07:30 UTC is 4.5 hours ago.
            let utcFile = try named(.utc, now - 2 * 3600)
            let localFile = try named(.local, now - 10 * 3600)
            XCTAssertEqual([utcFile, localFile], [path("20260610-1000.wav"), path("20260610-0730.wav")])
            for (file, zone) in [(utcFile, TakeTimeZone.utc), (localFile, .local)] {
                try Data("x".utf8).write(to: URL(fileURLWithPath: file))
                XCTAssertNil(TakeMark.write(path: file, template: template, timeZone: zone))
            }
            // Keep 3 hours in UTC: the UTC file is 2 hours old and stays; the local one looks old
            // enough, but its mark says another zone named it.
            let kept = SegmentRetention(template: template, keepSeconds: 3 * 3600, timeZone: .utc).sweep(now: now, protecting: [])
            XCTAssertEqual(kept.removed, [])
            XCTAssertEqual(kept.unproven, [localFile])
            // Keep 1 hour: each zone removes its own file only.
            let localSweep = SegmentRetention(template: template, keepSeconds: 3600, timeZone: .local).sweep(now: now, protecting: [])
            XCTAssertEqual(localSweep.removed, [localFile])
            XCTAssertEqual(localSweep.unproven, [utcFile], "a UTC file is not the local logger's")
            let utcSweep = SegmentRetention(template: template, keepSeconds: 3600, timeZone: .utc).sweep(now: now, protecting: [])
            XCTAssertEqual(utcSweep.removed, [utcFile])
        }
    }

    /// A local take's mark is the text earlier versions wrote, so their logs stay removable.
    func testALocalMarkIsUnchanged() throws {
        var status = stat()
        status.st_dev = 1
        status.st_ino = 2
        status.st_size = 3
        XCTAssertEqual(
            TakeMark.text(for: status, name: "a.wav", template: "t-%Y.wav"),
            "jackhost-take-mark 1\nname=a.wav\ndevice=1\ninode=2\nsize=3\nmodified=0.0\ntemplate=t-%Y.wav")
        XCTAssertEqual(
            TakeMark.text(for: status, name: "a.wav", template: "t-%Y.wav", timeZone: .utc),
            "jackhost-take-mark 1\nname=a.wav\ndevice=1\ninode=2\nsize=3\nmodified=0.0\nzone=utc\ntemplate=t-%Y.wav")
        XCTAssertEqual(TakeMark.recordedName("/srv/log/2026/06/10/1200.wav", template: "/srv/log/%Y/%m/%d/%H%M.wav"), "2026/06/10/1200.wav")
        XCTAssertEqual(TakeMark.recordedName("/srv/log/log-2026.wav", template: "/srv/log/log-%Y.wav"), "log-2026.wav")
    }
}
