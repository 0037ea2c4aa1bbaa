// LiveViewArguments.swift
//
// `--http ADDRESS:PORT`, `--http-token TOKEN` and `--http-control` on the command line: the options' table entries
// and their parsing into JackHostLiveView's LiveViewSettings. Checked before JACK is touched, so
// a mistake is a usage error (status 2).

import Glibc
import JackHostLiveView

extension LiveViewSettings {
    /// The options both capture commands' tables add.
    static let table: [OptionSpec] = [
        OptionSpec(
            "http", value: "[ADDRESS:]PORT",
            help:
                "serve a live view (meters, spectrum, session, take, results) in a browser at http://ADDRESS:PORT/; read-only; ADDRESS is IPv4 or [IPv6] and defaults to 127.0.0.1 (loopback); without --http-token, only requests to localhost, 127.0.0.1, [::1] or ADDRESS at PORT are answered (another Host or Origin is refused)"
        ),
        OptionSpec(
            "http-token", value: "TOKEN",
            help:
                "with --http: require TOKEN (?token=TOKEN or Authorization: Bearer TOKEN) on every request; needed for a non-loopback ADDRESS; with it, any host name may reach the view"
        ),
        OptionSpec(
            "http-control",
            help:
                "with --http: the page gains record, stop, rotate and marker buttons (POST /api/start, /api/stop, /api/rotate, /api/marker?label=TEXT, answered with JSON); each request needs the token (--http-token, or one made at start and known only to the page) in an X-JackHost-Token header, and a browser's only from the view's own page"
        ),
    ]

    /// Reads `--http`, `--http-token` and `--http-control`; nil without `--http`.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> LiveViewSettings? {
        let token = parsed.value("http-token")
        guard let text = parsed.value("http") else {
            if token != nil { throw UsageError("--http-token needs --http ADDRESS:PORT; give both, or neither") }
            if parsed.has("http-control") { throw UsageError("--http-control needs --http [ADDRESS:]PORT: the buttons are on the live view") }
            return nil
        }
        var settings = try parse(address: text, token: token)
        settings.control = parsed.has("http-control")
        return settings
    }

    /// Checks `--http TEXT` (`PORT`, `:PORT`, `ADDRESS:PORT` or `[IPV6]:PORT`; ADDRESS IPv4 or
    /// `localhost`) and the token.
    static func parse(address text: String, token: String?) throws(UsageError) -> LiveViewSettings {
        let shown = ValueParsing.shown(text)
        var host = "127.0.0.1"
        var portText = Substring(text)
        var bracketed = false
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            // [IPv6]:PORT, as in URLs: the brackets keep the address's colons apart from the port's.
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw UsageError("--http \(shown): give the port after the brackets, as in --http [::1]:8080")
            }
            portText = rest.dropFirst()
            bracketed = true
        } else if let colon = text.lastIndex(of: ":") {
            let given = text[..<colon]
            portText = text[text.index(after: colon)...]
            if given.contains(":") {
                throw UsageError("--http \(shown): put an IPv6 address in brackets, as in --http [::1]:8080")
            }
            if !given.isEmpty { host = given == "localhost" ? "127.0.0.1" : String(given) }
        }
        guard let port = UInt16(portText), !portText.hasPrefix("+") else {
            throw UsageError("--http \(shown): the port must be a number from 0 to 65535 (e.g. --http 8080 or --http 0.0.0.0:8080)")
        }
        if bracketed {
            var parsed = in6_addr()
            guard !host.contains("%"), inet_pton(AF_INET6, host, &parsed) == 1 else {
                throw UsageError(
                    "--http \(shown): \"\(ValueParsing.shown(host))\" is not an IPv6 address; give one like [::1] or [::], or only the port")
            }
        } else {
            var parsed = in_addr()
            guard inet_pton(AF_INET, host, &parsed) == 1 else {
                throw UsageError(
                    "--http \(shown): \"\(ValueParsing.shown(host))\" is not an IPv4 address; give one like 127.0.0.1 or 0.0.0.0, [::1] for IPv6, or only the port"
                )
            }
        }
        if let token {
            guard (8...256).contains(token.utf8.count), token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw UsageError("--http-token must be 8 to 256 printable characters without spaces (e.g. from `openssl rand -hex 16`)")
            }
        }
        let settings = LiveViewSettings(address: host, port: port, token: token)
        if !settings.isLoopback && token == nil {
            throw UsageError(
                "--http \(shown) listens beyond this machine; add --http-token TOKEN (viewers open http://\(settings.urlHost):\(port)/?token=TOKEN), or bind 127.0.0.1"
            )
        }
        return settings
    }
}
