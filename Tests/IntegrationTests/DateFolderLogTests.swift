import CSndFile
import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Logger layouts end to end: a log in UTC date folders, rendered in freewheel so that hours of
/// audio take seconds, with `--keep` cleaning as it goes.
final class DateFolderLogTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Every path below `root` (directories and files), relative to it.
    private func tree(_ root: String) -> Set<String> {
        var found: Set<String> = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String { found.insert(path) }
        return found
    }

    /// `path` and every directory above it, up to (not including) the root.
    private func withAncestors(_ path: String) -> [String] {
        var paths = [path]
        var current = path
        while let slash = current.lastIndex(of: "/") {
            current = String(current[..<slash])
            paths.append(current)
        }
        return paths
    }

    /// `YYYY/MM/DD` (the folders) and `YYYYMMDD-HHMMSS` of `time` in UTC.
    private func utc(_ time: time_t) -> (day: String, hour: String, stamp: String) {
        var seconds = time
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { String(format: "%02d", value) }
        let day = "\(parts.tm_year + 1900)/\(two(parts.tm_mon + 1))/\(two(parts.tm_mday))"
        let stamp =
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))-\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
        return (day, two(parts.tm_hour), stamp)
    }

    /// The total frames of `path`, and `count` frames of it from `start` (negative: from the end).
    private func read(_ path: String, from start: Int, count: Int) throws -> (total: Int, channels: [[Float]]) {
        var info = SF_INFO()
        let file = try XCTUnwrap(sf_open(path, Int32(SFM_READ), &info), "libsndfile opens \(path)")
        defer { sf_close(file) }
        let channels = Int(info.channels)
        XCTAssertGreaterThanOrEqual(sf_seek(file, sf_count_t(start < 0 ? Int(info.frames) + start : start), SEEK_SET), 0)
        var buffer = [Float](repeating: 0, count: count * channels)
        let got = Int(sf_readf_float(file, &buffer, sf_count_t(count)))
        return (Int(info.frames), (0..<channels).map { c in (0..<got).map { buffer[$0 * channels + c] } })
    }

    /// The time a segment's name (`…/YYYYMMDD-HHMMSS.wav`) gives, read as UTC.
    private func startTime(_ name: String) -> time_t? {
        let digits = Array(name.split(separator: "/").last!.prefix(15).filter(\.isNumber))
        guard digits.count == 14 else { return nil }
        let number = { (from: Int, count: Int) in Int32(String(digits[from..<from + count]))! }
        var parts = tm()
        parts.tm_year = number(0, 4) - 1900
        parts.tm_mon = number(4, 2) - 1
        parts.tm_mday = number(6, 2)
        parts.tm_hour = number(8, 2)
        parts.tm_min = number(10, 2)
        parts.tm_sec = number(12, 2)
        return timegm(&parts)
    }

    /// A log of at least 3 hours, `--split 1h --align --utc --keep 1h --sidecar` into
    /// `ROOT/%Y/%m/%d/%H/%Y%m%d-%H%M%S.wav`, with jackhost in TZ=Asia/Kolkata (UTC+05:30, so a local
    /// hour boundary would be half past a UTC one), rendered in freewheel at 8 kHz (11 to 12 s here for
    /// the 3 hours, 20 s for the whole test): the segments start on UTC hours, each hour in a folder
    /// jackhost makes; `--keep 1h`, judged on the log's own clock (which freewheel runs hours ahead of
    /// the system's), removes exactly the segments more than an hour older than the newest, their
    /// sidecars and the hour folders it made for them, and leaves the day folders that existed before
    /// (one holding a user's file, one left empty). The log runs until the segment of the first UTC
    /// hour at least 3 hours after its start opens, so it crosses four hour boundaries (three if it
    /// started on one); then freewheel stops and SIGINT ends it. (Not `--duration 10800`: a client that
    /// closes while jack2 1.9.21's synchronous dummy server freewheels can send jackd into an endless
    /// loop of "JackGraphManager::Disconnect ... not used" lines, so jackhost stops in real time.) The
    /// two segments left continue each other frame for frame, and their `bext` time reference stays
    /// local (samples since Kolkata's midnight).
    func testAThreeHourUTCLogInDateFoldersIsMadeAndKeptInFreewheel() throws {
        let root = workDirectory.appendingPathComponent("log").path
        let rate = 8000
        // The UTC day folders the log may reach exist before it, as folders an operator made.
        let now = time(nil)
        let before = [utc(now).day, utc(now + 86400).day]
        for day in before { try FileManager.default.createDirectory(atPath: "\(root)/\(day)", withIntermediateDirectories: true) }
        try Data("the operator's".utf8).write(to: URL(fileURLWithPath: "\(root)/\(before[0])/notes.txt"))
        let template = root + "/%Y/%m/%d/%H/%Y%m%d-%H%M%S.wav"
        var stderr = ""
        var stdout = ""
        var renderSeconds = 0.0
        try JACKFixture.withServer(captureChannels: 2, bufferSize: 4096, sampleRate: rate) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try RunningJackhost(
                arguments: [
                    "record", template, "-s", server.name, "--connect", "jhgen:out_.*", "--channels", "2", "--sample-format", "s16",
                    "--split", "1h", "--align", "--utc", "--keep", "1h", "--sidecar",
                ],
                directory: workDirectory, environment: ["TZ": "Asia/Kolkata"])
            // Freewheel once the first segment is open (its time anchors the log) until the
            // segment of the first UTC hour 3 hours after it opens.
            var first: time_t?
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 20) {
                    first = self.tree(root).first { $0.hasSuffix(".wav") }.flatMap(self.startTime)
                    return first != nil
                }, child.stderr)
            let end = ((first ?? now) + 3 * 3600 + 3599) / 3600 * 3600
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            let started = Date()
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["y"], environment: environment).status, 0)
            let reached = JACKFixture.waitUntil(timeout: 300) { self.tree(root).contains { $0.hasSuffix("\(self.utc(end).stamp).wav") } }
            renderSeconds = Date().timeIntervalSince(started)
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["n"], environment: environment).status, 0)
            XCTAssertTrue(reached, "the log reached \(utc(end).stamp) in freewheel: \(tree(root).sorted())")
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 30), 0, child.stderr)
            stderr = child.stderr
            stdout = child.stdout
        }
        let left = tree(root)
        let segments = left.filter { $0.hasSuffix(".wav") }.sorted()
        XCTAssertEqual(segments.count, 2, "the two newest segments are left: \(left.sorted())\n\(stderr)")
        guard segments.count == 2 else { return }
        // The segments left start on consecutive UTC hours, each in its UTC hour folder.
        let lastStart = try XCTUnwrap(segments.last.flatMap(startTime))
        XCTAssertEqual(lastStart % 3600, 0, "\(segments[1]) starts on a UTC hour")
        for (index, start) in [lastStart - 3600, lastStart].enumerated() {
            let name = utc(start)
            XCTAssertEqual(segments[index], "\(name.day)/\(name.hour)/\(name.stamp).wav")
        }
        // Removed: every segment before those, with its sidecar and the hour folder made for it.
        let removedFiles = stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "--keep removed \(root)/"), let end = line.range(of: ": older than") else { return nil }
            return String(line[range.upperBound..<end.lowerBound])
        }
        let removedFolders = stderr.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "--keep removed the folder \(root)/"), let end = line.range(of: ": empty") else { return nil }
            return String(line[range.upperBound..<end.lowerBound])
        }
        let removedSegments = removedFiles.filter { $0.hasSuffix(".wav") }.sorted()
        // The first segment, partial unless the log started on the hour, then every whole hour
        // up to the two left; and the log covered at least 3 hours.
        let starts = removedSegments.compactMap(startTime)
        XCTAssertEqual(starts.count, removedSegments.count)
        let firstStart = try XCTUnwrap(starts.first, "\(removedFiles)")
        XCTAssertGreaterThanOrEqual(lastStart, firstStart + 3 * 3600, "at least 3 hours")
        let firstWhole = (firstStart + 3599) / 3600 * 3600
        let wholeHours = stride(from: firstWhole, through: lastStart - 7200, by: 3600).map {
            "\(utc($0).day)/\(utc($0).hour)/\(utc($0).stamp).wav"
        }
        XCTAssertEqual(Array(removedSegments.drop { startTime($0).map { $0 % 3600 != 0 } ?? false }), wholeHours, "\(removedFiles)")
        XCTAssertLessThanOrEqual(removedSegments.count - wholeHours.count, 1, "one partial segment at most, the first")
        XCTAssertEqual(Set(removedFiles), Set(removedSegments + removedSegments.map { $0 + ".json" }), "each with its sidecar")
        XCTAssertEqual(Set(removedFolders), Set(removedSegments.map { String($0.split(separator: "/").dropLast().joined(separator: "/")) }))
        XCTAssertTrue(stdout.contains("--keep removed \(removedFiles.count) old file(s)"), stdout)
        // And nothing else: the tree is the two segments, their sidecars and hour folders, and
        // the folders that existed before (kept even where the log left them empty).
        var expected: Set<String> = ["\(before[0])/notes.txt"]
        for path in segments + segments.map({ $0 + ".json" }) + before { expected.formUnion(withAncestors(path)) }
        XCTAssertEqual(left, expected)
        // The two continue each other: the whole hour, then the rest, frame for frame.
        let hour = try read("\(root)/\(segments[0])", from: -1024, count: 1024)
        let rest = try read("\(root)/\(segments[1])", from: 0, count: 1024)
        XCTAssertEqual(hour.total, 3600 * rate)
        XCTAssertLessThan(rest.total, 3600 * rate)
        let joined = (0..<2).map { hour.channels[$0] + rest.channels[$0] }
        let report = SequenceCheck.verify(joined)
        XCTAssertNil(report.firstMismatch, report.description)
        XCTAssertGreaterThan(report.checkedFrames, 2000)
        // bext stays local: samples since Kolkata's midnight, half an hour off the UTC hour.
        let bext = try XCTUnwrap(BroadcastChunk.read("\(root)/\(segments[1])"))
        let localSecondsOfDay = (Int(lastStart) + 19800) % 86400
        XCTAssertEqual(bext.timeReference, UInt64(localSecondsOfDay * rate))
        reliabilityFigures(
            "a 3-hour-plus UTC log in date folders, freewheel at 8 kHz, --split 1h --align --keep 1h",
            "rendered in \(renderSeconds.formatted(places: 1)) s; \(segments.count) segments left on UTC hours, \(removedSegments.count) removed with their sidecars and \(removedFolders.count) hour folders; pre-existing folders kept"
        )
    }
}
