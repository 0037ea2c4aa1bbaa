/// One of a recording's inputs as the sidecar describes it.
public struct RecorderInput: Sendable, Equatable, Codable {
    /// The input port's full name, `jackhost:in_1`.
    public var port: String
    /// Its JACK metadata pretty-name, if any.
    public var prettyName: String?
    /// The ports connected to it when the file opened.
    public var connections: [String]

    /// Describes an input.
    public init(port: String, prettyName: String?, connections: [String]) {
        self.port = port
        self.prettyName = prettyName
        self.connections = connections
    }
}
