import JackHostConsumers

/// What a session stores of jackhost: `jackhost.conf` in the session's folder, plain text a
/// person can read and edit. One setting a line, `NAME = VALUE`; `#` starts a comment line.
///
/// - `jackhost-settings = 1` comes first: the format's version. A later version is refused
///   with a line that says so, not half read.
/// - `record-on-load = yes` starts a take when the session has loaded; `no` (the default)
///   waits for a start (OSC, MIDI, SIGUSR1) unless a trigger setting decides.
/// - `takes = FOLDER` is where takes go, relative to the session folder (default `takes`).
/// - `take-name = NAME` is the take's file name in it; `%s` is the session's name, and time
///   fields (`%Y%m%d-%H%M%S`) make each take's name its own (default `%s-%Y%m%d-%H%M%S`).
///   Without an extension, the `format` setting's is added (`.wav` by default).
/// - Every other NAME is a long option of `jackhost run` without its dashes: `format = flac`,
///   `connect = system:capture_1` (on several lines for several), `osc = 7770`, `http = 8080`,
///   `plugin = ./plugins/peak.so`. A switch takes `yes` or `no`. The values are checked exactly
///   as on the command line; relative paths are inside the session folder (jackhost runs there).
///
/// Parsing does not read the file and saving does not write it: ``SessionFolder`` does both.
struct SessionSettings: Equatable {
    /// The file's name inside the session folder.
    static let fileName = "jackhost.conf"
    /// The format this jackhost reads and writes.
    static let version = 1

    /// One `run` option, as `--NAME` or `--NAME=VALUE`.
    struct Option: Equatable {
        var name: String
        /// nil for a switch set to `yes`.
        var value: String?
    }

    /// The text as read (or made for a new session): what a save writes back.
    let text: String
    var recordOnLoad = false
    var takesFolder = "takes"
    var takeName = "%s-%Y%m%d-%H%M%S"
    /// The special settings already read (each may be given once).
    private var seen: Set<String> = []
    /// The `run` options, in the file's order.
    var options: [Option] = []

    /// The settings a new session starts with, commented for the person who opens the file.
    static let defaultText = """
        # jackhost's settings for this session. jackhost reads them when the session opens and
        # writes them back when the session is saved. One setting a line: NAME = VALUE. NAME is
        # a long option of `jackhost run` without its dashes (`man jackhost`, IN A SESSION);
        # a switch takes yes or no; an option given more than once takes several lines.
        # Relative paths are inside this folder.
        jackhost-settings = 1
        # Start a take as soon as the session has loaded (yes), or wait for a start (no): OSC
        # /jackhost/start, MIDI Machine Control, SIGUSR1, or a trigger set below.
        record-on-load = no
        # Where takes go, inside the session folder, and their names: %s is the session's name;
        # without an extension, the format's is added.
        takes = takes
        take-name = %s-%Y%m%d-%H%M%S
        # For example:
        # format = flac
        # split = 1h
        # trigger = -40dBFS
        # pre-roll = 2
        # connect = system:capture_1
        # connect = system:capture_2
        # osc = 7770
        # http = 8080
        # plugin = plugins/peak.so

        """

    /// Reads `text`; `runOptions` is `run`'s option table, against which names are checked.
    init(text: String, runOptions: [OptionSpec]) throws(UsageError) {
        self.text = text
        var sawVersion = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = Self.trimmed(line)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let place = "\(Self.fileName) line \(index + 1)"
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw UsageError("\(place): \"\(ValueParsing.shown(trimmed))\" is not NAME = VALUE")
            }
            let name = Self.trimmed(trimmed[..<equals])
            let value = Self.trimmed(trimmed[trimmed.index(after: equals)...])
            if !sawVersion {
                try Self.checkVersion(name: name, value: value, place: place)
                sawVersion = true
                continue
            }
            try read(name: name, value: value, place: place, runOptions: runOptions)
        }
        if !sawVersion { throw UsageError("\(Self.fileName) has no settings; its first one is jackhost-settings = \(Self.version)") }
    }

    private static func checkVersion(name: String, value: String, place: String) throws(UsageError) {
        guard name == "jackhost-settings" else {
            throw UsageError("\(place): the first setting must be jackhost-settings = \(version), not \"\(ValueParsing.shown(name))\"")
        }
        guard value == String(version) else {
            throw UsageError(
                "\(place): settings format \"\(ValueParsing.shown(value))\" is not one this jackhost reads (\(version)); a newer jackhost wrote it")
        }
    }

    private mutating func read(name: String, value: String, place: String, runOptions: [OptionSpec]) throws(UsageError) {
        if ["jackhost-settings", "record-on-load", "takes", "take-name"].contains(name) {
            guard seen.insert(name).inserted, name != "jackhost-settings" else { throw UsageError("\(place): \(name) is given twice") }
        }
        switch name {
        case "record-on-load": recordOnLoad = try Self.switchValue(value, place: place, name: name)
        case "takes":
            guard !value.isEmpty else { throw UsageError("\(place): takes needs a folder, e.g. takes = takes") }
            takesFolder = value
        case "take-name":
            guard !value.isEmpty, !value.contains("/") else {
                throw UsageError("\(place): take-name is a file name without folders, e.g. take-name = %s-%Y%m%d-%H%M%S.wav")
            }
            takeName = value
        default: try readOption(name: name, value: value, place: place, runOptions: runOptions)
        }
    }

    private mutating func readOption(name: String, value: String, place: String, runOptions: [OptionSpec]) throws(UsageError) {
        guard let spec = runOptions.first(where: { $0.long == name && !$0.hidden }), !Self.sessionOwned.contains(name) else {
            let reason = Self.sessionOwned.contains(name) ? "the session manager decides it" : "no `jackhost run` option has that name"
            throw UsageError("\(place): \"\(ValueParsing.shown(name))\" cannot be set here: \(reason)")
        }
        if spec.valueName == nil {
            if try Self.switchValue(value, place: place, name: name) { options.append(Option(name: name, value: nil)) }
            return
        }
        guard !value.isEmpty else { throw UsageError("\(place): \(name) needs a value (\(spec.valueName ?? "VALUE"))") }
        if !spec.repeatable, options.contains(where: { $0.name == name }) { throw UsageError("\(place): \(name) is given twice") }
        options.append(Option(name: name, value: value))
    }

    /// Options a session decides: the client's name is the manager's client id, and the take
    /// is `takes` and `take-name`.
    static let sessionOwned: Set<String> = ["name", "help", "record"]

    private static func switchValue(_ value: String, place: String, name: String) throws(UsageError) -> Bool {
        switch value {
        case "yes": return true
        case "no": return false
        default: throw UsageError("\(place): \(name) takes yes or no, not \"\(ValueParsing.shown(value))\"")
        }
    }

    /// Whether a setting chooses when takes start (otherwise they start on request).
    var hasTrigger: Bool { options.contains { ["trigger", "transport", "freewheel", "signal-trigger"].contains($0.name) } }

    /// The takes folder: inside the session's `folder` unless absolute.
    func takesPath(folder: String) -> String {
        takesFolder.hasPrefix("/") ? takesFolder : Self.joined(folder, takesFolder)
    }

    /// The take's path template: the takes folder and the take name, with `%s` standing for
    /// `displayName` (`%%s` stays a literal `%s`).
    func takePath(folder: String, displayName: String) -> String {
        let safeName = displayName.isEmpty ? "session" : displayName.replacing("/", with: "-").replacing("%", with: "%%")
        var name = ""
        var escaped = false
        for character in takeName {
            if escaped {
                name += character == "s" ? safeName : "%\(character)"
                escaped = false
            } else if character == "%" {
                escaped = true
            } else {
                name.append(character)
            }
        }
        if escaped { name += "%" }
        if !takeName.contains(".") {
            let format = options.last { $0.name == "format" }?.value
            name += "." + (format.flatMap { AudioContainer(name: $0)?.fileExtension } ?? "wav")
        }
        return Self.joined(takesPath(folder: folder), name)
    }

    static func joined(_ folder: String, _ name: String) -> String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }

    /// `text` without spaces and tabs at either end.
    static func trimmed(_ text: Substring) -> String {
        let isBlank = { (character: Character) in character == " " || character == "\t" || character == "\r" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(text[first...last])
    }

    /// `jackhost run`'s arguments for this session: the take's path, the client id as the JACK
    /// client's name, every option, `--signal-trigger` when no setting chooses a trigger, and
    /// `--reconnect` unless a setting says (a session outlives a JACK server's restart).
    func runArguments(folder: String, displayName: String, clientID: String) -> [String] {
        var arguments = ["--record=\(takePath(folder: folder, displayName: displayName))", "--name=\(clientID)"]
        for option in options { arguments.append(option.value.map { "--\(option.name)=\($0)" } ?? "--\(option.name)") }
        if !hasTrigger { arguments.append("--signal-trigger") }
        if !options.contains(where: { ["reconnect", "no-reconnect"].contains($0.name) }) { arguments.append("--reconnect") }
        return arguments
    }
}
