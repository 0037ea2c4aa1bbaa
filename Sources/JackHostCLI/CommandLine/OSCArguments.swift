// OSCArguments.swift
//
// `--osc [ADDRESS:]PORT` and `--osc-allow CIDR` on the command line: the options' table entries
// and their parsing into OSCSettings. Checked before JACK is touched, so a mistake is a usage
// error (status 2).

import Glibc

/// Where `--osc` listens for OSC over UDP, and which senders it answers.
struct OSCSettings: Equatable {
    /// The IPv4 address the socket binds, dotted (127.0.0.1 unless given).
    var address: String
    /// The UDP port; 0 asks the kernel for any free one (the start note names it).
    var port: UInt16
    /// Networks besides loopback whose senders are heard (`--osc-allow`).
    var allowed: [IPv4Network]

    /// The options both capture commands' tables add.
    static let table: [OptionSpec] = [
        OptionSpec(
            "osc", value: "[ADDRESS:]PORT",
            help:
                "take commands as OSC over UDP at ADDRESS:PORT (/jackhost/start, stop, rotate, marker, status, subscribe, unsubscribe, quit and jack_capture's paths; see the README); ADDRESS is IPv4 and defaults to 127.0.0.1; OSC has no authentication, so only loopback senders and --osc-allow networks are heard; a port in use ends jackhost with status 1 before JACK is touched"
        ),
        OptionSpec(
            "osc-allow", value: "CIDR", repeatable: true,
            help:
                "with --osc: also hear senders in CIDR (e.g. 192.168.1.0/24 or one address; repeatable or a comma list); needed for a non-loopback ADDRESS"
        ),
    ]

    /// Reads `--osc` and `--osc-allow`; nil without `--osc`.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> OSCSettings? {
        let allowTexts = (parsed.values["osc-allow"] ?? []).flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard let text = parsed.value("osc") else {
            if !allowTexts.isEmpty { throw UsageError("--osc-allow needs --osc [ADDRESS:]PORT; give both, or neither") }
            return nil
        }
        var allowed: [IPv4Network] = []
        for item in allowTexts { allowed.append(try IPv4Network(parsing: String(item))) }
        return try parse(address: text, allowed: allowed)
    }

    /// Checks `--osc TEXT` (`PORT`, `:PORT` or `ADDRESS:PORT`; ADDRESS IPv4 or `localhost`)
    /// against the allowed networks: a bind address beyond loopback needs at least one.
    static func parse(address text: String, allowed: [IPv4Network]) throws(UsageError) -> OSCSettings {
        let shown = ValueParsing.shown(text)
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("[") || text.filter({ $0 == ":" }).count > 1 {
            throw UsageError("--osc \(shown): OSC listens on IPv4 only; give an address like 127.0.0.1 or 0.0.0.0, or only the port")
        }
        if let colon = text.lastIndex(of: ":") {
            let given = text[..<colon]
            portText = text[text.index(after: colon)...]
            if !given.isEmpty { host = given == "localhost" ? "127.0.0.1" : String(given) }
        }
        guard let port = UInt16(portText), !portText.hasPrefix("+") else {
            throw UsageError("--osc \(shown): the port must be a number from 0 to 65535 (e.g. --osc 7770 or --osc 0.0.0.0:7770)")
        }
        guard let bits = IPv4Network.address(host) else {
            throw UsageError(
                "--osc \(shown): \"\(ValueParsing.shown(host))\" is not an IPv4 address; give one like 127.0.0.1 or 0.0.0.0, or only the port")
        }
        let settings = OSCSettings(address: host, port: port, allowed: allowed)
        if !IPv4Network.loopback.contains(bits) && allowed.isEmpty {
            throw UsageError(
                "--osc \(shown) listens beyond this machine and OSC has no authentication; add --osc-allow CIDR (e.g. --osc-allow 192.168.1.0/24) to name who may send, or bind 127.0.0.1"
            )
        }
        return settings
    }

    /// Whether a sender at `address` (host byte order) is heard: loopback, or an allowed network.
    func permits(_ address: UInt32) -> Bool {
        IPv4Network.loopback.contains(address) || allowed.contains { $0.contains(address) }
    }
}

/// An IPv4 network, `192.168.1.0/24`; a bare address is a network of one.
struct IPv4Network: Equatable, CustomStringConvertible {
    /// The network's first address, host byte order (host bits cleared).
    let base: UInt32
    /// The prefix length, 0 to 32.
    let prefixLength: Int

    /// 127.0.0.0/8, always heard.
    static let loopback = IPv4Network(base: 0x7F00_0000, prefixLength: 8)

    init(base: UInt32, prefixLength: Int) {
        self.prefixLength = prefixLength
        self.base = base & Self.mask(prefixLength)
    }

    /// Reads `A.B.C.D/N` or `A.B.C.D` (an `--osc-allow` value); host bits are ignored.
    init(parsing text: String) throws(UsageError) {
        let shown = ValueParsing.shown(text)
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = parts.first.flatMap({ Self.address(String($0)) }) else {
            throw UsageError("--osc-allow \(shown): give an IPv4 network like 192.168.1.0/24 or one address like 192.168.1.20")
        }
        var length = 32
        if parts.count == 2 {
            guard let number = Int(parts[1]), (0...32).contains(number), !parts[1].hasPrefix("+") else {
                throw UsageError("--osc-allow \(shown): the prefix length after / must be a number from 0 to 32")
            }
            length = number
        }
        self.init(base: address, prefixLength: length)
    }

    /// Whether `address` (host byte order) is in this network.
    func contains(_ address: UInt32) -> Bool { address & Self.mask(prefixLength) == base }

    var description: String { "\(Self.dotted(base))/\(prefixLength)" }

    /// The netmask of a prefix length, host byte order.
    private static func mask(_ length: Int) -> UInt32 { length == 0 ? 0 : UInt32.max << UInt32(32 - length) }

    /// A dotted IPv4 address in host byte order; nil when it is not one (inet_pton's rules).
    static func address(_ text: String) -> UInt32? {
        var parsed = in_addr()
        guard inet_pton(AF_INET, text, &parsed) == 1 else { return nil }
        return UInt32(bigEndian: parsed.s_addr)
    }

    /// `192.168.1.20` for an address in host byte order.
    static func dotted(_ address: UInt32) -> String {
        "\(address >> 24).\((address >> 16) & 0xFF).\((address >> 8) & 0xFF).\(address & 0xFF)"
    }
}
