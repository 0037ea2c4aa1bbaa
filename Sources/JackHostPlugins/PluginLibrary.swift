import CJackHostPlugin
import FoundationEssentials
import Glibc
import JackHost

/// A plugin's shared object, opened and checked, with its descriptor read: everything
/// `jackhost plugin inspect` shows, without creating an instance.
///
/// Opening first reads the file's ELF dynamic symbol table (``ELFSymbolTable``) without loading
/// it, and refuses a file that is not a shared object for this machine, or whose
/// `jackhost_plugin_descriptor` is missing or not a function. Only then does it run
/// `dlopen(RTLD_NOW | RTLD_LOCAL)` (every symbol resolved now, so a broken plugin fails here
/// rather than mid-run; none leak into other plugins), look up `jackhost_plugin_descriptor`,
/// call it, and check `abi_version` before reading anything else, then `struct_size`, then
/// every field the host relies on.
///
/// `dlopen` runs the library's constructors (ELF `.init_array`, Swift and C++ static
/// initialisers), so opening, even for `jackhost plugin inspect`, runs code of the plugin's:
/// open only files you trust. Opening never calls `create`, `prepare` or `process`.
///
/// The library is never closed: a Swift runtime cannot unregister the metadata of an unloaded
/// image, so `dlclose` on a Swift plugin would leave dangling type records.
public final class PluginLibrary: @unchecked Sendable {
    // @unchecked: the descriptor is immutable for the image's lifetime (an ABI rule), and the
    // handle is never closed, so sharing the pointers across threads is safe.

    /// The path as given.
    public let path: String
    /// The plugin's name from its descriptor.
    public let name: String
    /// The plugin's own version string.
    public let version: String
    /// The ABI version the plugin was built for: 1 or 2.
    public let abiVersion: UInt32
    /// Where `process` runs.
    public let mode: PluginDeliveryMode
    /// The options the plugin declares, in its order.
    public let options: [PluginOptionInfo]
    /// The results the plugin publishes, in its order (ABI 2; empty for a version 1 plugin).
    public let results: [PluginResultInfo]
    /// The block size the plugin asks for (ABI 2 `block_frames`), or nil for JACK's periods.
    public var preferredBlockFrames: Int? { fields.block_frames > 0 ? Int(fields.block_frames) : nil }
    /// The sample rate the plugin asks for (ABI 2 `sample_rate`), or nil for the server's.
    public var preferredSampleRate: Double? { fields.sample_rate > 0 ? fields.sample_rate : nil }

    /// The Swift compiler version a Swift plugin was built with (its
    /// `jackhost_plugin_swift_version`), or nil for a plugin that does not say (a C plugin).
    /// `open(path:)` refuses a plugin whose version is not ``hostSwiftVersion``.
    public let swiftVersion: String?

    /// The Swift compiler version this jackhost was built with, and so of the runtime it runs on
    /// (the package ships the runtime of the toolchain that built it).
    public static let hostSwiftVersion = String(describing: SwiftCompiler.version)

    /// Whether the plugin takes events (ABI 2 `handle_event`).
    public var handlesEvents: Bool { fields.handle_event != nil }

    /// The descriptor, valid for the process's lifetime; pass it to the plugin's functions.
    let descriptor: UnsafePointer<jackhost_plugin_descriptor_t>
    /// The descriptor's fields as this host knows them: the plugin's `struct_size` bytes, and
    /// zeros beyond (a version 1 descriptor is shorter than this host's struct). Read fields
    /// here, never through `descriptor.pointee`, which would read past a shorter descriptor.
    let fields: jackhost_plugin_descriptor_t

    /// The ABI version this host speaks.
    public static let hostABIVersion: UInt32 = JACKHOST_PLUGIN_ABI_VERSION
    /// The oldest ABI version this host still loads.
    public static let oldestABIVersion: UInt32 = JACKHOST_PLUGIN_ABI_OLDEST
    /// The size of a version 1 descriptor: everything up to `destroy`.
    static let versionOneDescriptorSize = MemoryLayout<jackhost_plugin_descriptor_t>.offset(of: \.result_count)!

    private init(
        path: String, descriptor: UnsafePointer<jackhost_plugin_descriptor_t>, fields: jackhost_plugin_descriptor_t,
        name: String, version: String, mode: PluginDeliveryMode, options: [PluginOptionInfo], results: [PluginResultInfo],
        swiftVersion: String?
    ) {
        self.path = path
        self.descriptor = descriptor
        self.fields = fields
        self.name = name
        self.version = version
        self.abiVersion = fields.abi_version
        self.mode = mode
        self.options = options
        self.results = results
        self.swiftVersion = swiftVersion
    }

    /// Opens and checks the plugin at `path`.
    public static func open(path: String) throws(PluginError) -> PluginLibrary {
        let kind = FileKind(atPath: path)
        guard kind != .missing else {
            throw .fileNotFound(path: path)
        }
        if kind == .directory { throw .notASharedObject(path: path, reason: "it is a directory") }
        let exportsSwiftVersion = try checkEntrySymbol(path: path)
        // A bare file name would make dlopen search the library path instead of the current directory.
        let loadPath = path.contains("/") ? path : "./" + path
        guard let handle = dlopen(loadPath, RTLD_NOW | RTLD_LOCAL) else {
            throw .notASharedObject(path: path, reason: dlerror().map { String(cString: $0) } ?? "dlopen failed")
        }
        // A Swift plugin's compiler version, checked before anything of the plugin's is called
        // but this one function (it returns a static string).
        var swiftVersion: String?
        if exportsSwiftVersion != false, let symbol = dlsym(handle, JACKHOST_PLUGIN_SWIFT_VERSION_SYMBOL) {
            let function = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafePointer<CChar>?).self)
            let recorded = function().map { String(cString: $0) } ?? "(NULL)"
            swiftVersion = recorded
            guard recorded == hostSwiftVersion else {
                throw .swiftVersionMismatch(path: path, pluginVersion: recorded, hostVersion: hostSwiftVersion)
            }
        }
        guard let symbol = dlsym(handle, JACKHOST_PLUGIN_ENTRY_SYMBOL) else {
            throw .missingEntrySymbol(path: path)
        }
        let entry = unsafeBitCast(symbol, to: jackhost_plugin_entry_t.self)
        guard let descriptor = entry() else {
            throw .invalidDescriptor(path: path, reason: "jackhost_plugin_descriptor() returned NULL")
        }
        return try validated(descriptor, path: path, swiftVersion: swiftVersion)
    }

    /// Reads the file's ELF header and dynamic symbol table, and refuses it before `dlopen` can
    /// run any of its code unless it is a shared object for this machine that exports
    /// `jackhost_plugin_descriptor` as a function. Where ``ELFSymbolTable/host`` is nil (not
    /// 64-bit x86-64 or arm64) it checks nothing and leaves the refusals to `dlopen` and `dlsym`.
    /// Returns whether the file itself exports `jackhost_plugin_swift_version` (nil: not checked),
    /// so a C plugin's dependencies are never searched for it.
    private static func checkEntrySymbol(path: String) throws(PluginError) -> Bool? {
        guard let host = ELFSymbolTable.host else { return nil }
        let table: ELFSymbolTable
        do {
            table = try ELFSymbolTable(path: path, host: host)
        } catch {
            switch error {
            case .unreadable(let reason), .notASharedObject(let reason): throw .notASharedObject(path: path, reason: reason)
            case .notELF(let reason): throw .notELF(path: path, reason: reason)
            case .wrongTarget(let found, let host):
                throw .wrongArchitecture(path: path, found: found.description, host: host.description)
            case .malformed(let reason): throw .malformedELF(path: path, reason: reason)
            }
        }
        guard let entry = table.symbol(named: JACKHOST_PLUGIN_ENTRY_SYMBOL), entry.isExported else {
            throw .missingEntrySymbol(path: path)
        }
        switch entry.kind {
        case .function: return table.symbol(named: JACKHOST_PLUGIN_SWIFT_VERSION_SYMBOL)?.isExported == true
        case .object: throw .entryNotAFunction(path: path, found: "data")
        case .other(6): throw .entryNotAFunction(path: path, found: "thread-local data")  // STT_TLS
        case .other(0): throw .entryNotAFunction(path: path, found: "a symbol without a type")  // STT_NOTYPE
        case .other(let type): throw .entryNotAFunction(path: path, found: "a symbol of ELF type \(type)")
        }
    }

    /// Checks a descriptor already in memory. `open(path:)` uses it after `dlsym`; tests use it
    /// to run a plugin exported in their own process through the same checks.
    static func validated(
        _ descriptor: UnsafePointer<jackhost_plugin_descriptor_t>,
        path: String, swiftVersion: String? = nil
    ) throws(PluginError) -> PluginLibrary {
        // Only the first two fields are common to every ABI version; read nothing else before checking them.
        let header = UnsafeRawPointer(descriptor).loadUnaligned(as: (UInt32, UInt32).self)
        let (abiVersion, structSize) = header
        guard (JACKHOST_PLUGIN_ABI_OLDEST...JACKHOST_PLUGIN_ABI_VERSION).contains(abiVersion) else {
            throw .abiMismatch(path: path, pluginVersion: abiVersion, hostVersion: JACKHOST_PLUGIN_ABI_VERSION)
        }
        let required = versionOneDescriptorSize
        guard Int(structSize) >= required else {
            throw .invalidDescriptor(
                path: path, reason: "struct_size is \(structSize) bytes; ABI version \(abiVersion) needs at least \(required)")
        }
        // Copy what the plugin declared it has, zeros beyond; a version 1 plugin's bytes past
        // version 1 are not ours to read even if its struct_size says more.
        var fields = jackhost_plugin_descriptor_t()
        let readable = abiVersion == 1 ? required : min(Int(structSize), MemoryLayout<jackhost_plugin_descriptor_t>.size)
        withUnsafeMutableBytes(of: &fields) { copy in
            copy.copyMemory(from: UnsafeRawBufferPointer(start: descriptor, count: readable))
        }
        func invalid(_ reason: String) -> PluginError { .invalidDescriptor(path: path, reason: reason) }
        guard let namePointer = fields.name, case let name = String(cString: namePointer), !name.isEmpty else {
            throw invalid("name is NULL or empty")
        }
        guard let versionPointer = fields.version else { throw invalid("version is NULL") }
        guard let mode = PluginDeliveryMode(abiValue: fields.mode) else {
            throw invalid("mode is \(fields.mode); use JACKHOST_PLUGIN_MODE_REALTIME (0) or JACKHOST_PLUGIN_MODE_DEFERRED (1)")
        }
        let functions: [(String, Bool)] = [
            ("create", fields.create != nil), ("prepare", fields.prepare != nil),
            ("process", fields.process != nil), ("finish", fields.finish != nil),
            ("destroy", fields.destroy != nil),
        ]
        if let missing = functions.first(where: { !$0.1 }) { throw invalid("\(missing.0) is NULL") }
        let options = try readOptions(fields, invalid: invalid)
        let results = try readResults(fields, invalid: invalid)
        if fields.block_frames > 0 || fields.sample_rate != 0 {
            guard mode == .deferred else {
                throw invalid("block_frames and sample_rate need a deferred plugin (a real-time plugin gets JACK's blocks as they are)")
            }
            guard fields.block_frames <= 1_920_000 else { throw invalid("block_frames is \(fields.block_frames); at most 1920000") }
            guard fields.sample_rate == 0 || (1000...768_000).contains(fields.sample_rate) else {
                throw invalid("sample_rate is \(fields.sample_rate); use 0 or 1000 to 768000")
            }
        }
        return PluginLibrary(
            path: path, descriptor: descriptor, fields: fields, name: name, version: String(cString: versionPointer),
            mode: mode, options: options, results: results, swiftVersion: swiftVersion)
    }

    /// Reads and checks the result table (ABI 2): names present, well-formed and unique.
    private static func readResults(
        _ fields: jackhost_plugin_descriptor_t, invalid: (String) -> PluginError
    ) throws(PluginError) -> [PluginResultInfo] {
        let count = Int(fields.result_count)
        guard count > 0 else { return [] }
        guard count <= PluginResultInfo.maximumCount else {
            throw invalid("result_count is \(count); at most \(PluginResultInfo.maximumCount) results")
        }
        guard let table = fields.results else { throw invalid("result_count is \(count) but results is NULL") }
        var result: [PluginResultInfo] = []
        for index in 0..<count {
            let entry = table[index]
            guard let namePointer = entry.name, case let name = String(cString: namePointer), !name.isEmpty else {
                throw invalid("result \(index) has no name")
            }
            guard name.utf8.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) }) else {
                throw invalid("result name \"\(name)\" may use only letters, digits, '.', '-' and '_' (64 at most)")
            }
            guard !result.contains(where: { $0.name == name }) else { throw invalid("result \"\(name)\" is declared twice") }
            result.append(
                PluginResultInfo(
                    name: name, unit: entry.unit.map { String(cString: $0) } ?? "", help: entry.help.map { String(cString: $0) } ?? ""))
        }
        return result
    }

    /// Reads and checks the option table: names present and unique, known types, defaults of the right type.
    private static func readOptions(
        _ fields: jackhost_plugin_descriptor_t,
        invalid: (String) -> PluginError
    ) throws(PluginError) -> [PluginOptionInfo] {
        let count = Int(fields.option_count)
        guard count > 0 else { return [] }
        guard let table = fields.options else { throw invalid("option_count is \(count) but options is NULL") }
        var result: [PluginOptionInfo] = []
        for index in 0..<count {
            let entry = table[index]
            guard let namePointer = entry.name, case let name = String(cString: namePointer), !name.isEmpty else {
                throw invalid("option \(index) has no name")
            }
            guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw invalid("option name \"\(name)\" may use only letters, digits, '-' and '_'")
            }
            guard !result.contains(where: { $0.name == name }) else { throw invalid("option \"\(name)\" is declared twice") }
            guard let type = PluginOptionType(abiValue: entry.type) else {
                throw invalid("option \"\(name)\" has unknown type \(entry.type)")
            }
            let defaultValue = entry.default_value.map { String(cString: $0) }
            if let defaultValue, !type.accepts(defaultValue) {
                throw invalid("option \"\(name)\" has default \"\(defaultValue)\", which is not \(type.article) \(type.rawValue)")
            }
            result.append(
                PluginOptionInfo(
                    name: name, type: type, defaultValue: defaultValue,
                    help: entry.help.map { String(cString: $0) } ?? ""))
        }
        return result
    }

    /// Checks the user's option values and returns what `create` receives: every given value,
    /// then the default of every option not given (options without a default stay absent).
    /// Boolean values are normalised to "true" or "false", so a C plugin compares one word.
    public func resolveOptions(_ given: [(key: String, value: String)]) throws(PluginError) -> [(key: String, value: String)] {
        var resolved: [(key: String, value: String)] = []
        for (key, value) in given {
            guard let option = options.first(where: { $0.name == key }) else {
                throw .unknownOption(path: path, plugin: name, key: key, known: options.map(\.name))
            }
            guard !resolved.contains(where: { $0.key == key }) else {
                throw .duplicateOption(path: path, plugin: name, key: key)
            }
            guard option.type.accepts(value) else {
                throw .invalidOptionValue(path: path, plugin: name, key: key, value: value, expected: option.type)
            }
            resolved.append((key, option.type.normalized(value)))
        }
        for option in options where !resolved.contains(where: { $0.key == option.name }) {
            if let value = option.defaultValue { resolved.append((option.name, option.type.normalized(value))) }
        }
        return resolved
    }

    /// What `jackhost plugin inspect` prints: name, version, ABI, mode, and the option table.
    public var inspectionText: String {
        var lines = [
            "name:     \(name)",
            "version:  \(version)",
            "abi:      \(abiVersion)",
            "mode:     \(mode.rawValue) (\(mode == .realtime ? "process() runs on JACK's real-time thread" : "process() runs on its own worker thread"))",
            "path:     \(path)",
            "swift:    "
                + (swiftVersion.map { "built with Swift \($0) (this jackhost runs on \(Self.hostSwiftVersion))" }
                    ?? "not recorded (a C plugin, or one built without the Swift SDK)"),
        ]
        if abiVersion >= 2 {
            lines.append("events:   \(handlesEvents ? "yes (handle_event)" : "no")")
            if preferredBlockFrames != nil || preferredSampleRate != nil {
                lines.append(
                    "blocks:   "
                        + [preferredBlockFrames.map { "\($0) frames" }, preferredSampleRate.map { "at \(Int($0)) Hz (converted)" }]
                        .compactMap { $0 }.joined(separator: " "))
            }
            lines.append(
                results.isEmpty
                    ? "results:  none"
                    : "results:  " + results.map { $0.unit.isEmpty ? $0.name : "\($0.name) (\($0.unit))" }.joined(separator: ", "))
        }
        guard !options.isEmpty else { return (lines + ["options:  none"]).joined(separator: "\n") }
        lines.append("options:")
        let rows = options.map { [$0.name, $0.type.rawValue, $0.defaultValue.map { $0.isEmpty ? "\"\"" : $0 } ?? "(none)", $0.help] }
        let header = ["NAME", "TYPE", "DEFAULT", "HELP"]
        let widths = (0..<3).map { column in (rows + [header]).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            let padded = (0..<3).map { row[$0].padded(to: widths[$0]) }
            lines.append(("  " + padded.joined(separator: "  ") + "  " + row[3]).trimmingTrailingSpaces)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string without trailing spaces.
    var trimmingTrailingSpaces: String {
        String(reversed().drop { $0 == " " }.reversed())
    }
}
