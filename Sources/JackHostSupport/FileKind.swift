// FileKind.swift
//
// What is at a path, from stat(2). FileManager's fileExists(atPath:isDirectory:) needs
// ObjCBool, which only full Foundation has (see Lock.swift for why the library avoids it).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a path names, following symbolic links.
package enum FileKind: Equatable, Sendable {
    /// Nothing (or nothing this process may look at).
    case missing
    /// A directory.
    case directory
    /// A regular file, device, FIFO or socket.
    case other

    /// What `path` names now.
    package init(atPath path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            self = .missing
            return
        }
        self = (status.st_mode & S_IFMT) == S_IFDIR ? .directory : .other
    }

    /// Whether `path` names a FIFO (following symbolic links).
    package static func isFIFO(atPath path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO
    }
}
