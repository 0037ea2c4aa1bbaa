/// A stream seen on the server: one JACK client with audio output ports, its ports in the
/// server's order.
///
/// Under PipeWire's JACK, an AES67 (RTP) stream that `module-rtp-source` received is a node
/// named after the SDP session (`s=`), and its JACK client carries that name: `Stage Left`
/// with `Stage Left:capture_FL` and `Stage Left:capture_FR`. PipeWire 0.3.65 gives those
/// ports no JACK metadata, and their aliases (`Stage Left:capture_0`, `Stage Left:capture_FL`)
/// repeat the client's name; the session name reaches JACK clients only as the client name.
/// JACK itself can't tell a network stream from any other source (PipeWire even flags the
/// stream's ports physical when its node is an `Audio/Source`), so a stream here is, honestly,
/// every client with audio output ports: a sound card's `system` and a player are streams too.
public struct JackStream: Sendable, Equatable, Codable {
    /// The client's name: for an RTP stream under PipeWire, the SDP session name.
    public var name: String
    /// The full names of its audio output ports, in the server's order.
    public var ports: [String]
    /// Whether any of its ports is flagged physical (`JackPortIsPhysical`).
    public var isPhysical: Bool

    private enum CodingKeys: String, CodingKey {
        case name, ports, channels
        case isPhysical = "physical"
    }

    /// Creates a stream from its client name and ports.
    public init(name: String, ports: [String], isPhysical: Bool = false) {
        self.name = name
        self.ports = ports
        self.isPhysical = isPhysical
    }

    /// The number of channels: one per port.
    public var channels: Int { ports.count }

    /// The channel names, one per port (see ``channelName(ofPort:)``).
    public var channelNames: [String] { ports.map(JackStream.channelName(ofPort:)) }

    /// Decodes a stream; `channels` is derived from `ports` and not read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        ports = try container.decode([String].self, forKey: .ports)
        isPhysical = try container.decode(Bool.self, forKey: .isPhysical)
    }

    /// Encodes `name`, `ports`, `channels` (the port count) and `physical`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(ports, forKey: .ports)
        try container.encode(channels, forKey: .channels)
        try container.encode(isPhysical, forKey: .isPhysical)
    }

    /// The client part of a full port name (`Stage Left` of `Stage Left:capture_FL`): up to the
    /// first ':', which a JACK client name can't contain.
    public static func clientName(ofPort fullName: String) -> String {
        String(fullName.prefix { $0 != ":" })
    }

    /// A port's channel as a person reads it: the short name after its first '_'
    /// (`capture_FL` gives `FL`, `capture_AUX3` gives `AUX3`, `system:capture_1` gives `1`), or
    /// the whole short name when it has no '_' or nothing after it.
    public static func channelName(ofPort fullName: String) -> String {
        let short = fullName.drop { $0 != ":" }.dropFirst()
        guard let underscore = short.firstIndex(of: "_"), short.index(after: underscore) != short.endIndex else {
            return String(short)
        }
        return String(short[short.index(after: underscore)...])
    }

    /// What an input fed by `port` of the stream `stream` is called: `Stage Left FL`.
    public static func inputName(stream: String, port: String) -> String {
        "\(stream) \(channelName(ofPort: port))"
    }

    /// Groups output ports by client, in the order each client's first port comes; a client is
    /// physical when any of its ports is in `physical`.
    public static func group(ports: [String], physical: Set<String> = []) -> [JackStream] {
        var streams: [JackStream] = []
        var index: [String: Int] = [:]
        for port in ports {
            let client = clientName(ofPort: port)
            if let at = index[client] {
                streams[at].ports.append(port)
                if physical.contains(port) { streams[at].isPhysical = true }
            } else {
                index[client] = streams.count
                streams.append(JackStream(name: client, ports: [port], isPhysical: physical.contains(port)))
            }
        }
        return streams
    }

    /// The ports of the stream named `name` among `ports`: those whose client name is exactly
    /// `name` (case and spaces count), in the order given.
    public static func ports(ofStream name: String, among ports: [String]) -> [String] {
        ports.filter { clientName(ofPort: $0) == name }
    }

    /// Every stream on the server `client` is open on: each client with audio output ports.
    /// Reads the graph with `jack_get_ports`, through ``JackClient/audioOutputPortNames(matching:)``.
    public static func all(on client: JackClient) -> [JackStream] {
        let outputs = (try? client.audioOutputPortNames()) ?? []
        return group(ports: outputs, physical: Set(client.physicalCapturePorts()))
    }
}
