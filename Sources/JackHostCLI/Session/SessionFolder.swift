import Glibc

/// Why a session could not be opened or saved, with the API's code for the `/error` reply.
struct SessionError: Error, CustomStringConvertible {
    let code: NSMProtocol.ErrorCode
    /// One line for the manager and for stderr.
    let description: String
}

/// The session's folder (the path `/nsm/client/open` names, which the manager does not
/// create): made when new, with the takes folder and a commented settings file; its settings
/// read when it exists. Saving writes the settings atomically: a new file beside the old one,
/// fsync, rename over it, fsync of the folder, so a crash leaves the old or the new file,
/// never half of one. Main thread only.
struct SessionFolder {
    let path: String

    init(path: String) { self.path = path }

    var settingsPath: String { SessionSettings.joined(path, SessionSettings.fileName) }

    /// Opens the folder: makes it (and its settings file) when it does not exist, reads and
    /// checks the settings, and makes their takes folder.
    func open(runOptions: [OptionSpec]) throws(SessionError) -> SessionSettings {
        guard path.hasPrefix("/") else {
            throw SessionError(code: .createFailed, description: "the session path \"\(ValueParsing.shown(path))\" is not absolute")
        }
        try Self.makeFolders(path)
        var text = try readSettingsText()
        if text == nil {
            try write(SessionSettings.defaultText)
            text = SessionSettings.defaultText
        }
        let settings: SessionSettings
        do {
            settings = try SessionSettings(text: text ?? "", runOptions: runOptions)
        } catch {
            throw SessionError(code: .badProject, description: "\(settingsPath): \(error.message)")
        }
        try Self.makeFolders(settings.takesPath(folder: path))
        return settings
    }

    /// Makes the folder jackhost's working directory, so relative paths in the settings are
    /// inside it and go with it when the session is copied.
    func enter() throws(SessionError) {
        guard chdir(path) == 0 else {
            throw SessionError(code: .general, description: "cannot enter the session folder \(path): \(Self.reason(errno))")
        }
    }

    /// Writes the settings back (the session is saved).
    func save(_ settings: SessionSettings) throws(SessionError) { try write(settings.text) }

    /// The settings file's text, or nil when there is none.
    private func readSettingsText() throws(SessionError) -> String? {
        let descriptor = Glibc.open(settingsPath, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw SessionError(code: .badProject, description: "cannot read \(settingsPath): \(Self.reason(errno))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SessionError(code: .badProject, description: "cannot read \(settingsPath): \(Self.reason(errno))") }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= 1 << 20 else {
                throw SessionError(code: .badProject, description: "\(settingsPath) is over 1 MiB; it is not jackhost's")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to the settings file atomically.
    private func write(_ text: String) throws(SessionError) {
        let temporary = "\(settingsPath).new-\(getpid())"
        let failure = { (what: String) in SessionError(code: .createFailed, description: "cannot \(what) \(temporary): \(Self.reason(errno))") }
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("create") }
        // From here the temporary file is ours (O_EXCL): on any failure it is removed.
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let error = failure("write")
                close(descriptor)
                unlink(temporary)
                throw error
            }
            bytes = bytes.dropFirst(count)
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            let error = failure("sync")
            unlink(temporary)
            throw error
        }
        guard rename(temporary, settingsPath) == 0 else {
            let error = SessionError(code: .createFailed, description: "cannot replace \(settingsPath): \(Self.reason(errno))")
            unlink(temporary)
            throw error
        }
        let folder = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Makes `path` and its missing parents, as `mkdir -p` does.
    static func makeFolders(_ path: String) throws(SessionError) {
        var built = ""
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o755) == 0 || errno == EEXIST {
                var status = stat()
                if stat(built, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR { continue }
                throw SessionError(code: .createFailed, description: "cannot create the session folder \(path): \(built) is not a folder")
            }
            throw SessionError(code: .createFailed, description: "cannot create the session folder \(path): \(built): \(reason(errno))")
        }
    }

    private static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
