import CPosix
import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import Synchronization

/// The `jackhost` command: parses arguments and hands off to a subcommand.
public enum JackHostCommand {
    /// Runs with the process's arguments and exits with the documented status.
    public static func main() -> Never {
        // First of all: from here on no signal whose default would end the process can kill a
        // take before it is finalised (a request that arrives while connecting is honoured once
        // the take can start). Commands that never poll for signals put the defaults back.
        csignals_install_stop_handlers()
        // Before anything opens a file: a closed stdout or stderr must not be handed to
        // libjack's metadata database or to libsndfile (see cposix.h).
        _ = cposix_ensure_standard_descriptors()
        let arguments = Array(CommandLine.arguments.dropFirst())
        exit(run(arguments).rawValue)
    }

    /// Runs a command line (without the program name) and returns its exit status.
    public static func run(_ arguments: [String]) -> ExitStatus {
        guard let command = arguments.first else {
            // Started by a New Session Manager: join its session (a command line ignores it).
            if let url = getenv("NSM_URL").map({ String(cString: $0) }) {
                return SessionCommand.run(url: url, executable: CommandLine.arguments.first ?? "jackhost")
            }
            printError("no command given; try `jackhost record take.wav`, `jackhost info` or `jackhost --help`")
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        if !["record", "meter", "stream", "run", "signal"].contains(command) { csignals_restore_defaults() }
        do {
            switch command {
            case "--help", "-h", "help":
                // `jackhost help --man` prints jackhost(1), and `--synopsis` the README's command-line
                // block, generated from the same tables.
                switch rest {
                case ["--man"]: print(ManPage.render())
                case ["--synopsis"]: print(CommandSynopsis.render())
                default: print(CommandTables.overview)
                }
                return .success
            case "--version", "-V":
                let sanitizer = JackClient.isRealtimeSanitizerLinked ? " (RealtimeSanitizer linked)" : ""
                print("jackhost \(jackhostVersion)\(sanitizer)")
                // Which conversion kernels this CPU runs (JACKHOST_SIMD=portable forces the portable ones).
                print("conversion kernels: \(SampleConversion.activeKernels.rawValue)")
                return .success
            case "info":
                return try InfoCommand.run(rest)
            case "signal":
                return try SignalCommand.run(rest)
            case "plugin":
                return try PluginCommand.run(rest)
            case "record", "meter", "stream", "run":
                return try CaptureCommand.run(command: command, arguments: rest)
            case "completions":
                return try CompletionCommand.run(rest)
            case "complete":
                return try CompletionCommand.complete(rest)
            default:
                throw UsageError(
                    "unknown command \"\(ValueParsing.shown(command))\"; use info, record, meter, stream, run, signal, plugin or completions (see `jackhost --help`)"
                )
            }
        } catch let error as UsageError {
            printError(error.message)
            return .usage
        } catch {
            printError(String(describing: error))
            return .failure
        }
    }
}

/// What every line for people starts with. The child process of an isolated plugin sets it
/// once, before any thread starts, to "jackhost: plugin NAME: ", so its lines say whose they are.
let messagePrefix = Mutex("jackhost: ")

/// Prints `jackhost: MESSAGE` to stderr, the one line every failure gets.
func printError(_ message: String) {
    writeAll("\(messagePrefix.withLock { $0 })\(message)\n", to: STDERR_FILENO)
}

/// Prints a note to stderr (not an error).
func printNote(_ message: String) {
    writeAll("\(messagePrefix.withLock { $0 })\(message)\n", to: STDERR_FILENO)
}
