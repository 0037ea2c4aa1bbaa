import CJackHostPlugin

/// Everything that can go wrong between a `--plugin` argument and a running plugin.
///
/// Each description is one line that names the plugin's path, says what is wrong,
/// and says what to do, so the CLI can print it as `jackhost: <description>`.
public enum PluginError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The `PATH[:key=value,...]` text could not be parsed.
    case malformedSpecification(text: String, reason: String)
    /// No file exists at the path.
    case fileNotFound(path: String)
    /// The file exists but is no loadable shared object: a directory or another file that is not
    /// regular, an ELF object file, executable or core dump, or a file `dlopen` refused (a missing
    /// library or symbol); `reason` says which, or is `dlerror()`'s text.
    case notASharedObject(path: String, reason: String)
    /// The file does not start with the ELF magic (text, a static archive, an empty file);
    /// `reason` says what it starts with. Found before `dlopen`, so none of the file runs.
    case notELF(path: String, reason: String)
    /// The file is ELF, but for another class, byte order or machine than this jackhost, both given
    /// as text such as "64-bit little-endian x86-64". Found before `dlopen`.
    case wrongArchitecture(path: String, found: String, host: String)
    /// The file starts as ELF but cannot be checked: it is truncated, an offset or size in it is
    /// out of bounds, or it has no section headers or dynamic symbol table. Found before `dlopen`.
    case malformedELF(path: String, reason: String)
    /// The shared object's dynamic symbol table exports no `jackhost_plugin_descriptor`.
    case missingEntrySymbol(path: String)
    /// The shared object exports `jackhost_plugin_descriptor`, but not as a function (as data,
    /// for example), so calling it would crash; `found` says what it is, such as "data". Found
    /// before `dlopen`, from the ELF symbol's type.
    case entryNotAFunction(path: String, found: String)
    /// The plugin was built for another version of the plugin ABI.
    case abiMismatch(path: String, pluginVersion: UInt32, hostVersion: UInt32)
    /// A Swift plugin was built by another Swift compiler version than the one this jackhost was
    /// built with (and whose runtime it shares): Swift has no stable ABI on Linux. Found after
    /// `dlopen`, before the descriptor is read.
    case swiftVersionMismatch(path: String, pluginVersion: String, hostVersion: String)
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
    /// The plugin's `create2` refused an option value (ABI 2, `JACKHOST_PLUGIN_REFUSED_OPTION`):
    /// the user's mistake, exit status 2; `reason` is the plugin's own text.
    case optionRefused(path: String, plugin: String, reason: String)
    /// The plugin's `prepare` refused the stream format; `reason` is the plugin's own text.
    case prepareRejected(path: String, plugin: String, format: String, reason: String)

    /// The plugin's path, or nil for a specification that could not be parsed.
    public var path: String? {
        switch self {
        case .malformedSpecification: return nil
        case .fileNotFound(let path), .notASharedObject(let path, _), .notELF(let path, _), .wrongArchitecture(let path, _, _),
            .malformedELF(let path, _), .missingEntrySymbol(let path), .entryNotAFunction(let path, _),
            .abiMismatch(let path, _, _), .swiftVersionMismatch(let path, _, _), .invalidDescriptor(let path, _), .unknownOption(let path, _, _, _),
            .duplicateOption(let path, _, _), .invalidOptionValue(let path, _, _, _, _), .createFailed(let path, _, _),
            .optionRefused(let path, _, _), .prepareRejected(let path, _, _, _):
            return path
        }
    }

    /// Whether the user's command line is at fault (exit status 2) rather than the plugin
    /// or the run (exit status 1): a bad specification, a missing file, a bad option.
    public var isUsageError: Bool {
        switch self {
        case .malformedSpecification, .fileNotFound, .unknownOption, .duplicateOption, .invalidOptionValue, .optionRefused:
            return true
        case .notASharedObject, .notELF, .wrongArchitecture, .malformedELF, .missingEntrySymbol, .entryNotAFunction, .abiMismatch,
            .swiftVersionMismatch, .invalidDescriptor, .createFailed, .prepareRejected:
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
        case .notELF(let path, let reason):
            return "plugin \(path) is not an ELF shared object (\(reason)); build it with `cc -shared -fPIC` "
                + "or as a SwiftPM .dynamic library"
        case .wrongArchitecture(let path, let found, let host):
            return "plugin \(path) is built for \(found), but this jackhost runs as \(host); rebuild the plugin for this machine"
        case .malformedELF(let path, let reason):
            return "plugin \(path) is not a well-formed ELF shared object (\(reason)); rebuild it with `cc -shared -fPIC` "
                + "or as a SwiftPM .dynamic library"
        case .missingEntrySymbol(let path):
            return "plugin \(path) does not export jackhost_plugin_descriptor; it is not a JackHost plugin "
                + "(see docs/PLUGINS.md for the export line)"
        case .entryNotAFunction(let path, let found):
            return "plugin \(path) exports jackhost_plugin_descriptor as \(found), not a function; export "
                + "`const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void)` (see docs/PLUGINS.md)"
        case .abiMismatch(let path, let plugin, let host):
            return "plugin \(path) was built for plugin ABI version \(plugin), but this jackhost speaks version \(host) "
                + "(and loads versions \(JACKHOST_PLUGIN_ABI_OLDEST) to \(host)); rebuild the plugin against this JackHost"
        case .swiftVersionMismatch(let path, let plugin, let host):
            return "plugin \(path) was built with Swift \(plugin), but this jackhost runs on the Swift \(host) runtime "
                + "(Swift has no stable ABI on Linux); rebuild the plugin with Swift \(host)"
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
        case .optionRefused(let path, let plugin, let reason):
            return "plugin \"\(plugin)\" (\(path)) refused its options: \(reason)"
        case .prepareRejected(let path, let plugin, let format, let reason):
            return "plugin \"\(plugin)\" (\(path)) rejected the stream format \(format): \(reason)"
        }
    }
}
