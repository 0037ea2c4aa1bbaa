import FoundationEssentials
import Glibc
import JackHostSupport

/// Names a take's files and creates them without ever overwriting one by accident.
///
/// - An exact name (`take.wav`) is created with `O_EXCL`: an existing file, or a symbolic
///   link (dangling or not), is refused unless ``overwrite`` is set. The check runs twice,
///   in ``validate()`` before the run, and atomically at creation, so a file that appears
///   in between is refused too.
/// - An automatic name (``TakeName/automatic(directory:prefix:fileExtension:)``) is made from
///   the wall-clock time the first audio arrives, `jackhost-20261201-141503.wav`, and counts
///   up (`…-141503-2.wav`) until `O_EXCL` succeeds, so two recorders never collide.
/// - A template name (``TakeName/template(_:)``, `log-%Y%m%d-%H%M%S.wav`) is expanded for every
///   segment from the time of its first sample, in ``timeZone``; a name that is taken, or that
///   an earlier segment of this take already has, gets `-2`, `-3`, … before the extension. Its
///   date folders (`/srv/log/%Y/%m/%d/%H%M.wav`) are made as each segment needs them, as
///   `mkdir -p` would, mode 0755 (less the umask), below a root that must exist; each one this
///   process creates carries a ``TakeMark`` so that retention may remove it once it is empty,
///   and one that was there before never does.
/// - Later segments (``Recorder``'s split files, or new files after a server loss) are
///   numbered `NAME-0002.ext`, `NAME-0003.ext`, …; a number that is taken is skipped, never
///   overwritten. Template names are never numbered.
/// - With channel names (`--channel-files`), every segment is a set of mono files,
///   `NAME_in_1.ext`, `NAME_in_2.ext`, …, created all or nothing.
public struct TakeFiles: Sendable {
    /// What the first file is called.
    public enum TakeName: Sendable, Equatable {
        /// Exactly this path (`-` is standard output).
        case exact(String)
        /// `DIRECTORY/PREFIX-YYYYMMDD-HHMMSS.EXT` in ``TakeFiles/timeZone``, made unique by a counter.
        case automatic(directory: String, prefix: String, fileExtension: String)
        /// A path whose file name, and perhaps directories, hold time fields
        /// (`/var/log/audio/log-%Y%m%d-%H%M%S.wav`, `/srv/log/%Y/%m/%d/%H%M.wav`), expanded in
        /// ``TakeFiles/timeZone`` for every segment; see ``TakeFiles/validateTemplate(_:)``.
        case template(String)

        /// The template that matches every file of this name, for ``SegmentRetention``: the
        /// template itself, `DIRECTORY/PREFIX-%Y%m%d-%H%M%S.EXT` for an automatic name, and nil
        /// for an exact name (whose files carry no time).
        public var retentionTemplate: String? {
            switch self {
            case .exact: return nil
            case .template(let template): return template
            case .automatic(let directory, let prefix, let fileExtension):
                let escape = { (text: String) in text.replacing("%", with: "%%") }
                return TakeFiles.joined(escape(directory), "\(escape(prefix))-%Y%m%d-%H%M%S.\(escape(fileExtension))")
            }
        }
    }

    /// The take's name.
    public let name: TakeName
    /// Whether every file is numbered, from `-0001` (with splitting) or only later ones.
    public let numbersEveryFile: Bool
    /// Replace existing files instead of refusing them (`--overwrite`).
    public let overwrite: Bool
    /// Whether later numbered segments may follow (a recorder's do; a stream's file has none).
    public let makesSegments: Bool
    /// The zone template and automatic names are expanded in (`--utc`).
    public let timeZone: TakeTimeZone
    /// The stem numbered segments are made from, once the first file has a name.
    private var base: String?
    /// The next segment number.
    private var nextIndex = 1
    /// The base names of this take's template segments so far, which a later one never reuses.
    private var templateBases: Set<String> = []

    /// Describes a take's files.
    public init(
        name: TakeName, numbersEveryFile: Bool = false, overwrite: Bool = false, makesSegments: Bool = true, timeZone: TakeTimeZone = .local
    ) {
        self.name = name
        self.numbersEveryFile = numbersEveryFile
        self.overwrite = overwrite
        self.makesSegments = makesSegments
        self.timeZone = timeZone
        if case .exact(let path) = name { base = path }
    }

    /// The name as shown before recording starts (the pattern, for an automatic name).
    public var displayName: String {
        switch name {
        case .exact(let path): return path
        case .automatic(let directory, let prefix, let fileExtension):
            return Self.joined(directory, "\(prefix)-YYYYMMDD-HHMMSS.\(fileExtension)")
        case .template(let template): return template
        }
    }

    /// Whether the take goes to standard output.
    public var isStandardOutput: Bool { name == .exact("-") }

    /// Checks, before anything is recorded, that the first file can be created here and that
    /// nothing that belongs to another take would be overwritten.
    ///
    /// - Parameter channelNames: With `--channel-files`, the channels' names (as given to
    ///   ``createNext(now:channelNames:)``): every channel file of the first segment is checked.
    ///   - directoryOnly: Check only that the directory takes new files (channel files whose
    ///     names are not decided yet).
    public func validate(channelNames: [String]? = nil, directoryOnly: Bool = false) throws(RecorderError) {
        let channels = Self.channelSuffixes(channelNames)
        let path: String
        switch name {
        case .exact(let exact):
            if exact == "-" { return }
            path = exact
        case .automatic(let directory, _, _):
            // The name is not known yet; the directory must take a new file.
            try Self.checkDirectory(of: Self.joined(directory, "probe"), shownAs: displayName)
            return
        case .template(let template):
            // Names are made unique by a counter; the fields and the directory (the root, for
            // date folders, which are made as segments need them) must be good.
            let parsed = try NameTemplate(parsing: template, timeZone: timeZone)
            try Self.checkDirectory(of: Self.joined(parsed.directory, "probe"), shownAs: template)
            return
        }
        if directoryOnly { return try Self.checkDirectory(of: path, shownAs: path) }
        let paths = channels.map { $0.map { Self.channelPath(path, channel: $0) } } ?? [path]
        var link = stat()
        for file in paths where lstat(file, &link) == 0 {
            if (link.st_mode & S_IFMT) == S_IFDIR { throw .unwritablePath(path: file, reason: "it is a directory") }
            if !overwrite && Self.holdsATake(link) {
                if (link.st_mode & S_IFMT) == S_IFLNK && FileKind(atPath: file) == .missing { throw .danglingSymlink(path: file) }
                throw .fileExists(path: file)
            }
        }
        if !overwrite && makesSegments {
            // With numbered segments, a previous take's `NAME-0002.ext` must not be reused.
            if let taken = Self.existingSegment(of: path, channels: channels) { throw .segmentExists(path: taken) }
        }
        try Self.checkDirectory(of: path, shownAs: path)
        for file in paths where overwrite && lstat(file, &link) == 0 {
            // An existing file we may replace: it must open for writing (without truncating it now).
            let probe = open(file, O_WRONLY | O_CLOEXEC)
            guard probe >= 0 else { throw .unwritablePath(path: file, reason: Self.reason(errno)) }
            close(probe)
        }
    }

    /// Creates the next segment's files and returns them with open descriptors (write only).
    ///
    /// - Parameters:
    ///   - now: The time of the segment's first sample, which names an automatic take and
    ///     every segment of a template name (in ``timeZone``).
    ///   - channelNames: With `--channel-files`, one name per input (a port's pretty-name, or
    ///     `in_3`): one mono file per name, `NAME_CHANNEL.ext`, in this order, sanitised and
    ///     made unique by ``channelFileNames(_:)``. The set is created all or nothing: when one
    ///     file fails, those already created are closed and removed. Nil (or empty) makes one file.
    public mutating func createNext(now: time_t = time(nil), channelNames: [String]? = nil) throws(RecorderError) -> TakeSegment {
        let channels = Self.channelSuffixes(channelNames)
        let index = nextIndex
        nextIndex += 1
        if case .template(let template) = name {
            // Every segment: the template at this time, then a counter until a name is free.
            let parsed = try NameTemplate(parsing: template, timeZone: timeZone)
            try Self.makeDirectories(parsed, at: now, template: template)
            let first = parsed.path(at: now)
            for attempt in 1...1000 {
                let path = attempt == 1 ? first : Self.counted(first, attempt)
                if templateBases.contains(path) { continue }
                if let segment = try createSet(path, channels: channels, exclusive: !overwrite, skipIfTaken: true) {
                    templateBases.insert(path)
                    return segment
                }
            }
            throw .openFailed(path: first, reason: "a thousand names for this time are taken")
        }
        if base == nil, case .automatic(let directory, let prefix, let fileExtension) = name {
            // The first file of an automatic take: the time, then a counter until one is free.
            let stamp = Self.timestamp(now, in: timeZone)
            for attempt in 1...1000 {
                let suffix = attempt == 1 ? "" : "-\(attempt)"
                let stem = Self.joined(directory, "\(prefix)-\(stamp)\(suffix)")
                let path = numbersEveryFile ? "\(stem)-\(index.zeroPadded(to: 4)).\(fileExtension)" : "\(stem).\(fileExtension)"
                if !numbersEveryFile && Self.existingSegment(of: "\(stem).\(fileExtension)", channels: channels) != nil { continue }
                if let segment = try createSet(path, channels: channels, exclusive: true, skipIfTaken: true) {
                    base = "\(stem).\(fileExtension)"
                    return segment
                }
            }
            throw .openFailed(path: displayName, reason: "a thousand names for this second are taken")
        }
        guard let base else { throw .openFailed(path: displayName, reason: "no name") }
        if index == 1 && !numbersEveryFile {
            // The name asked for: refused if it appeared since validate(), unless --overwrite.
            guard let segment = try createSet(base, channels: channels, exclusive: !overwrite, skipIfTaken: false) else {
                throw .fileExists(path: base)
            }
            return segment
        }
        // A numbered segment: a number that is taken (by any file of the set) is skipped, never overwritten.
        for number in index...9999 {
            let path = Self.numberedPath(base, index: number)
            if let segment = try createSet(path, channels: channels, exclusive: !overwrite, skipIfTaken: true) {
                nextIndex = number + 1
                return segment
            }
        }
        throw .openFailed(path: Self.numberedPath(base, index: 9999), reason: "every segment number up to 9999 is taken")
    }

    /// Creates the segment named `base`: that one file, or one file per channel. Nil when a
    /// name is taken and `skipIfTaken`; on nil or an error, the files created so far are
    /// closed and removed.
    private func createSet(_ base: String, channels: [String]?, exclusive: Bool, skipIfTaken: Bool) throws(RecorderError) -> TakeSegment? {
        let paths = channels.map { $0.map { Self.channelPath(base, channel: $0) } } ?? [base]
        var files: [TakeSegment.File] = []
        func rollBack() {
            for file in files {
                close(file.descriptor)
                // Only a regular file is ours to remove; a device or FIFO was there before.
                if Self.isRegularFile(file.path) { unlink(file.path) }
            }
        }
        for path in paths {
            let descriptor: Int32?
            do {
                descriptor = try create(path, exclusive: exclusive, skipIfTaken: skipIfTaken)
            } catch {
                rollBack()
                throw error
            }
            guard let descriptor else {
                rollBack()
                return nil
            }
            files.append(TakeSegment.File(path: path, descriptor: descriptor))
        }
        return TakeSegment(basePath: base, files: files)
    }

    /// Whether `path` is a name template rather than an exact name: it contains `%`.
    public static func isTemplate(_ path: String) -> Bool { path.contains("%") }

    /// Checks a name template before the run: its fields are among `%Y %m %d %H %M %S %j %y %%`,
    /// none is in the extension, and no directory level after a field is empty, `.` or `..`.
    public static func validateTemplate(_ template: String) throws(RecorderError) {
        _ = try NameTemplate(parsing: template)
    }

    /// The path `template` names at the time `time` in `timeZone` (without a uniqueness counter).
    public static func expandTemplate(_ template: String, at time: time_t, timeZone: TakeTimeZone = .local) throws(RecorderError) -> String {
        try NameTemplate(parsing: template, timeZone: timeZone).path(at: time)
    }

    /// Makes the date folders of `parsed` for the time `time` that do not exist yet, one level
    /// at a time below the root (which must exist), mode 0755, and marks each one this call
    /// creates as jackhost's own (see ``TakeMark``). A level that exists is used as it is, even
    /// a link to a directory, as `mkdir -p` would; it is never marked.
    private static func makeDirectories(_ parsed: NameTemplate, at time: time_t, template: String) throws(RecorderError) {
        for path in parsed.levelDirectories(at: time) {
            if mkdir(path, 0o755) == 0 {
                // A directory that cannot carry its mark is only never removed.
                _ = TakeMark.writeDirectory(path: path, template: template)
                continue
            }
            let error = errno
            guard error == EEXIST, FileKind(atPath: path) == .directory else {
                throw .openFailed(path: path, reason: error == EEXIST ? "it exists and is not a directory" : reason(error))
            }
        }
    }

    /// The channels' names as they appear in file names, in order: every character outside
    /// `A-Z a-z 0-9 . _ + -` becomes `_`, a name is cut to 64 characters, an empty one becomes
    /// `in_N`, and a repeated one gets `_2`, `_3`, … (`mic`, `mic` → `mic`, `mic_2`).
    public static func channelFileNames(_ names: [String]) -> [String] {
        var used: Set<String> = []
        var result: [String] = []
        for (position, name) in names.enumerated() {
            var clean = String(
                name.prefix(64).map { character -> Character in
                    character.isASCII && (character.isLetter || character.isNumber || "._+-".contains(character)) ? character : "_"
                })
            if clean.isEmpty { clean = "in_\(position + 1)" }
            var unique = clean
            var counter = 2
            while used.contains(unique) {
                unique = "\(clean)_\(counter)"
                counter += 1
            }
            used.insert(unique)
            result.append(unique)
        }
        return result
    }

    /// The file of channel `channel` (a name from ``channelFileNames(_:)``) in the segment
    /// `path`: `take-0002.wav`, `in_1` → `take-0002_in_1.wav`.
    public static func channelPath(_ path: String, channel: String) -> String {
        let (stem, ext) = path.splittingPathExtension
        return ext.isEmpty ? "\(stem)_\(channel)" : "\(stem)_\(channel).\(ext)"
    }

    /// The file-name suffixes of `names`, or nil for a take of one file.
    private static func channelSuffixes(_ names: [String]?) -> [String]? {
        guard let names, !names.isEmpty else { return nil }
        return channelFileNames(names)
    }

    /// `log-20261201.wav`, 2 → `log-20261201-2.wav`.
    private static func counted(_ path: String, _ counter: Int) -> String {
        let (stem, ext) = path.splittingPathExtension
        return ext.isEmpty ? "\(stem)-\(counter)" : "\(stem)-\(counter).\(ext)"
    }

    /// Whether what `lstat` found is something a take could be: a regular file or a symbolic
    /// link. A device (`/dev/null`) or a FIFO is a destination, not a take, and is written as is.
    private static func holdsATake(_ status: stat) -> Bool {
        let kind = status.st_mode & S_IFMT
        return kind == S_IFREG || kind == S_IFLNK
    }

    /// Whether `path` names a regular file this process may remove after a failed start: never
    /// a device, FIFO or link that was there before.
    public static func isRegularFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// Opens `path` for writing, creating it; nil when it exists and `skipIfTaken`.
    private func create(_ path: String, exclusive: Bool, skipIfTaken: Bool) throws(RecorderError) -> Int32? {
        var existing = stat()
        if lstat(path, &existing) == 0 && !Self.holdsATake(existing) && (existing.st_mode & S_IFMT) != S_IFDIR {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            if descriptor >= 0 { return descriptor }
            throw .openFailed(path: path, reason: Self.reason(errno))
        }
        // With O_EXCL, open(2) refuses any existing name, links included, and never follows one.
        // Read and write: once libsndfile has closed a WAV, its `bext` chunk is read back and
        // patched through this descriptor (``CodingHistoryPatch``).
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let descriptor = open(path, flags, 0o644)
        if descriptor >= 0 { return descriptor }
        let error = errno
        if error == EEXIST {
            if skipIfTaken { return nil }
            throw .fileExists(path: path)
        }
        throw .openFailed(path: path, reason: Self.reason(error))
    }

    /// `take.wav`, 3 → `take-0003.wav`: four digits sort correctly up to 9999 parts.
    public static func numberedPath(_ path: String, index: Int) -> String {
        let number = index.zeroPadded(to: 4)
        let (stem, ext) = path.splittingPathExtension
        return ext.isEmpty ? "\(stem)-\(number)" : "\(stem)-\(number).\(ext)"
    }

    /// The first `NAME-NNNN.ext` beside `path` that exists, if any; with `channels` (file-name
    /// suffixes from ``channelFileNames(_:)``), the first `NAME-NNNN_CHANNEL.ext` instead.
    static func existingSegment(of path: String, channels: [String]? = nil) -> String? {
        let directory = path.deletingLastPathComponent
        let file = String(path.dropFirst(directory.isEmpty ? 0 : directory.count + (directory == "/" ? 0 : 1)))
        let (stem, ext) = file.splittingPathExtension
        let prefix = Array((stem + "-").utf8)
        let endings = (channels?.map { "_" + $0 } ?? [""]).map { Array((ext.isEmpty ? $0 : "\($0).\(ext)").utf8) }
        guard let stream = opendir(directory.isEmpty ? "." : directory) else { return nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard name.starts(with: prefix) else { continue }
            let rest = name.dropFirst(prefix.count)
            guard rest.prefix(4).count == 4, rest.prefix(4).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { continue }
            if endings.contains(where: { rest.dropFirst(4).elementsEqual($0) }) {
                return joined(directory, String(decoding: name, as: UTF8.self))
            }
        }
        return nil
    }

    /// Checks that `path`'s directory exists and takes a new file, by creating and removing
    /// a probe (access(2) says yes to root everywhere, even in /proc; only creating a file tells).
    private static func checkDirectory(of path: String, shownAs shown: String) throws(RecorderError) {
        let directory = path.deletingLastPathComponent
        let target = directory.isEmpty ? "." : directory
        guard FileKind(atPath: target) == .directory else {
            throw .unwritablePath(path: shown, reason: "directory \(target) does not exist")
        }
        let probePath = joined(directory, ".jackhost-probe-\(getpid())")
        let probe = open(probePath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard probe >= 0 else { throw .unwritablePath(path: shown, reason: reason(errno)) }
        close(probe)
        unlink(probePath)
    }

    /// `YYYYMMDD-HHMMSS` in `timeZone`.
    static func timestamp(_ time: time_t, in timeZone: TakeTimeZone = .local) -> String {
        let parts = timeZone.parts(of: time)
        return "\(Int(parts.tm_year) + 1900)\(Int(parts.tm_mon + 1).zeroPadded(to: 2))\(Int(parts.tm_mday).zeroPadded(to: 2))-"
            + "\(Int(parts.tm_hour).zeroPadded(to: 2))\(Int(parts.tm_min).zeroPadded(to: 2))\(Int(parts.tm_sec).zeroPadded(to: 2))"
    }

    /// `directory/name`, or `name` alone for the current directory.
    static func joined(_ directory: String, _ name: String) -> String {
        directory.isEmpty || directory == "." ? name : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// strerror's text with a lower-case first letter, to sit inside jackhost's own sentence.
    static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
