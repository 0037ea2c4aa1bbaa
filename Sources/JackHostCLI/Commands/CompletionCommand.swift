import FoundationEssentials
import JackHost
import JackHostConsumers

/// `jackhost completions SHELL` prints a completion script; `jackhost complete WHAT` (internal,
/// not in `--help`) is what those scripts ask when Tab is pressed.
enum CompletionCommand {
    /// `jackhost completions bash|zsh|fish`.
    static func run(_ arguments: [String]) throws -> ExitStatus {
        let entry = CommandCatalog.completions
        let parsed = try parseArguments(arguments, options: entry.options, command: entry.name)
        if parsed.has("help") {
            print(entry.usage)
            return .success
        }
        let shells = CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", ")
        guard parsed.positionals.count == 1, let name = parsed.positionals.first else {
            throw UsageError("completions takes one shell: \(shells) (e.g. `jackhost completions bash`)")
        }
        guard let shell = CompletionScript.Shell(rawValue: name) else {
            throw UsageError("no completions for the shell \"\(ValueParsing.shown(name))\"; use \(shells)")
        }
        print(CompletionScript.render(shell), terminator: "")
        return .success
    }

    /// The options of `jackhost complete ports`.
    static let portOptions: [OptionSpec] = [
        OptionSpec("server", short: "s", value: "NAME", help: "JACK server to ask"),
        OptionSpec("outputs", help: "list output ports (what --connect of a capture command takes)"),
        OptionSpec("inputs", help: "list input ports (what --connect of signal takes)"),
    ]

    /// `jackhost complete formats` and `jackhost complete ports --outputs|--inputs [--server NAME]`:
    /// one value a line, for the completion scripts. Never starts a server; prints nothing and
    /// exits 1 when none answers.
    static func complete(_ arguments: [String]) throws -> ExitStatus {
        switch arguments.first {
        case "formats":
            for container in AudioContainer.writableOnThisMachine() { print(container.rawValue) }
            return .success
        case "ports":
            let parsed = try parseArguments(Array(arguments.dropFirst()), options: portOptions, command: "complete ports")
            guard parsed.has("outputs") != parsed.has("inputs") else { throw UsageError("complete ports needs one of --outputs and --inputs") }
            let server = try ValueParsing.server(parsed)
            let client = try JackClient(name: "jackhost-complete", server: server)
            defer { client.close() }
            let ports = try parsed.has("outputs") ? client.audioOutputPortNames() : client.audioInputPortNames()
            for port in ports { print(port) }
            return .success
        default:
            throw UsageError("complete takes formats or ports (it is what the completion scripts call)")
        }
    }
}
