// LiveViewOptions.swift
//
// `--http ADDRESS:PORT` and `--http-token TOKEN`: where the live view listens and the secret it
// asks for. The command line's side (the option table, parsing and its usage errors) is the
// CLI's, in JackHostCLI/CommandLine/LiveViewArguments.swift, so that this module needs no argument parser.

import Glibc

/// Where the live view listens, and the token it requires (see ``LiveViewServer``).
package struct LiveViewSettings: Equatable, Sendable {
    /// The address to bind: IPv4 dotted (`127.0.0.1` when only a port was given) or IPv6
    /// without brackets (`::1`).
    package var address: String
    /// The TCP port; 0 lets the kernel choose one (the chosen port is printed).
    package var port: UInt16
    /// The secret every request must carry (`?token=` or `Authorization: Bearer`), or nil.
    package var token: String?
    /// Whether the view takes record, stop, rotate and marker requests (`--http-control`).
    package var control: Bool

    /// Settings for `address` (already checked: IPv4 dotted or IPv6 without brackets), `port`,
    /// `token` (nil for none) and whether it takes control requests.
    package init(address: String, port: UInt16, token: String?, control: Bool = false) {
        self.address = address
        self.port = port
        self.token = token
        self.control = control
    }

    /// Whether the address is IPv6.
    package var isIPv6: Bool { address.contains(":") }

    /// Whether the address is on the loopback network (127.0.0.0/8 or ::1, also as
    /// ::ffff:127.x.y.z), which needs no token.
    package var isLoopback: Bool {
        guard isIPv6 else { return address.hasPrefix("127.") }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return false }
        let octets = withUnsafeBytes(of: bytes) { Array($0) }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        return octets == Array(repeating: 0, count: 15) + [1] || (Array(octets[0..<12]) == mappedPrefix && octets[12] == 127)
    }

    /// The address as it appears in a URL: IPv6 in brackets.
    package var urlHost: String { isIPv6 ? "[\(address)]" : address }

    /// Compares a presented token with the expected one in time that depends only on their lengths.
    package static func tokenMatches(_ presented: String?, expected: String) -> Bool {
        guard let presented else { return false }
        let a = Array(presented.utf8), b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }
}
