import Glibc
import JackHostSupport

/// Removes a logger's own segments once they are older than a retention period (`--keep 7d`),
/// and the date folders it made once they are empty, and nothing else.
///
/// A file is removed only when all of these hold:
/// - it is at the template's place: in the template's directory, or for a template with date
///   folders (`/srv/log/%Y/%m/%d/%H%M.wav`) in a directory below the root whose every level is
///   a real directory (not a link) named as the template names that level (never below, above
///   or beside it);
/// - it is a regular file (by `lstat`: symbolic links, directories and anything else stay);
/// - its name is exactly one the template makes: the fields (of its folders and its name
///   together, which must agree) parse back to a valid time in ``timeZone`` with the same
///   digits, followed only by uniqueness or segment counters (`-2`, `-0003`, at most two), an
///   optional channel suffix (`_in_1`), the template's extension, and optionally a `.json`
///   sidecar suffix (`log-20261201-140000.wav.json`);
/// - the time its name gives is more than the retention period before `now` (fields the
///   template lacks count at their latest, so a file is never judged older than it is);
/// - it is not one of the files being written, nor the sidecar of one;
/// - its ``TakeMark`` proves that jackhost wrote it, under this template and in this zone, and
///   that it has not been renamed, moved, replaced or changed since (a file restored from a
///   backup, a copy, an edit or a file of the same name that jackhost never wrote stays).
///
/// A date folder is removed only when it is one of the template's levels (as above), its
/// ``TakeMark`` proves that jackhost's own mkdir made it for this template (so a folder that
/// existed before the log never goes), it holds none of the files being written, and it is
/// empty (rmdir(2) refuses any other), deepest first, so a month folder goes once its last
/// day folder has. The root, the part of the path before the first field, is never removed.
///
/// A template without a full date (a year, and a month and day or a day of the year) cannot
/// tell a file's age, so it removes nothing; ``validate(template:)`` refuses it before the run.
public struct SegmentRetention: Sendable {
    /// One file that could not be removed.
    public struct Failure: Sendable, Equatable {
        /// The file.
        public var path: String
        /// Why, as strerror's text.
        public var reason: String
    }

    /// What one sweep did.
    public struct Sweep: Sendable, Equatable {
        /// The files removed, in name order.
        public var removed: [String]
        /// The files that matched but could not be removed.
        public var failures: [Failure]
        /// The files whose names the template makes but whose mark does not prove jackhost
        /// wrote them as they are now: kept.
        public var unproven: [String] = []
        /// The empty date folders jackhost had made and removed, deepest first.
        public var removedDirectories: [String] = []
    }

    /// The shortest and longest retention periods: a minute (`1m`) to 520 weeks (`520w`, 3640
    /// days, about ten years), exactly the bounds ``acceptedKeep`` names.
    public static let keepRange = 60.0...(520.0 * 7 * 86400)
    /// The accepted values in words, for messages.
    public static let acceptedKeep = "use a number with s, m, h, d or w, from 1m to 520w (for example 90m, 12h, 7d, 2w)"

    /// The template, as given.
    public let template: String
    /// How long a segment is kept after the time in its name, in seconds.
    public let keepSeconds: Double
    /// The zone the names were made in, and are read back in (`--utc`).
    public let timeZone: TakeTimeZone
    /// The parsed template; nil when it is not valid.
    private let parsed: NameTemplate?

    /// Keeps the files of `template` (a ``TakeFiles/TakeName/template(_:)`` or an automatic
    /// name's ``TakeFiles/TakeName/retentionTemplate``), named in `timeZone`, for `keepSeconds`
    /// after their time.
    public init(template: String, keepSeconds: Double, timeZone: TakeTimeZone = .local) {
        self.template = template
        self.keepSeconds = keepSeconds
        self.timeZone = timeZone
        parsed = try? NameTemplate(parsing: template, timeZone: timeZone)
    }

    /// Checks before the run that `template` is valid and gives every file's date, so that
    /// retention can tell a file's age from its name.
    public static func validate(template: String) throws(RecorderError) {
        guard try NameTemplate(parsing: template).hasDate else {
            throw .invalidTemplate(template: template, reason: "--keep needs a date in the name; add %Y%m%d (or %Y and %j)")
        }
    }

    /// Checks before the run that the template's directory can hold the ``TakeMark``s retention
    /// relies on: nil, or the one line that says why not and what to do.
    public static func checkMarks(template: String) -> String? {
        guard let parsed = try? NameTemplate(parsing: template) else { return nil }
        // The root: date folders below it are on the same file system unless a mount says otherwise.
        let directory = parsed.directory.isEmpty ? "." : parsed.directory
        guard let reason = TakeMark.probe(directory: directory) else { return nil }
        return
            "--keep removes only files it can prove jackhost wrote, with an extended attribute (\(TakeMark.attribute)), and \(directory) cannot store one (\(reason)); record to a file system that does (ext4, XFS, Btrfs, tmpfs), or leave --keep out"
    }

    /// `7d`, `90m`, `2w`: a retention period in the unit it divides evenly, for messages.
    public static func describe(seconds: Double) -> String {
        for (unit, size) in [("w", 7 * 86400.0), ("d", 86400), ("h", 3600), ("m", 60)] where seconds >= size {
            let count = seconds / size
            if count == count.rounded() { return "\(Int(count))\(unit)" }
        }
        return "\(Int(seconds.rounded()))s"
    }

    /// Parses a retention period: a plain decimal (no sign, exponent or hexadecimal) and a unit,
    /// `s`econds, `m`inutes, `h`ours, `d`ays or `w`eeks (`90s`, `30m`, `12h`, `7d`, `2w`); nil
    /// when it is malformed or outside ``keepRange``.
    public static func parseKeep(_ text: String) -> Double? {
        guard let unit = text.last, let number = SplitLimit.plainDecimal(text.dropLast()) else { return nil }
        let multiplier: Double
        switch unit {
        case "s": multiplier = 1
        case "m": multiplier = 60
        case "h": multiplier = 3600
        case "d": multiplier = 86400
        case "w": multiplier = 7 * 86400
        default: return nil
        }
        let seconds = number * multiplier
        return keepRange.contains(seconds) ? seconds : nil
    }

    /// Removes the template's files older than `now` minus the retention period, except those
    /// in `protecting` (the files open for writing) and their sidecars, and then the empty date
    /// folders jackhost made that hold none of them.
    public func sweep(now: time_t, protecting: Set<String>) -> Sweep {
        var result = Sweep(removed: [], failures: [], unproven: [])
        guard let parsed, parsed.hasDate else { return result }
        // The protected files by identity too, so `./log.wav` and `log.wav` are one file.
        var protectedIdentities: Set<[UInt64]> = []
        for path in protecting {
            var status = stat()
            if lstat(path, &status) == 0 { protectedIdentities.insert([UInt64(status.st_dev), UInt64(status.st_ino)]) }
        }
        var walk = Walk()
        collect(in: parsed.directory, level: 0, found: NameTemplate.FieldValues(), now: now, protecting: protecting, into: &walk)
        for path in walk.candidates.sorted() {
            var status = stat()
            guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            if protectedIdentities.contains([UInt64(status.st_dev), UInt64(status.st_ino)]) { continue }
            if isSidecarOfProtected(path, protectedIdentities) { continue }
            guard TakeMark.proves(path: path, template: template, timeZone: timeZone) else {
                result.unproven.append(path)
                continue
            }
            if unlink(path) == 0 {
                result.removed.append(path)
            } else if errno != ENOENT {
                result.failures.append(Failure(path: path, reason: TakeFiles.reason(errno)))
            }
        }
        removeEmptyDirectories(walk.directories, protecting: protecting, into: &result)
        return result
    }

    /// What a walk of the template's tree found: the files to consider, and the date folders,
    /// deepest first.
    private struct Walk {
        var candidates: [String] = []
        var directories: [String] = []
    }

    /// Walks `directory`, which is at the template's level `level` (0 is the root) and whose
    /// path gave the fields `found`: down through the folders named as the next level (real
    /// directories only, never a link), and at the last level, the files named as the template
    /// names them and old enough, that are not being written.
    private func collect(
        in directory: String, level: Int, found: NameTemplate.FieldValues, now: time_t, protecting: Set<String>, into walk: inout Walk
    ) {
        guard let parsed, let stream = opendir(directory.isEmpty ? "." : directory) else { return }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != Array(".".utf8) && name != Array("..".utf8) { names.append(name) }
        }
        closedir(stream)
        let isLast = level == parsed.directoryLevels.count
        for name in names {
            let path = TakeFiles.joined(directory, String(decoding: name, as: UTF8.self))
            if !isLast {
                var values = found
                guard NameTemplate.match(parsed.directoryLevels[level], atStartOf: name[...], into: &values) == name.count else { continue }
                var status = stat()
                guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { continue }
                collect(in: path, level: level + 1, found: values, now: now, protecting: protecting, into: &walk)
                walk.directories.append(path)
                continue
            }
            guard case let (time, isSidecar)? = match(name, parsed, found), Double(now) - Double(time) > keepSeconds else { continue }
            let written = isSidecar ? String(path.dropLast(5)) : path
            if protecting.contains(path) || protecting.contains(written) { continue }
            walk.candidates.append(path)
        }
    }

    /// Removes the date folders in `directories` (deepest first) that jackhost made, that hold
    /// none of the protected files, and that are empty.
    private func removeEmptyDirectories(_ directories: [String], protecting: Set<String>, into result: inout Sweep) {
        // The folders that hold a protected file, by identity, wherever its path was spelled.
        var holding: Set<[UInt64]> = []
        for path in protecting {
            var folder = path.deletingLastPathComponent
            while !folder.isEmpty && folder != "/" {
                var status = stat()
                if lstat(folder, &status) == 0 { holding.insert([UInt64(status.st_dev), UInt64(status.st_ino)]) }
                folder = folder.deletingLastPathComponent
            }
        }
        for path in directories {
            var status = stat()
            guard lstat(path, &status) == 0, !holding.contains([UInt64(status.st_dev), UInt64(status.st_ino)]) else { continue }
            guard TakeMark.provesDirectory(path: path, template: template) else { continue }
            if rmdir(path) == 0 {
                result.removedDirectories.append(path)
            } else if errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT {
                result.failures.append(Failure(path: path, reason: TakeFiles.reason(errno)))
            }
        }
    }

    /// Whether `path` is `FILE.json` for a protected FILE.
    private func isSidecarOfProtected(_ path: String, _ identities: Set<[UInt64]>) -> Bool {
        guard path.hasSuffix(".json") else { return false }
        var status = stat()
        return lstat(String(path.dropLast(5)), &status) == 0 && identities.contains([UInt64(status.st_dev), UInt64(status.st_ino)])
    }

    /// The time `name` (in a folder whose path gave the fields `levels`) gives and whether it is
    /// a `.json` sidecar, when it is a name the template makes; nil otherwise.
    private func match(_ name: [UInt8], _ template: NameTemplate, _ levels: NameTemplate.FieldValues) -> (time: time_t, isSidecar: Bool)? {
        let json = Array(".json".utf8)
        let ext = template.fileExtension.isEmpty ? [] : Array(".\(template.fileExtension)".utf8)
        // `X.ext` or `X.ext.json` (for no extension, `X` or `X.json`).
        var forms: [(stem: ArraySlice<UInt8>, isSidecar: Bool)] = []
        if name.count > ext.count + json.count, name.suffix(json.count).elementsEqual(json),
            name.dropLast(json.count).suffix(ext.count).elementsEqual(ext)
        {
            forms.append((name.dropLast(json.count + ext.count), true))
        }
        if name.count > ext.count, name.suffix(ext.count).elementsEqual(ext) {
            forms.append((name.dropLast(ext.count), false))
        }
        for form in forms {
            guard case let (time, length)? = template.time(atStartOf: form.stem, levels: levels) else { continue }
            if Self.isSegmentSuffix(form.stem.dropFirst(length)) { return (time, form.isSidecar) }
        }
        return nil
    }

    /// Whether `rest` is what may follow a template's stem: at most two `-DIGITS` counters,
    /// then optionally `_CHANNEL` with the characters of ``TakeFiles/channelFileNames(_:)``.
    private static func isSegmentSuffix(_ rest: ArraySlice<UInt8>) -> Bool {
        var rest = rest
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        for _ in 0..<2 {
            guard rest.first == UInt8(ascii: "-") else { break }
            let digits = rest.dropFirst().prefix(while: isDigit)
            guard !digits.isEmpty else { return false }
            rest = rest.dropFirst(1 + digits.count)
        }
        guard let first = rest.first else { return true }
        guard first == UInt8(ascii: "_"), rest.count > 1 else { return false }
        return rest.dropFirst().allSatisfy { byte in
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
        }
    }
}
