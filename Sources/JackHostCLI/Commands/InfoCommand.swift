import FoundationEssentials
import JackHost

/// `jackhost info`: the session and the streams on the server, for people or as JSON.
enum InfoCommand {
    static func run(_ arguments: [String]) throws -> ExitStatus {
        let parsed = try parseArguments(arguments, options: CommandTables.info, command: "info")
        if parsed.has("help") {
            print(CommandCatalog.info.usage)
            return .success
        }
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument \"\(ValueParsing.shown(extra))\" for `jackhost info`") }
        let server = try ValueParsing.server(parsed)
        if parsed.has("embedded-server") && parsed.value("server") != nil {
            throw UsageError("--embedded-server and --server exclude each other; give one")
        }
        let embedded = try EmbeddedServer.startIfRequested(parsed.has("embedded-server"), channels: 4)
        defer { embedded?.stop() }
        let report = try InfoReport.query(server: embedded?.server.name ?? server)
        print(parsed.has("json") ? try report.json() : report.text)
        return .success
    }
}

/// What `jackhost info` reports: the session (``AudioSessionInfo``, its keys unchanged) and,
/// under `streams`, every ``JackStream`` on the server (each client with audio output ports).
struct InfoReport: Encodable {
    var session: AudioSessionInfo
    var streams: [JackStream]

    private enum CodingKeys: String, CodingKey { case streams }

    /// Opens a short-lived client named `jackhost-info`, reads the session and the streams, and closes it.
    static func query(server: String?) throws(JackError) -> InfoReport {
        let client = try JackClient(name: "jackhost-info", server: server)
        defer { client.close() }
        return InfoReport(session: AudioSessionInfo(client: client), streams: JackStream.all(on: client))
    }

    /// The session's keys, and `streams` beside them.
    func encode(to encoder: any Encoder) throws {
        try session.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(streams, forKey: .streams)
    }

    /// The report as pretty-printed JSON with sorted keys.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The report for people: one line per fact, one per stream.
    var text: String {
        let streamLines = streams.isEmpty ? ["(none)"] : streams.map(InfoReport.line(for:))
        return """
            sample rate:       \(Int(session.sampleRate)) Hz
            buffer:            \(session.bufferSize) frames (\((session.ioBufferDuration * 1000).formatted(places: 2)) ms)
            input channels:    \(session.inputNumberOfChannels)
            input latency:     \(session.inputLatencyFrames) frames (\((session.inputLatency * 1000).formatted(places: 2)) ms)
            capture ports:     \(session.capturePorts.joined(separator: " "))
            streams:           \(streamLines.joined(separator: "\n                   "))
            """
    }

    /// `Stage Left: FL FR (2 channels, physical)`.
    static func line(for stream: JackStream) -> String {
        let count = stream.channels == 1 ? "1 channel" : "\(stream.channels) channels"
        return "\(stream.name): \(stream.channelNames.joined(separator: " ")) (\(count)\(stream.isPhysical ? ", physical" : ""))"
    }
}
