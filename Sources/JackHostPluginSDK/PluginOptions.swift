import CJackHostPlugin

/// One option a plugin declares: its key, the kind of value, a default and one line of help.
public struct PluginOption: Sendable, Equatable {
    /// What an option's value must parse as: the C header's `JACKHOST_PLUGIN_OPTION_*`.
    public enum Kind: String, Sendable {
        /// Any text.
        case string
        /// A decimal integer that fits 64 bits, such as 480 or -3.
        case int
        /// A finite decimal number, such as 0.5 or 1e-3.
        case double
        /// true/false, yes/no, on/off or 1/0, in any letter case.
        case bool

        /// Whether `value` is valid for this kind.
        ///
        /// These are the ABI's rules; the host (JackHostPlugins' `PluginOptionType`) applies
        /// the same ones before `create`, and JackHostPluginTests checks the two agree.
        public func accepts(_ value: String) -> Bool {
            switch self {
            case .string: return true
            case .int: return Int64(value) != nil
            case .double: return PluginOptions.parseDouble(value) != nil
            case .bool: return PluginOptions.parseBool(value) != nil
            }
        }

        /// The value of the descriptor's `type` field.
        var abiValue: UInt32 {
            switch self {
            case .string: return JACKHOST_PLUGIN_OPTION_STRING
            case .int: return JACKHOST_PLUGIN_OPTION_INT
            case .double: return JACKHOST_PLUGIN_OPTION_DOUBLE
            case .bool: return JACKHOST_PLUGIN_OPTION_BOOL
            }
        }
    }

    /// The key users write: letters, digits, `-` and `_`.
    public let name: String
    /// What the value must parse as.
    public let kind: Kind
    /// The value used when the user gives none; nil leaves the option absent.
    public let defaultValue: String?
    /// One line for `jackhost plugin inspect`.
    public let help: String

    /// Declares an option with a default written as text.
    public init(name: String, kind: Kind, defaultValue: String?, help: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
    }

    /// A text option.
    public static func string(_ name: String, default value: String? = nil, help: String) -> PluginOption {
        PluginOption(name: name, kind: .string, defaultValue: value, help: help)
    }

    /// A whole-number option.
    public static func int(_ name: String, default value: Int? = nil, help: String) -> PluginOption {
        PluginOption(name: name, kind: .int, defaultValue: value.map { String($0) }, help: help)
    }

    /// A number option.
    public static func double(_ name: String, default value: Double? = nil, help: String) -> PluginOption {
        PluginOption(name: name, kind: .double, defaultValue: value.map { String($0) }, help: help)
    }

    /// A yes/no option.
    public static func bool(_ name: String, default value: Bool? = nil, help: String) -> PluginOption {
        PluginOption(name: name, kind: .bool, defaultValue: value.map { $0 ? "true" : "false" }, help: help)
    }
}

/// A problem with option declarations or values, found before the plugin's `init` runs.
public enum PluginOptionError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A key the plugin does not declare.
    case unknownOption(key: String, known: [String])
    /// A value that does not parse as the option's kind.
    case invalidValue(key: String, value: String, expected: PluginOption.Kind)
    /// The plugin's own declarations are wrong (a bad name, a duplicate, a default of the wrong kind).
    case invalidDeclaration(String)

    /// One line naming the option.
    public var description: String {
        switch self {
        case .unknownOption(let key, let known):
            return "no option \"\(key)\"; the options are \(known.isEmpty ? "none" : known.joined(separator: ", "))"
        case .invalidValue(let key, let value, let expected):
            return "option \(key)=\(value) is not a valid \(expected.rawValue)"
        case .invalidDeclaration(let reason):
            return "the plugin declares its options wrongly: \(reason)"
        }
    }
}

/// The option values a plugin instance receives: declared options only, checked, with
/// defaults filled in. Read them with the typed accessors.
///
/// ```swift
/// let limit = options.double("max-frequency")!      // has a default, so never nil
/// let path = options.string("output")                // nil when not given and no default
/// ```
public struct PluginOptions: Sendable, Equatable {
    /// Every value by key, defaults included, as text.
    public let values: [String: String]

    /// Checks `given` against `declared`, then fills in defaults.
    public init(_ given: [String: String], declaredBy declared: [PluginOption]) throws(PluginOptionError) {
        try Self.check(declared)
        var values: [String: String] = [:]
        for (key, value) in given {
            guard let option = declared.first(where: { $0.name == key }) else {
                throw .unknownOption(key: key, known: declared.map(\.name))
            }
            guard option.kind.accepts(value) else { throw .invalidValue(key: key, value: value, expected: option.kind) }
            values[key] = value
        }
        for option in declared where values[option.name] == nil {
            values[option.name] = option.defaultValue
        }
        self.values = values
    }

    /// The text of an option, or nil when absent.
    public func string(_ name: String) -> String? { values[name] }
    /// An option as a whole number, or nil when absent or not a whole number.
    public func int(_ name: String) -> Int? { values[name].flatMap { Int($0) } }
    /// An option as a number, or nil when absent or not a finite number.
    public func double(_ name: String) -> Double? { values[name].flatMap(Self.parseDouble) }
    /// An option as a yes/no value, or nil when absent or not a boolean word.
    public func bool(_ name: String) -> Bool? { values[name].flatMap(Self.parseBool) }

    /// Checks declarations the way the host does when it loads the plugin, so a plugin's
    /// own tests catch what the host would refuse.
    static func check(_ declared: [PluginOption]) throws(PluginOptionError) {
        var seen: Set<String> = []
        for option in declared {
            guard !option.name.isEmpty,
                option.name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            else {
                throw .invalidDeclaration("option name \"\(option.name)\" may use only letters, digits, '-' and '_'")
            }
            guard seen.insert(option.name).inserted else {
                throw .invalidDeclaration("option \"\(option.name)\" is declared twice")
            }
            if let value = option.defaultValue, !option.kind.accepts(value) {
                throw .invalidDeclaration("the default of \"\(option.name)\", \"\(value)\", is not a valid \(option.kind.rawValue)")
            }
        }
    }

    /// A finite decimal number; Swift's parser also takes "nan", "inf" and hexadecimal, which the ABI does not.
    static func parseDouble(_ text: String) -> Double? {
        guard let number = Double(text), number.isFinite, !text.lowercased().contains("x") else { return nil }
        return number
    }

    /// The ABI's boolean words.
    static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }
}
