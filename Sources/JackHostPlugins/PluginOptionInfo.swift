import CJackHostPlugin

/// When a plugin's `process` runs: the C header's `JACKHOST_PLUGIN_MODE_*`.
public enum PluginDeliveryMode: String, Sendable {
    /// Inside JACK's process callback, on the real-time thread, with zero-copy buffers.
    case realtime
    /// On the plugin's own worker thread, fed through a lock-free ring.
    case deferred

    /// The mode for a descriptor's `mode` field, or nil for an unknown value.
    init?(abiValue: UInt32) {
        switch abiValue {
        case JACKHOST_PLUGIN_MODE_REALTIME: self = .realtime
        case JACKHOST_PLUGIN_MODE_DEFERRED: self = .deferred
        default: return nil
        }
    }
}

/// The type of a plugin option's value: the C header's `JACKHOST_PLUGIN_OPTION_*`.
public enum PluginOptionType: String, Sendable {
    /// Any text.
    case string
    /// A decimal integer that fits 64 bits.
    case int
    /// A finite decimal number.
    case double
    /// true/false, yes/no, on/off or 1/0.
    case bool

    /// The type for an option's `type` field, or nil for an unknown value.
    init?(abiValue: UInt32) {
        switch abiValue {
        case JACKHOST_PLUGIN_OPTION_STRING: self = .string
        case JACKHOST_PLUGIN_OPTION_INT: self = .int
        case JACKHOST_PLUGIN_OPTION_DOUBLE: self = .double
        case JACKHOST_PLUGIN_OPTION_BOOL: self = .bool
        default: return nil
        }
    }

    /// Whether `value` is a valid value of this type.
    ///
    /// These are the ABI's rules (see jackhost_plugin.h). The SDK's `PluginOptions` applies
    /// the same rules on the plugin's side; JackHostPluginTests checks the two agree.
    public func accepts(_ value: String) -> Bool {
        switch self {
        case .string:
            return true
        case .int:
            return Int64(value) != nil
        case .double:
            // Swift's parser also takes "nan", "inf" and hexadecimal; the ABI allows finite decimals only.
            guard let number = Double(value), number.isFinite else { return false }
            return !value.lowercased().contains("x")
        case .bool:
            return ["true", "false", "yes", "no", "on", "off", "1", "0"].contains(value.lowercased())
        }
    }

    /// The value as `create` receives it: booleans as "true" or "false", everything else as written.
    func normalized(_ value: String) -> String {
        guard self == .bool else { return value }
        return ["true", "yes", "on", "1"].contains(value.lowercased()) ? "true" : "false"
    }

    /// "a" or "an", for messages.
    var article: String { self == .int ? "an" : "a" }

    /// Examples of valid values, for messages.
    var valueHint: String {
        switch self {
        case .string: return "any text"
        case .int: return "a whole number such as 480 or -3"
        case .double: return "a finite number such as 0.5 or 1e-3"
        case .bool: return "true/false, yes/no, on/off or 1/0"
        }
    }
}

/// One option a plugin declares, as `jackhost plugin inspect` lists it.
public struct PluginOptionInfo: Sendable, Equatable {
    /// The key users write: `PATH:name=value`.
    public let name: String
    /// What the value must parse as.
    public let type: PluginOptionType
    /// The value used when the user gives none, or nil for no default (the plugin then
    /// sees the option as absent).
    public let defaultValue: String?
    /// One line of help; empty when the plugin gives none.
    public let help: String

    /// Creates an option description.
    public init(name: String, type: PluginOptionType, defaultValue: String?, help: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.help = help
    }
}
