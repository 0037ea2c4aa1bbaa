import Glibc

/// `NSM_URL`, the session manager's address: `osc.udp://HOST:PORT/`, resolved to IPv4.
struct NSMURL: CustomStringConvertible {
    /// The URL as the environment gave it.
    let text: String
    let address: sockaddr_in

    var description: String { text }

    /// Parses and resolves `text`; the error is one line that says what is wrong.
    init(_ text: String) throws(UsageError) {
        self.text = text
        let shown = ValueParsing.shown(text)
        let prefix = "osc.udp://"
        guard text.hasPrefix(prefix) else {
            throw UsageError("NSM_URL \"\(shown)\" is not an osc.udp:// address; a session manager sets it, or unset it to use jackhost's commands")
        }
        let rest = text.dropFirst(prefix.count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]), port > 0 else {
            throw UsageError("NSM_URL \"\(shown)\" has no port; it should read osc.udp://HOST:PORT/")
        }
        let host = String(rest[..<colon])
        guard let resolved = Self.resolve(host.isEmpty ? "127.0.0.1" : host) else {
            throw UsageError("NSM_URL \"\(shown)\": cannot resolve \"\(ValueParsing.shown(host))\" to an IPv4 address")
        }
        var address = resolved
        address.sin_port = port.bigEndian
        self.address = address
    }

    /// The first IPv4 address of `host`, a name or a dotted quad.
    private static func resolve(_ host: String) -> sockaddr_in? {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        guard let address = first.pointee.ai_addr else { return nil }
        return UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
    }
}
