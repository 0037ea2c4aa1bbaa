import CJack

/// Everything that can go wrong between JackHost and a JACK server.
///
/// Each case's ``description`` is one line that names the problem and says what
/// to do about it, so that command-line front ends can print it as it is.
public enum JackError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No JACK server with this name (nil: the default server) is running.
    case serverNotRunning(server: String?)
    /// The server refused the client name because another client already uses it.
    case clientNameNotUnique(name: String)
    /// The client library and the server speak different protocol versions.
    case versionMismatch(server: String?)
    /// The server could not be reached or gave up for another reason; the raw status bits are kept.
    case openFailed(server: String?, status: UInt32)
    /// `jack_port_register` refused a port.
    case portRegistrationFailed(port: String)
    /// `jack_activate` failed.
    case activationFailed(code: Int32)
    /// A connection between two ports could not be made.
    case connectionFailed(source: String, destination: String, code: Int32)
    /// A `--connect` pattern matched no output port.
    case patternMatchedNothing(pattern: String)
    /// The server reports no physical capture ports and no channel count was given.
    case noCapturePorts(server: String?)
    /// A channel count outside 1...1024.
    case invalidChannelCount(Int)
    /// A named port does not exist.
    case noSuchPort(String)
    /// The server went away while the client was running.
    case serverLost(reason: String)
    /// Starting a private server failed.
    case serverStartFailed(reason: String)

    /// The most channels a host registers; matches common sound-card and netjack limits with headroom.
    public static let maximumChannelCount = 1024

    /// One line that names the problem and says what to do.
    public var description: String {
        switch self {
        case .serverNotRunning(let server):
            if let server {
                return "no JACK server named \"\(server)\" is running; start one with `jackd -n \(server) -d dummy`, or pass another --server"
            }
            return "no JACK server is running; start one with `jackd -d dummy`, pass --server NAME, or use --embedded-server"
        case .clientNameNotUnique(let name):
            return "a JACK client named \"\(name)\" already exists on this server; pick another with --name"
        case .versionMismatch(let server):
            return "the JACK server\(Self.named(server)) speaks a different protocol version than this libjack; install matching jackd2 and libjack-jackd2 packages"
        case .openFailed(let server, let status):
            return "could not open a client on the JACK server\(Self.named(server)) (status 0x\(String(status, radix: 16))); check `jack_lsp\(server.map { " -s \($0)" } ?? "")` and the server's log"
        case .portRegistrationFailed(let port):
            return "the JACK server refused to register port \"\(port)\"; the port name may be taken or the server out of ports (jackd -p)"
        case .activationFailed(let code):
            return "the JACK server refused to activate the client (error \(code)); check the server's log"
        case .connectionFailed(let source, let destination, let code):
            return "could not connect \(source) to \(destination) (error \(code)); check both names with `jack_lsp`"
        case .patternMatchedNothing(let pattern):
            return "--connect pattern \"\(pattern)\" matches no audio output port; list the ports with `jack_lsp -t`"
        case .noCapturePorts(let server):
            return "the JACK server\(Self.named(server)) has no physical capture ports; pass --channels N and --connect PATTERN"
        case .invalidChannelCount(let count):
            return "channel count \(count) is out of range; use 1 to \(Self.maximumChannelCount)"
        case .noSuchPort(let name):
            return "no JACK port named \"\(name)\"; list the ports with `jack_lsp`"
        case .serverLost(let reason):
            return "the JACK server went away (\(reason)); restart it, or run with --reconnect"
        case .serverStartFailed(let reason):
            return "could not start a private JACK server: \(reason)"
        }
    }

    private static func named(_ server: String?) -> String {
        server.map { " \"\($0)\"" } ?? ""
    }

    /// Maps the status bits of a failed `jack_client_open` to the error a person can act on.
    static func fromOpenStatus(_ status: UInt32, clientName: String, server: String?) -> JackError {
        func has(_ bit: JackStatus) -> Bool { status & bit.rawValue != 0 }
        if has(JackServerFailed) || has(JackServerError) && !has(JackVersionError) {
            return .serverNotRunning(server: server)
        }
        if has(JackNameNotUnique) { return .clientNameNotUnique(name: clientName) }
        if has(JackVersionError) { return .versionMismatch(server: server) }
        return .openFailed(server: server, status: status)
    }
}
