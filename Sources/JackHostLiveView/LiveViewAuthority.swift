// LiveViewAuthority.swift
//
// The names a live view without a token answers to. A page on another site can reach a loopback
// port through DNS rebinding: its own name starts resolving to 127.0.0.1, and the browser then
// sends that name in `Host` and lets the page read the answer as same-origin. So without a token
// the view answers only a `Host` that names it (and refuses an `Origin` of any other site);
// with a token the token is the protection, and a LAN name or address is fine.

import Glibc

/// Which `Host` (and `Origin`, after `http://`) values name this live view: `localhost`,
/// `127.0.0.1`, `[::1]` or the bound address, with the bound port. Pure: no socket involved.
///
/// Bound to a wildcard (`0.0.0.0` or `::`) there is no single bound address, and only the
/// loopback names are accepted (the machine's LAN addresses are not enumerated). That case needs
/// `--http-token` anyway, and with a token no name is checked.
struct LiveViewAuthority: Equatable, Sendable {
    /// The bound address's bytes (4 for IPv4, 16 for IPv6), or nil for a wildcard.
    let bound: [UInt8]?
    /// The bound port (the kernel's choice when 0 was asked for).
    let port: UInt16
    /// The address refusals point to: the bound one, or 127.0.0.1 for a wildcard.
    let preferredHost: String

    /// The authority of a view bound to `address` (IPv4 dotted, or IPv6 without brackets) and `port`.
    init(address: String, port: UInt16) {
        let bytes = Self.addressBytes(address, bracketed: address.contains(":"))
        let wildcard = bytes?.allSatisfy { $0 == 0 } ?? false
        bound = wildcard ? nil : bytes
        self.port = port
        preferredHost = wildcard || bytes == nil ? "127.0.0.1" : (address.contains(":") ? "[\(address)]" : address)
    }

    /// The address a refused viewer should open instead.
    var preferredURL: String { "http://\(preferredHost):\(port)/" }

    /// Whether a `Host` header's value names this view: an accepted name and the bound port
    /// (absent means 80), compared case-insensitively; IPv6 in brackets, compared as addresses
    /// (`[0:0:0:0:0:0:0:1]` is `[::1]`). A missing `Host` is refused, whatever the HTTP version.
    func accepts(host: String?) -> Bool {
        guard let host, let (name, bracketed, port) = Self.split(host.lowercased()), port == self.port else { return false }
        if !bracketed && name == "localhost" { return true }
        guard let bytes = Self.addressBytes(name, bracketed: bracketed) else { return false }
        return bytes == [127, 0, 0, 1] || bytes == Self.ipv6Loopback || bytes == bound
    }

    /// Whether an `Origin` header is absent, or is `http://` and a host ``accepts(host:)`` takes
    /// (no path; `null` and `https://` are other origins).
    func accepts(origin: String?) -> Bool {
        guard let origin else { return true }
        let lowered = origin.lowercased()
        guard lowered.hasPrefix("http://") else { return false }
        return accepts(host: String(lowered.dropFirst("http://".count)))
    }

    // MARK: Parsing

    /// `::1`.
    private static let ipv6Loopback = [UInt8](repeating: 0, count: 15) + [1]

    /// Splits `name:port` or `[ipv6]:port` (lowercased); the port defaults to 80. Nil when it is
    /// not that shape (a path, a second colon, a port that is not 1 to 5 digits).
    private static func split(_ host: String) -> (name: String, bracketed: Bool, port: UInt16)? {
        var name = Substring(host)
        var portText: Substring?
        var bracketed = false
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            name = host[host.index(after: host.startIndex)..<close]
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            bracketed = true
        } else if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            portText = host[host.index(after: colon)...]
        }
        guard !name.isEmpty else { return nil }
        guard let portText else { return (String(name), bracketed, 80) }
        guard (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText) else {
            return nil
        }
        return (String(name), bracketed, port)
    }

    /// A literal address's bytes: 16 for IPv6 (bracketed in a `Host`), 4 for strict dotted IPv4
    /// (so the families never compare equal); nil for a name.
    private static func addressBytes(_ text: String, bracketed: Bool) -> [UInt8]? {
        if bracketed {
            var address = in6_addr()
            guard !text.contains("%"), inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            return withUnsafeBytes(of: address) { Array($0) }
        }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { Array($0) }
    }
}
