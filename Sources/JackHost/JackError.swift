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
    /// libjack could not set up or attach its shared memory (a full or read-only /dev/shm,
    /// another user's server, leftovers of a crashed server).
    case sharedMemoryFailure(server: String?)
    /// A server name libjack cannot take: empty, too long for its socket paths, or with a '/'.
    case invalidServerName(String)
    /// A client name libjack cannot take: empty, longer than ``maximumClientNameBytes``, or with a ':'.
    case invalidClientName(String)
    /// A port pattern that is not a usable POSIX extended regular expression.
    case invalidPattern(pattern: String, reason: String)
    /// `jack_port_register` refused a port.
    case portRegistrationFailed(port: String)
    /// `jack_activate` failed.
    case activationFailed(code: Int32)
    /// A connection between two ports could not be made.
    case connectionFailed(source: String, destination: String, code: Int32)
    /// A `--connect` pattern matched no output port.
    case patternMatchedNothing(pattern: String)
    /// A `--connect-stream` name is no JACK client with audio output ports (``JackStream``).
    case streamMatchedNothing(name: String)
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
    /// The longest client name JACK accepts, in UTF-8 bytes (`jack_client_name_size()` less the NUL).
    public static let maximumClientNameBytes = 63
    /// The longest server name JackHost passes to libjack, in UTF-8 bytes. jack2 builds socket
    /// paths from it (`/dev/shm/jack_NAME_UID_0`, at most 108 bytes), and a name of about 260
    /// bytes or more overflows a buffer inside libjack; 63 keeps every path well inside both.
    public static let maximumServerNameBytes = 63
    /// The longest full port name JACK accepts, in UTF-8 bytes (`jack_port_name_size()` less the NUL).
    public static let maximumPortNameBytes = 255

    /// Checks a server name before libjack sees it.
    public static func checkServerName(_ name: String) throws(JackError) {
        guard !name.isEmpty, name.utf8.count <= maximumServerNameBytes, !name.contains("/") else {
            throw .invalidServerName(name)
        }
    }

    /// Checks a client name before libjack sees it.
    public static func checkClientName(_ name: String) throws(JackError) {
        guard !name.isEmpty, name.utf8.count <= maximumClientNameBytes, !name.contains(":") else {
            throw .invalidClientName(name)
        }
    }

    /// One line that names the problem and says what to do.
    public var description: String {
        switch self {
        case .serverNotRunning(let server):
            if let server {
                return
                    "no JACK server named \"\(server)\" is running; start it (`jackd -n \(server) -d alsa`, or qjackctl), or name a running one with --server"
            }
            return
                "no JACK server is running; start one (`jackd -d alsa`, or qjackctl; under PipeWire run jackhost through `pw-jack`), or name a running one with --server"
        case .clientNameNotUnique(let name):
            return "a JACK client named \"\(name)\" already exists on this server; pick another with --name"
        case .versionMismatch(let server):
            return
                "the JACK server\(Self.named(server)) speaks a different protocol version than this libjack; install matching jackd2 and libjack-jackd2 packages"
        case .openFailed(let server, let status):
            return
                "could not open a client on the JACK server\(Self.named(server)) (status 0x\(String(status, radix: 16))); check `jack_lsp\(server.map { " -s \($0)" } ?? "")` and the server's log"
        case .sharedMemoryFailure(let server):
            return
                "libjack could not use its shared memory for the JACK server\(Self.named(server)); check that /dev/shm is writable and not full, and that the server runs as your user"
        case .invalidServerName(let name):
            return "server name \"\(Self.shortened(name))\" is not usable; use 1-\(Self.maximumServerNameBytes) bytes without '/'"
        case .invalidClientName(let name):
            return "client name \"\(Self.shortened(name))\" is not usable; use 1-\(Self.maximumClientNameBytes) bytes without ':'"
        case .invalidPattern(let pattern, let reason):
            return
                "--connect pattern \"\(Self.shortened(pattern))\" is not a usable regular expression (\(reason)); see PATTERNS in `jackhost --help`"
        case .portRegistrationFailed(let port):
            return "the JACK server refused to register port \"\(port)\"; the port name may be taken or the server out of ports (jackd -p)"
        case .activationFailed(let code):
            return "the JACK server refused to activate the client (error \(code)); check the server's log"
        case .connectionFailed(let source, let destination, let code):
            return "could not connect \(source) to \(destination) (error \(code)); check both names with `jack_lsp`"
        case .patternMatchedNothing(let pattern):
            return "--connect pattern \"\(pattern)\" matches no audio output port; list the ports with `jack_lsp -t`"
        case .streamMatchedNothing(let name):
            return "--connect-stream \"\(Self.shortened(name))\" is no JACK client with audio output ports; list the streams with `jackhost info`"
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

    /// A name cut to 60 characters for a message, so that a hostile 10,000-byte name still
    /// gives one readable line.
    static func shortened(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }

    /// Maps the status bits of a failed `jack_client_open` to the error a person can act on.
    ///
    /// jack2 (1.9.21) answers a missing server with `JackServerFailed` (0x11 with `JackFailure`)
    /// and a name that is taken, under `JackUseExactName`, with `JackServerError` alone (0x21).
    /// `JackServerError` also covers other refusals, so ``JackClient`` confirms a taken name by
    /// asking the server (see `nameIsTaken`); without that answer it stays ``openFailed``.
    static func fromOpenStatus(
        _ status: UInt32, clientName: String, server: String?,
        nameIsTaken: () -> Bool = { false }
    ) -> JackError {
        func has(_ bit: JackStatus) -> Bool { status & bit.rawValue != 0 }
        if has(JackVersionError) { return .versionMismatch(server: server) }
        if has(JackShmFailure) { return .sharedMemoryFailure(server: server) }
        if has(JackNameNotUnique) { return .clientNameNotUnique(name: clientName) }
        if has(JackServerFailed) { return .serverNotRunning(server: server) }
        if has(JackServerError) && nameIsTaken() { return .clientNameNotUnique(name: clientName) }
        return .openFailed(server: server, status: status)
    }
}
