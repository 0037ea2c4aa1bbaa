import CPosix
import Glibc

/// The proof that jackhost wrote a file, or made a directory: an extended attribute.
///
/// Files carry `user.jackhost.take`, set on each file a recorder finalises, that names the
/// template the file was written under, the name it was written as, the file's identity (device,
/// inode, size, modification time) at the end, and, for a take named in UTC (`--utc`), the zone.
/// ``SegmentRetention`` removes a file only when its mark proves it, so:
/// - a file jackhost never wrote has no mark (a user's `_edited.wav`, a file restored from a
///   backup, a take of another program);
/// - a copy has another inode (and `cp` drops the attribute unless asked to keep it);
/// - a file renamed into place has another name or inode than the mark says; for a template
///   with date folders the name is the path below the template's root (`2026/03/29/0100.wav`),
///   so a file moved into another date folder is not proven either;
/// - an edited file has another size or modification time;
/// - a take written under another template (another logger in the same folder), or in another
///   zone (a log that switched to `--utc`, whose earlier names are local times), names that one.
///
/// Directories carry `user.jackhost.directory`, set by ``TakeFiles`` on each directory of a
/// template's date folders that its own mkdir(2) created (never on one that was there before,
/// which mkdir refuses with EEXIST): the template, the directory's path below the root, and its
/// device and inode. ``SegmentRetention`` removes a directory only when this mark proves it and
/// it is empty, so a folder that existed before the log, or one a user made or renamed into
/// place, stays.
///
/// Where the file system stores no user attributes, ``probe(directory:)`` says so before the
/// run, and retention refuses to start; a directory whose mark cannot be set is simply never
/// removed.
public enum TakeMark {
    /// The files' attribute.
    public static let attribute = "user.jackhost.take"
    /// The directories' attribute.
    public static let directoryAttribute = "user.jackhost.directory"

    /// Marks the finalised file at `path` as written under `template`, named in `timeZone`.
    ///
    /// - Returns: nil, or why the mark could not be set (strerror's text).
    public static func write(path: String, template: String, timeZone: TakeTimeZone = .local) -> String? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return TakeFiles.reason(errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return TakeFiles.reason(errno) }
        let value = Array(text(for: status, name: recordedName(path, template: template), template: template, timeZone: timeZone).utf8)
        guard cposix_fsetxattr(descriptor, attribute, value, UInt(value.count)) == 0 else { return TakeFiles.reason(errno) }
        return nil
    }

    /// Whether the file at `path` carries a mark that proves jackhost wrote it under
    /// `template`, named in `timeZone`, as it is now: same name, device, inode, size and
    /// modification time.
    public static func proves(path: String, template: String, timeZone: TakeTimeZone = .local) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        guard let mark = read(path, attribute) else { return false }
        return mark == text(for: status, name: recordedName(path, template: template), template: template, timeZone: timeZone)
    }

    /// Marks the directory at `path`, which this process's mkdir(2) has just created for
    /// `template`, as jackhost's own.
    ///
    /// - Returns: nil, or why the mark could not be set (strerror's text).
    static func writeDirectory(path: String, template: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return TakeFiles.reason(errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return TakeFiles.reason(errno) }
        let value = Array(directoryText(for: status, name: recordedName(path, template: template), template: template).utf8)
        guard cposix_fsetxattr(descriptor, directoryAttribute, value, UInt(value.count)) == 0 else { return TakeFiles.reason(errno) }
        return nil
    }

    /// Whether `path` is a directory (not a link to one) whose mark proves jackhost made it for
    /// `template`, under this name: same path below the root, device and inode.
    static func provesDirectory(path: String, template: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return false }
        guard let mark = read(path, directoryAttribute) else { return false }
        return mark == directoryText(for: status, name: recordedName(path, template: template), template: template)
    }

    /// Checks that files in `directory` can carry marks, with a probe file created and removed.
    ///
    /// - Returns: nil, or why they cannot (for example "Operation not supported").
    public static func probe(directory: String) -> String? {
        let path = TakeFiles.joined(directory.isEmpty ? "." : directory, ".jackhost-mark-probe-\(getpid())")
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return TakeFiles.reason(errno) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let value = Array("probe".utf8)
        return cposix_fsetxattr(descriptor, attribute, value, UInt(value.count)) == 0 ? nil : TakeFiles.reason(errno)
    }

    /// The mark's text for a file in this state: one `key=value` a line, the template last. A
    /// local take's mark is exactly what earlier versions wrote, so their takes stay provable.
    static func text(for status: stat, name: String, template: String, timeZone: TakeTimeZone = .local) -> String {
        let zone = timeZone == .local ? "" : "zone=\(timeZone.rawValue)\n"
        return """
            jackhost-take-mark 1
            name=\(name)
            device=\(status.st_dev)
            inode=\(status.st_ino)
            size=\(status.st_size)
            modified=\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)
            \(zone)template=\(template)
            """
    }

    /// The mark's text for a directory: one `key=value` a line, the template last. (Not its
    /// modification time, which every file made or removed in it changes.)
    static func directoryText(for status: stat, name: String, template: String) -> String {
        """
        jackhost-directory-mark 1
        name=\(name)
        device=\(status.st_dev)
        inode=\(status.st_ino)
        template=\(template)
        """
    }

    /// The name a mark records for `path`: its path below the template's root when the template
    /// has date folders, else its base name (as every mark before date folders did).
    static func recordedName(_ path: String, template: String) -> String {
        if let parsed = try? NameTemplate(parsing: template), !parsed.directoryLevels.isEmpty {
            let root = TakeFiles.joined(parsed.directory, "")
            if path.hasPrefix(root) { return String(path.dropFirst(root.count)) }
        }
        return path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }

    /// The attribute `name` of `path` (not following a link) as text; nil when it has none.
    private static func read(_ path: String, _ name: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 8192)
        let length = cposix_lgetxattr(path, name, &buffer, UInt(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<Int(length)], as: UTF8.self)
    }
}
