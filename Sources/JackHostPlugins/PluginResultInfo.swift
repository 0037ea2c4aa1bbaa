/// One named value a plugin publishes (ABI 2), as its descriptor declares it.
public struct PluginResultInfo: Sendable, Equatable {
    /// The dotted name, e.g. `loudness.momentary`.
    public let name: String
    /// The unit, e.g. `LUFS`; empty when none.
    public let unit: String
    /// One line of help; empty when none.
    public let help: String

    /// The most results one plugin may declare.
    public static let maximumCount = 256
}
