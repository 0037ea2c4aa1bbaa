import CPosix
import Glibc

/// The proof that jackhost wrote a file: an extended attribute, `user.jackhost.take`, set on each
/// file a recorder finalises, that names the template the file was written under, the name it
/// was written as, and the file's identity (device, inode, size, modification time) at the end.
///
/// ``SegmentRetention`` removes a file only when its mark proves it, so:
/// - a file jackhost never wrote has no mark (a user's `_edited.wav`, a file restored from a
///   backup, a take of another program);
/// - a copy has another inode (and `cp` drops the attribute unless asked to keep it);
/// - a file renamed into place has another name or inode than the mark says;
/// - an edited file has another size or modification time;
/// - a take written under another template (another logger in the same folder) names that one.
///
/// Where the file system stores no user attributes, ``probe(directory:)`` says so before the
/// run, and retention refuses to start.
public enum TakeMark {
    /// The attribute's name.
    public static let attribute = "user.jackhost.take"

    /// Marks the finalised file at `path` as written under `template`.
    ///
    /// - Returns: nil, or why the mark could not be set (strerror's text).
    public static func write(path: String, template: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return TakeFiles.reason(errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return TakeFiles.reason(errno) }
        let value = Array(text(for: status, name: baseName(path), template: template).utf8)
        guard cposix_fsetxattr(descriptor, attribute, value, UInt(value.count)) == 0 else { return TakeFiles.reason(errno) }
        return nil
    }

    /// Whether the file at `path` carries a mark that proves jackhost wrote it under
    /// `template`, as it is now: same name, device, inode, size and modification time.
    public static func proves(path: String, template: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let length = cposix_lgetxattr(path, attribute, &buffer, UInt(buffer.count))
        guard length > 0 else { return false }
        return String(decoding: buffer[0..<Int(length)], as: UTF8.self) == text(for: status, name: baseName(path), template: template)
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

    /// The mark's text for a file in this state: one `key=value` a line, the template last.
    static func text(for status: stat, name: String, template: String) -> String {
        """
        jackhost-take-mark 1
        name=\(name)
        device=\(status.st_dev)
        inode=\(status.st_ino)
        size=\(status.st_size)
        modified=\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)
        template=\(template)
        """
    }

    private static func baseName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }
}
