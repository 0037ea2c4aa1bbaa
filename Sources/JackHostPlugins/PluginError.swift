/// Everything that can go wrong between a `--plugin` argument and a running plugin.
///
/// Each description is one line that names the plugin's path, says what is wrong,
/// and says what to do, so the CLI can print it as `jackhost: <description>`.
public enum PluginError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The `PATH[:key=value,...]` text could not be parsed.
    case malformedSpecification(text: String, reason: String)
    /// No file exists at the path.
    case fileNotFound(path: String)
    /// The file exists but `dlopen` refused it (not ELF, wrong architecture, a missing
    /// library or symbol); `reason` is `dlerror()`'s text.
    case notASharedObject(path: String, reason: String)
    /// The shared object exports no `jackhost_plugin_descriptor` function.
    case missingEntrySymbol(path: String)
    /// The plugin was built for another version of the plugin ABI.
    case abiMismatch(path: String, pluginVersion: UInt32, hostVersion: UInt32)
    /// The descriptor breaks the ABI's rules (a NULL function, an unknown mode, a bad option table).
    case invalidDescriptor(path: String, reason: String)
    /// The user gave an option the plugin does not declare.
    case unknownOption(path: String, plugin: String, key: String, known: [String])
    /// The user gave the same option twice.
    case duplicateOption(path: String, plugin: String, key: String)
    /// An option's value does not parse as the option's type.
    case invalidOptionValue(path: String, plugin: String, key: String, value: String, expected: PluginOptionType)
    /// The plugin's `create` returned NULL; `reason` is the plugin's own text.
    case createFailed(path: String, plugin: String, reason: String)
    /// The plugin's `prepare` refused the stream format; `reason` is the plugin's own text.
    case prepareRejected(path: String, plugin: String, format: String, reason: String)

    /// The plugin's path, or nil for a specification that could not be parsed.
    public var path: String? {
        switch self {
        case .malformedSpecification: return nil
        case .fileNotFound(let path), .notASharedObject(let path, _), .missingEntrySymbol(let path),
            .abiMismatch(let path, _, _), .invalidDescriptor(let path, _), .unknownOption(let path, _, _, _),
            .duplicateOption(let path, _, _), .invalidOptionValue(let path, _, _, _, _), .createFailed(let path, _, _),
            .prepareRejected(let path, _, _, _):
            return path
        }
    }

    /// Whether the user's command line is at fault (exit status 2) rather than the plugin
    /// or the run (exit status 1): a bad specification, a missing file, a bad option.
    public var isUsageError: Bool {
        switch self {
        case .malformedSpecification, .fileNotFound, .unknownOption, .duplicateOption, .invalidOptionValue:
            return true
        case .notASharedObject, .missingEntrySymbol, .abiMismatch, .invalidDescriptor, .createFailed, .prepareRejected:
            return false
        }
    }

    /// One line: the plugin, what is wrong, and what to do.
    public var description: String {
        switch self {
        case .malformedSpecification(let text, let reason):
            return "plugin specification \"\(text)\" is malformed: \(reason); write PATH[:key=value,...]"
        case .fileNotFound(let path):
            return "plugin \(path): no such file; check the path, or build the plugin first"
        case .notASharedObject(let path, let reason):
            return "plugin \(path) cannot be loaded as a shared object (\(reason)); build it with `cc -shared -fPIC` "
                + "or as a SwiftPM .dynamic library for this machine"
        case .missingEntrySymbol(let path):
            return "plugin \(path) does not export jackhost_plugin_descriptor; it is not a JackHost plugin "
                + "(see docs/PLUGINS.md for the export line)"
        case .abiMismatch(let path, let plugin, let host):
            return "plugin \(path) was built for plugin ABI version \(plugin), but this jackhost speaks version \(host); "
                + "rebuild the plugin against this JackHost"
        case .invalidDescriptor(let path, let reason):
            return "plugin \(path) has an invalid descriptor: \(reason); fix and rebuild the plugin"
        case .unknownOption(let path, let plugin, let key, let known):
            let accepted = known.isEmpty ? "it takes no options" : "its options are \(known.joined(separator: ", "))"
            return "plugin \"\(plugin)\" (\(path)) has no option \"\(key)\"; \(accepted)"
        case .duplicateOption(let path, let plugin, let key):
            return "plugin \"\(plugin)\" (\(path)): option \"\(key)\" given twice; give it once"
        case .invalidOptionValue(let path, let plugin, let key, let value, let expected):
            return "plugin \"\(plugin)\" (\(path)): option \(key)=\(value) is not \(expected.article) \(expected.rawValue) "
                + "(\(expected.valueHint))"
        case .createFailed(let path, let plugin, let reason):
            return "plugin \"\(plugin)\" (\(path)) failed to start: \(reason)"
        case .prepareRejected(let path, let plugin, let format, let reason):
            return "plugin \"\(plugin)\" (\(path)) rejected the stream format \(format): \(reason)"
        }
    }
}
