import FoundationEssentials
import Glibc
import JackHost

/// Names a take's files and creates them without ever overwriting one by accident.
///
/// - An exact name (`take.wav`) is created with `O_EXCL`: an existing file, or a symbolic
///   link (dangling or not), is refused unless ``overwrite`` is set. The check runs twice,
///   in ``validate()`` before the run, and atomically at creation, so a file that appears
///   in between is refused too.
/// - An automatic name (``TakeName/automatic(directory:prefix:fileExtension:)``) is made from
///   the wall-clock time the first audio arrives, `jackhost-20261201-141503.wav`, and counts
///   up (`…-141503-2.wav`) until `O_EXCL` succeeds, so two recorders never collide.
/// - Later segments (``Recorder``'s split files, or new files after a server loss) are
///   numbered `NAME-0002.ext`, `NAME-0003.ext`, …; a number that is taken is skipped, never
///   overwritten.
public struct TakeFiles: Sendable {
    /// What the first file is called.
    public enum TakeName: Sendable, Equatable {
        /// Exactly this path (`-` is standard output).
        case exact(String)
        /// `DIRECTORY/PREFIX-YYYYMMDD-HHMMSS.EXT` in local time, made unique by a counter.
        case automatic(directory: String, prefix: String, fileExtension: String)
    }

    /// The take's name.
    public let name: TakeName
    /// Whether every file is numbered, from `-0001` (with splitting) or only later ones.
    public let numbersEveryFile: Bool
    /// Replace existing files instead of refusing them (`--overwrite`).
    public let overwrite: Bool
    /// Whether later numbered segments may follow (a recorder's do; a stream's file has none).
    public let makesSegments: Bool
    /// The stem numbered segments are made from, once the first file has a name.
    private var base: String?
    /// The next segment number.
    private var nextIndex = 1

    /// Describes a take's files.
    public init(name: TakeName, numbersEveryFile: Bool = false, overwrite: Bool = false, makesSegments: Bool = true) {
        self.name = name
        self.numbersEveryFile = numbersEveryFile
        self.overwrite = overwrite
        self.makesSegments = makesSegments
        if case .exact(let path) = name { base = path }
    }

    /// The name as shown before recording starts (the pattern, for an automatic name).
    public var displayName: String {
        switch name {
        case .exact(let path): return path
        case .automatic(let directory, let prefix, let fileExtension):
            return Self.joined(directory, "\(prefix)-YYYYMMDD-HHMMSS.\(fileExtension)")
        }
    }

    /// Whether the take goes to standard output.
    public var isStandardOutput: Bool { name == .exact("-") }

    /// Checks, before anything is recorded, that the first file can be created here and that
    /// nothing that belongs to another take would be overwritten.
    public func validate() throws(RecorderError) {
        let path: String
        switch name {
        case .exact(let exact):
            if exact == "-" { return }
            path = exact
        case .automatic(let directory, _, _):
            // The name is not known yet; the directory must take a new file.
            try Self.checkDirectory(of: Self.joined(directory, "probe"), shownAs: displayName)
            return
        }
        var link = stat()
        if lstat(path, &link) == 0 {
            if (link.st_mode & S_IFMT) == S_IFDIR { throw .unwritablePath(path: path, reason: "it is a directory") }
            if !overwrite && Self.holdsATake(link) {
                if (link.st_mode & S_IFMT) == S_IFLNK && FileKind(atPath: path) == .missing { throw .danglingSymlink(path: path) }
                throw .fileExists(path: path)
            }
        } else if !overwrite && makesSegments {
            // Nothing there; but with numbered segments, a previous take's `NAME-0002.ext` must not be reused.
            if let taken = Self.existingSegment(of: path) { throw .segmentExists(path: taken) }
        }
        try Self.checkDirectory(of: path, shownAs: path)
        if overwrite, lstat(path, &link) == 0 {
            // An existing file we may replace: it must open for writing (without truncating it now).
            let probe = open(path, O_WRONLY | O_CLOEXEC)
            guard probe >= 0 else { throw .unwritablePath(path: path, reason: Self.reason(errno)) }
            close(probe)
        }
    }

    /// Creates the next file and returns its path and an open descriptor (write only).
    ///
    /// - Parameter now: The wall-clock time that names an automatic take.
    public mutating func createNext(now: time_t = time(nil)) throws(RecorderError) -> (path: String, descriptor: Int32) {
        let index = nextIndex
        nextIndex += 1
        if base == nil, case .automatic(let directory, let prefix, let fileExtension) = name {
            // The first file of an automatic take: the time, then a counter until one is free.
            let stamp = Self.timestamp(now)
            for attempt in 1...1000 {
                let suffix = attempt == 1 ? "" : "-\(attempt)"
                let stem = Self.joined(directory, "\(prefix)-\(stamp)\(suffix)")
                let path = numbersEveryFile ? "\(stem)-\(index.zeroPadded(to: 4)).\(fileExtension)" : "\(stem).\(fileExtension)"
                if !numbersEveryFile && Self.existingSegment(of: "\(stem).\(fileExtension)") != nil { continue }
                if let descriptor = try create(path, exclusive: true, skipIfTaken: true) {
                    base = "\(stem).\(fileExtension)"
                    return (path, descriptor)
                }
            }
            throw .openFailed(path: displayName, reason: "a thousand names for this second are taken")
        }
        guard let base else { throw .openFailed(path: displayName, reason: "no name") }
        if index == 1 && !numbersEveryFile {
            // The name asked for: refused if it appeared since validate(), unless --overwrite.
            guard let descriptor = try create(base, exclusive: !overwrite, skipIfTaken: false) else {
                throw .fileExists(path: base)
            }
            return (base, descriptor)
        }
        // A numbered segment: a number that is taken is skipped, never overwritten.
        for number in index...9999 {
            let path = Self.numberedPath(base, index: number)
            if let descriptor = try create(path, exclusive: !overwrite, skipIfTaken: true) {
                nextIndex = number + 1
                return (path, descriptor)
            }
        }
        throw .openFailed(path: Self.numberedPath(base, index: 9999), reason: "every segment number up to 9999 is taken")
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
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
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

    /// The first `NAME-NNNN.ext` beside `path` that exists, if any.
    static func existingSegment(of path: String) -> String? {
        let directory = path.deletingLastPathComponent
        let file = String(path.dropFirst(directory.isEmpty ? 0 : directory.count + (directory == "/" ? 0 : 1)))
        let (stem, ext) = file.splittingPathExtension
        guard let stream = opendir(directory.isEmpty ? "." : directory) else { return nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(stem + "-") else { continue }
            let (entryStem, entryExt) = name.splittingPathExtension
            let number = entryStem.dropFirst(stem.count + 1)
            if entryExt == ext && number.count == 4 && number.allSatisfy({ $0.isNumber && $0.isASCII }) {
                return joined(directory, name)
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

    /// `YYYYMMDD-HHMMSS` in local time.
    static func timestamp(_ time: time_t) -> String {
        var seconds = time
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "\(Int(parts.tm_year) + 1900)\(Int(parts.tm_mon + 1).zeroPadded(to: 2))\(Int(parts.tm_mday).zeroPadded(to: 2))-"
            + "\(Int(parts.tm_hour).zeroPadded(to: 2))\(Int(parts.tm_min).zeroPadded(to: 2))\(Int(parts.tm_sec).zeroPadded(to: 2))"
    }

    private static func joined(_ directory: String, _ name: String) -> String {
        directory.isEmpty || directory == "." ? name : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// strerror's text with a lower-case first letter, to sit inside jackhost's own sentence.
    static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
