import FoundationEssentials
import JackHost
import JackHostConsumers

/// One command as `--help`, the man page and the shell completions describe it: the single
/// source all three are generated from, so they cannot drift apart.
struct CommandEntry: Sendable {
    /// "record", or "plugin inspect" for a subcommand.
    let name: String
    /// What follows the name in a usage line, e.g. "FILE [OPTIONS]".
    let synopsis: String
    /// The paragraph `--help` prints under the usage line.
    let summary: String
    /// The options the command parses: the very table it hands to ``parseArguments(_:options:command:)``.
    let options: [OptionSpec]
    /// What its positional argument completes to.
    let positional: ValueCompletion

    /// The text `jackhost NAME --help` prints.
    var usage: String { CommandTables.usage(name, synopsis: synopsis, summary: summary, options: options) }

    /// The options `--help`, the man page and the completions show (not the internal ones).
    var visibleOptions: [OptionSpec] { options.filter { !$0.hidden } }
}

/// What a value (of an option, or a positional argument) completes to.
enum ValueCompletion: Equatable, Sendable {
    /// Free text: nothing to offer.
    case none
    /// A file name.
    case file
    /// A directory name.
    case directory
    /// A plugin: a file ending in `.so`.
    case plugin
    /// The containers this machine's libsndfile writes (asked of `jackhost complete formats`).
    case formats
    /// The server's output ports (asked of `jackhost complete ports --outputs`).
    case outputPorts
    /// The server's input ports (asked of `jackhost complete ports --inputs`).
    case inputPorts
    /// One of a fixed list of words.
    case choices([String])
}

/// Every command, environment variable and file jackhost documents.
enum CommandCatalog {
    /// The canonical names of the sample formats `record` writes.
    static let fileSampleFormats = ["f32", "s32", "s24", "s16"]

    static let info = CommandEntry(
        name: "info", synopsis: "[--server NAME] [--json]",
        summary:
            "Print what the JACK server reports: the AVAudioSession analog, and the streams (each client with audio outputs, such as an AES67 stream under PipeWire, named after its SDP session).",
        options: CommandTables.info, positional: .none)
    static let record = CommandEntry(
        name: "record", synopsis: "[FILE] [OPTIONS]",
        summary: "Record every input to FILE. Meters show when stdout is a terminal; at a terminal, m drops a marker and r rotates the file.",
        options: CommandTables.record, positional: .file)
    static let meter = CommandEntry(
        name: "meter", synopsis: "[OPTIONS]",
        summary: "Show peak/RMS meters per input and print a summary table at exit.",
        options: CommandTables.meter, positional: .none)
    static let stream = CommandEntry(
        name: "stream", synopsis: "[OPTIONS]",
        summary: "Write raw samples to stdout or a FIFO, e.g. piped into sox.",
        options: CommandTables.stream, positional: .none)
    static let run = CommandEntry(
        name: "run", synopsis: "[--record FILE] [--meter] [--stream] [--plugin PATH[:key=value,...]]... [OPTIONS]",
        summary: "Run several consumers at once on the same inputs.",
        options: CommandTables.run, positional: .none)
    static let signal = CommandEntry(
        name: "signal", synopsis: "[OPTIONS]",
        summary: "Play a test signal on N output ports: distinct tones, a sine, or a bit-exact sequence.",
        options: SignalCommand.options, positional: .none)
    static let pluginInspect = CommandEntry(
        name: "plugin inspect", synopsis: "PATH",
        summary: "Print a plugin's name, version, ABI version, mode and options. Checks the file's ELF "
            + "symbols first; creates no instance, but loading runs the library's constructors.",
        options: PluginCommand.inspectOptions, positional: .plugin)
    static let pluginNew = CommandEntry(
        name: "plugin new", synopsis: "NAME [--directory DIR] [--mode realtime|deferred]",
        summary: "Write a plugin package NAME that builds a .dynamic library jackhost can load.",
        options: PluginCommand.newOptions, positional: .none)
    static let completions = CommandEntry(
        name: "completions", synopsis: "bash|zsh|fish",
        summary: "Print the completion script for a shell (the package installs them; "
            + "`source <(jackhost completions bash)` tries one without installing).",
        options: [CommandTables.help], positional: .choices(CompletionScript.Shell.allCases.map(\.rawValue)))

    /// Commands that only group subcommands ("plugin inspect", "plugin new"), with one line each.
    static let groups: [(String, String)] = [("plugin", "inspect a plugin, or start writing one")]

    /// Every command, in the order the man page lists them.
    static let all: [CommandEntry] = [info, record, meter, stream, run, signal, pluginInspect, pluginNew, completions]

    /// The first words of the commands: info, record, ..., plugin, completions.
    static var topLevelNames: [String] {
        var names: [String] = []
        for entry in all {
            let first = String(entry.name.split(separator: " ")[0])
            if !names.contains(first) { names.append(first) }
        }
        return names
    }

    /// The entry called `name` ("record", "plugin new").
    static func entry(_ name: String) -> CommandEntry? { all.first { $0.name == name } }

    /// What an option's value completes to in `command`.
    static func completion(of option: OptionSpec, in command: String) -> ValueCompletion {
        guard option.takesValue else { return .none }
        switch option.long {
        case "format": return .formats
        case "record", "output", "results": return .file
        case "directory", "jackhost-path": return .directory
        case "plugin": return .plugin
        case "connect": return command == "signal" ? .inputPorts : .outputPorts
        case "sample-format": return .choices(command == "record" ? fileSampleFormats : SampleFormat.allCases.map(\.name))
        case "record-sample-format": return .choices(fileSampleFormats)
        case "plugin-isolation": return .choices(["process", "none"])
        case "kind": return .choices(["tones", "sine", "sequence"])
        case "mode": return .choices(["realtime", "deferred"])
        default: return .none
        }
    }

    // MARK: Exit statuses

    /// Every exit status, in order (taken from ``ExitStatus`` itself, so a new one is listed).
    static var exitStatuses: [ExitStatus] { (0...255).compactMap { ExitStatus(rawValue: Int32($0)) } }

    /// What a status means; the switch is exhaustive, so a new status needs its line here.
    static func meaning(of status: ExitStatus) -> String {
        switch status {
        case .success: return "success"
        case .failure:
            return "runtime failure (no server, a client name in use, write error, lost frames to a failed disk, frames a consumer never received)"
        case .usage: return "usage error (unknown option, bad value, unwritable path, an existing file without --overwrite)"
        case .serverLost: return "the JACK server went away during the run"
        case .pluginFailed:
            return
                "the take is complete, but a plugin failed (crashed, hung or overran and was restarted, given up or bypassed); the summary names it"
        case .session:
            return
                "in a session (NSM_URL): the manager refused jackhost or did not answer, its open could not be used, or the session's folder or jackhost.conf could not be made or read; the manager got an /error"
        }
    }

    /// The "Exit status:" block of every `--help`.
    static var exitStatusHelp: String {
        "Exit status:\n" + exitStatuses.map { "  \($0.rawValue)  " + wrapped(meaning(of: $0), width: 92, indent: 5) }.joined(separator: "\n")
    }

    // MARK: Environment and files

    /// An environment variable jackhost reads (or sets for its hooks).
    struct Variable: Sendable {
        /// Its name.
        let name: String
        /// What it does.
        let meaning: String
    }

    /// Every environment variable jackhost reads, and the ones it sets for hooks.
    static let environment: [Variable] = [
        Variable(name: "JACK_DEFAULT_SERVER", meaning: "the server to use when --server is not given (checked like --server)"),
        Variable(
            name: "JACK_NO_START_SERVER",
            meaning:
                "read by libjack; jackhost opens its clients with JackNoStartServer, so it never starts a server either way (--embedded-server runs a private one)"
        ),
        Variable(
            name: "JACKHOST_SIMD",
            meaning: "\"portable\" runs the portable sample kernels instead of AVX2 (`jackhost --version` says which run)"),
        Variable(name: "JACKHOST_DEBUG_LIBJACK", meaning: "set, libjack's own error and info messages are printed instead of dropped"),
        Variable(
            name: "NOTIFY_SOCKET",
            meaning:
                "set by systemd for Type=notify: jackhost sends READY=1, STATUS= lines and STOPPING=1 to it, then removes it from its environment"),
        Variable(name: "WATCHDOG_USEC", meaning: "set by systemd's WatchdogSec=: jackhost pings the watchdog while audio flows"),
        Variable(name: "WATCHDOG_PID", meaning: "set by systemd: the watchdog applies when it names jackhost's process"),
        Variable(name: "PATH", meaning: "where --on-file-open, --on-file-close and --on-rotate look for CMD when it has no '/'"),
        Variable(name: "JACKHOST_EVENT", meaning: "set for a hook: open, close, rotate or alarm"),
        Variable(name: "JACKHOST_FILE", meaning: "set for a hook: the file (for rotate, the new one)"),
        Variable(
            name: "NSM_URL",
            meaning:
                "set by a New Session Manager: `jackhost` without arguments joins the session (see IN A SESSION); with a command it is ignored"),
    ]

    /// The "Environment:" block of `jackhost --help`.
    static var environmentHelp: String {
        let width = (environment.map(\.name.count).max() ?? 0) + 2
        return "Environment:\n"
            + environment.map { "  " + $0.name.padded(to: width) + wrapped($0.meaning, width: 96 - width, indent: width + 2) }
            .joined(separator: "\n")
    }

    /// A file jackhost writes or the package installs.
    struct File: Sendable {
        /// Its path or name pattern.
        let path: String
        /// What it is.
        let meaning: String
    }

    /// The files the man page lists.
    static let files: [File] = [
        File(
            path: "jackhost-YYYYMMDD-HHMMSS.wav",
            meaning: "the take record writes without FILE, named when the first audio arrives; FILE may hold strftime fields (%Y%m%d-%H%M%S)"),
        File(path: "NAME-0002.EXT, NAME-0003.EXT, ...", meaning: "the numbered segments of a take split by --split, or of triggered takes"),
        File(path: "NAME_in_1.EXT, NAME_in_2.EXT, ...", meaning: "one mono file per input with --channel-files"),
        File(
            path: "NAME.json",
            meaning: "the sidecar beside each file with --sidecar: wall-clock and JACK frame time of the first sample, ports, losses"),
        File(
            path: "SESSION/jackhost.conf",
            meaning: "in a session: jackhost's settings, one `run` option a line (NAME = VALUE), read at open and written at save"),
        File(
            path: "SESSION/takes/",
            meaning: "in a session: the takes, named %s-%Y%m%d-%H%M%S.wav (%s: the session's name) unless jackhost.conf says otherwise"),
        File(path: "/usr/lib/jackhost/swift/", meaning: "the Swift runtime jackhost runs on (found through its RUNPATH); Swift plugins share it"),
        File(path: "/usr/include/jackhost/jackhost_plugin.h", meaning: "the C plugin ABI; `pkg-config --cflags jackhost-plugin` points at it"),
        File(path: "/usr/share/doc/jackhost/examples/", meaning: "example plugins (C and Swift) and a systemd unit for unattended logging"),
    ]

    /// Breaks `text` into lines of at most `width` characters, continuing with `indent` spaces.
    static func wrapped(_ text: String, width: Int, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
