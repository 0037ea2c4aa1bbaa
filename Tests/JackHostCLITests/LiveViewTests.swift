import JackHost
import XCTest

@testable import JackHostCLI
@testable import JackHostLiveView

/// `--http` parsing, routing, tokens, the JSON and the FFT, without a socket or JACK.
final class LiveViewTests: XCTestCase {
    func testAddressesDefaultToLoopbackAndNonLoopbackNeedsAToken() throws {
        XCTAssertEqual(try LiveViewSettings.parse(address: "8080", token: nil), .init(address: "127.0.0.1", port: 8080, token: nil))
        XCTAssertEqual(try LiveViewSettings.parse(address: ":0", token: nil), .init(address: "127.0.0.1", port: 0, token: nil))
        XCTAssertEqual(try LiveViewSettings.parse(address: "localhost:81", token: nil).address, "127.0.0.1")
        XCTAssertEqual(
            try LiveViewSettings.parse(address: "0.0.0.0:8080", token: "abcdefgh12"),
            .init(address: "0.0.0.0", port: 8080, token: "abcdefgh12"))
        XCTAssertThrowsError(try LiveViewSettings.parse(address: "0.0.0.0:8080", token: nil)) { error in
            XCTAssertTrue((error as? UsageError)?.message.contains("--http-token") == true)
        }
        for bad in ["", "x", "65536", "-1", "+80", "host.example:80", "1.2.3:80", "127.0.0.1:"] {
            XCTAssertThrowsError(try LiveViewSettings.parse(address: bad, token: nil), bad)
        }
        XCTAssertThrowsError(try LiveViewSettings.parse(address: "80", token: "short"))
    }

    func testIPv6AddressesGoInBracketsAndOnlyLoopbackNeedsNoToken() throws {
        let loopback = try LiveViewSettings.parse(address: "[::1]:8080", token: nil)
        XCTAssertEqual(loopback, .init(address: "::1", port: 8080, token: nil))
        XCTAssertTrue(loopback.isIPv6 && loopback.isLoopback)
        XCTAssertEqual(loopback.urlHost, "[::1]")
        XCTAssertTrue(try LiveViewSettings.parse(address: "[::ffff:127.0.0.1]:80", token: nil).isLoopback)
        XCTAssertTrue(try LiveViewSettings.parse(address: "[0:0:0:0:0:0:0:1]:80", token: nil).isLoopback)
        XCTAssertThrowsError(try LiveViewSettings.parse(address: "[::]:8080", token: nil)) { error in
            XCTAssertTrue((error as? UsageError)?.message.contains("http://[::]:8080/?token=TOKEN") == true, "\(error)")
        }
        XCTAssertFalse(try LiveViewSettings.parse(address: "[::]:8080", token: "abcdefgh12").isLoopback)
        XCTAssertFalse(try LiveViewSettings.parse(address: "[fe80::1]:80", token: "abcdefgh12").isLoopback)
        XCTAssertFalse(try LiveViewSettings.parse(address: "[::2]:80", token: "abcdefgh12").isLoopback)
        for (bad, hint) in [
            ("::1:8080", "brackets"), ("[::1]", "after the brackets"), ("[::1]8080", "after the brackets"),
            ("[::g]:80", "not an IPv6"), ("[127.0.0.1]:80", "not an IPv6"), ("[fe80::1%lo]:80", "not an IPv6"), ("[::1]:", "port"),
        ] {
            XCTAssertThrowsError(try LiveViewSettings.parse(address: bad, token: nil), bad) { error in
                XCTAssertTrue((error as? UsageError)?.message.contains(hint) == true, "\(bad): \(error)")
            }
        }
        XCTAssertThrowsError(try LiveViewSettings.parse(address: "80", token: "has a space"))
    }

    func testTokenWithoutHTTPIsAUsageError() throws {
        let parsed = try parseArguments(["--http-token", "abcdefgh12"], options: CommandTables.meter, command: "meter")
        XCTAssertThrowsError(try LiveViewSettings.parse(parsed))
        let both = try parseArguments(["--http", "9000"], options: CommandTables.record, command: "record")
        XCTAssertEqual(try LiveViewSettings.parse(both)?.port, 9000)
        for table in [CommandTables.record, CommandTables.meter, CommandTables.stream, CommandTables.run] {
            XCTAssertTrue(table.contains { $0.long == "http" } && table.contains { $0.long == "http-token" })
        }
    }

    func testTokensCompareExactly() {
        XCTAssertTrue(LiveViewSettings.tokenMatches("secret-token", expected: "secret-token"))
        XCTAssertFalse(LiveViewSettings.tokenMatches("secret-tokem", expected: "secret-token"))
        XCTAssertFalse(LiveViewSettings.tokenMatches("secret-token-longer", expected: "secret-token"))
        XCTAssertFalse(LiveViewSettings.tokenMatches("secret", expected: "secret-token"))
        XCTAssertFalse(LiveViewSettings.tokenMatches(nil, expected: "secret-token"))
        XCTAssertFalse(LiveViewSettings.tokenMatches("", expected: "secret-token"))
    }

    /// The view of most route tests: bound to 127.0.0.1:8080.
    private let loopback = LiveViewAuthority(address: "127.0.0.1", port: 8080)

    /// ``LiveViewServer/route`` with a `Host` that names the view unless one is given.
    private func route(
        _ method: String = "GET", _ path: String = "/", token: String? = nil, expected: String? = nil, channel: String? = nil,
        host: String? = "127.0.0.1:8080", origin: String? = nil, authority: LiveViewAuthority? = nil
    ) -> LiveViewServer.Route {
        LiveViewServer.route(
            method: method, path: path, token: token, expected: expected, channel: channel, host: host, origin: origin,
            authority: authority ?? loopback)
    }

    func testRoutes() {
        XCTAssertEqual(route("GET", "/"), .page)
        XCTAssertEqual(route("HEAD", "/index.html"), .page)
        XCTAssertEqual(route("GET", "/events", channel: "3"), .events(channel: 3))
        XCTAssertEqual(route("GET", "/events", channel: "x"), .events(channel: 0))
        XCTAssertEqual(route("GET", "/events", channel: "99999"), .events(channel: 1023))
        XCTAssertEqual(route("GET", "/state.json"), .state)
        XCTAssertEqual(route("GET", "/../etc/passwd"), .notFound)
        XCTAssertEqual(route("POST", "/"), .methodNotAllowed)
        XCTAssertEqual(route("DELETE", "/", token: "t", expected: "t"), .methodNotAllowed)
        XCTAssertEqual(route("GET", "/", token: "wrong", expected: "right"), .unauthorized)
        XCTAssertEqual(route("GET", "/nowhere", expected: "right"), .unauthorized)
        XCTAssertEqual(route("GET", "/events", token: "right", expected: "right"), .events(channel: 0))
    }

    /// DNS rebinding: without a token, only a `Host` naming the view with its port is answered.
    func testWithoutATokenOnlyTheViewsOwnHostIsAnswered() {
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "LocalHost:8080", "[::1]:8080", "[0:0:0:0:0:0:0:1]:8080"] {
            XCTAssertEqual(route(host: host), .page, host)
            XCTAssertEqual(route("GET", "/state.json", host: host), .state, host)
        }
        for host in [
            "evil.example:8080", "EVIL.example:8080", "evil.example", "localhost", "localhost:8081", "127.0.0.1:80", "127.0.0.1",
            "[::1]:8081", "[::1]", "localhost.:8080", "sub.localhost:8080", "127.0.0.2:8080", "127.1:8080", "0.0.0.0:8080",
            "[::ffff:127.0.0.1]:8080", "[::1%lo]:8080", "localhost:+8080", "localhost:08080x", "localhost:", ":8080", "[::1]8080",
            "[::1:8080", "localhost:8080/", "localhost:8080:8080", "", " ",
        ] {
            XCTAssertEqual(route(host: host), .misdirected, host)
        }
        XCTAssertEqual(route(host: nil), .misdirected, "no Host at all (HTTP/1.0 included)")
        // Before the method, the token and the path: nothing is told to a foreign name.
        XCTAssertEqual(route("POST", "/", host: "evil.example:8080"), .misdirected)
        XCTAssertEqual(route("GET", "/events", host: "evil.example:8080"), .misdirected)
        XCTAssertEqual(route("GET", "/nowhere", host: "evil.example:8080"), .misdirected)
        // Port 80 may be left out, as browsers do.
        let port80 = LiveViewAuthority(address: "127.0.0.1", port: 80)
        XCTAssertEqual(route(host: "localhost", authority: port80), .page)
        XCTAssertEqual(route(host: "127.0.0.1:80", authority: port80), .page)
        XCTAssertEqual(route(host: "evil.example", authority: port80), .misdirected)
    }

    /// The bound address is accepted too, IPv6 compared as an address; a wildcard has none.
    func testTheBoundAddressIsAcceptedAndAWildcardAcceptsOnlyLoopbackNames() {
        let other = LiveViewAuthority(address: "127.0.0.2", port: 9000)
        XCTAssertEqual(route(host: "127.0.0.2:9000", authority: other), .page)
        XCTAssertEqual(route(host: "127.0.0.1:9000", authority: other), .page)
        XCTAssertEqual(route(host: "127.0.0.3:9000", authority: other), .misdirected)
        XCTAssertEqual(other.preferredURL, "http://127.0.0.2:9000/")
        let ipv6 = LiveViewAuthority(address: "::1", port: 9000)
        XCTAssertEqual(ipv6.preferredURL, "http://[::1]:9000/")
        XCTAssertEqual(route(host: "[::1]:9000", authority: ipv6), .page)
        XCTAssertEqual(route(host: "[0::1]:9000", authority: ipv6), .page)
        XCTAssertEqual(route(host: "::1:9000", authority: ipv6), .misdirected, "IPv6 only in brackets")
        let mapped = LiveViewAuthority(address: "::ffff:127.0.0.1", port: 9000)
        XCTAssertEqual(route(host: "[::ffff:7f00:1]:9000", authority: mapped), .page, "as a browser writes it")
        for wildcard in ["0.0.0.0", "::"] {
            let any = LiveViewAuthority(address: wildcard, port: 9000)
            XCTAssertEqual(any.preferredURL, "http://127.0.0.1:9000/")
            XCTAssertEqual(route(host: "localhost:9000", authority: any), .page, wildcard)
            for host in ["0.0.0.0:9000", "[::]:9000", "192.168.1.20:9000", "evil.example:9000"] {
                XCTAssertEqual(route(host: host, authority: any), .misdirected, "\(wildcard) \(host)")
            }
        }
    }

    /// Without a token, an `Origin` must be absent or this view's own.
    func testWithoutATokenAnOriginOfAnotherSiteIsRefused() {
        XCTAssertEqual(route(origin: nil), .page)
        for origin in ["http://127.0.0.1:8080", "http://localhost:8080", "HTTP://LOCALHOST:8080", "http://[::1]:8080"] {
            XCTAssertEqual(route("GET", "/events", origin: origin), .events(channel: 0), origin)
        }
        for origin in [
            "http://evil.example:8080", "http://evil.example", "https://127.0.0.1:8080", "http://127.0.0.1:8081", "http://localhost",
            "null", "", "http://", "http://127.0.0.1:8080/", "file://", "ws://127.0.0.1:8080",
        ] {
            XCTAssertEqual(route("GET", "/state.json", origin: origin), .foreignOrigin, origin)
        }
        // A foreign Host is told first.
        XCTAssertEqual(route(host: "evil.example:8080", origin: "http://evil.example:8080"), .misdirected)
    }

    /// With a token, the token is the protection: any `Host` or `Origin`, and only the token decides.
    func testWithATokenHostAndOriginAreNotChecked() {
        let lan = LiveViewAuthority(address: "0.0.0.0", port: 8080)
        for host in ["192.168.1.20:8080", "recorder.local:8080", "evil.example:8080", nil] {
            XCTAssertEqual(route(token: "right-token", expected: "right-token", host: host, authority: lan), .page, "\(host ?? "none")")
            XCTAssertEqual(route(token: "wrong-token", expected: "right-token", host: host, authority: lan), .unauthorized)
            XCTAssertEqual(route(expected: "right-token", host: host, authority: lan), .unauthorized)
        }
        XCTAssertEqual(route("GET", "/state.json", token: "right-token", expected: "right-token", origin: "http://evil.example"), .state)
        XCTAssertEqual(route("GET", "/state.json", expected: "right-token", origin: "http://evil.example"), .unauthorized)
    }

    /// The page's script and style carry the response's nonce, and its policy names it.
    func testThePageCarriesItsNonceAndItsPolicyNamesIt() {
        let first = LiveViewPage.newNonce(), second = LiveViewPage.newNonce()
        XCTAssertEqual(first.count, 32)
        XCTAssertTrue(first.allSatisfy { $0.isHexDigit })
        XCTAssertNotEqual(first, second)
        let page = LiveViewPage.html(nonce: first)
        XCTAssertFalse(page.contains(LiveViewPage.nonceMark))
        XCTAssertTrue(page.contains("<script nonce=\"\(first)\">") && page.contains("<style nonce=\"\(first)\">"))
        XCTAssertEqual(page.split(separator: "<script", omittingEmptySubsequences: false).count, 2, "one script element")
        XCTAssertEqual(page.split(separator: "<style", omittingEmptySubsequences: false).count, 2, "one style element")
        XCTAssertFalse(page.contains(" style=") || page.contains("javascript:"), "nothing the policy would block")
        let policy = LiveViewPage.policy(nonce: first)
        XCTAssertTrue(policy.hasPrefix("default-src 'none'; "), policy)
        XCTAssertTrue(policy.contains("script-src 'nonce-\(first)'") && policy.contains("style-src 'nonce-\(first)'"), policy)
        XCTAssertTrue(policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"), policy)
        XCTAssertFalse(policy.contains("unsafe"), policy)
        XCTAssertTrue(LiveViewServer.restrictivePolicy.hasPrefix("default-src 'none'"))
    }

    func testJSONStringsAreEscapedAndLevelsAreDecibels() {
        XCTAssertEqual(LiveViewSnapshotBuilder.string("a\"b\\c\n</script>\u{1}"), #""a\"b\\c\n\u003c/script>\u0001""#)
        XCTAssertEqual(
            [0.5, Float(0.5 / 2.0.squareRoot()), 1, 0].map(LiveViewSnapshotBuilder.decibelJSON), ["-6.02", "-9.03", "0.00", "null"])
        XCTAssertEqual(LiveViewSnapshotBuilder.number(.infinity, places: 0), "null")
        XCTAssertEqual(LiveViewSnapshotBuilder.number(12.6, places: 0), "13")
    }

    func testSpectrumPeaksAtTheSineFrequencyAtItsLevel() throws {
        let analyser = SpectrumAnalyser(size: 4096, rate: 25)
        let rate = 48000.0
        try analyser.prepare(format: StreamFormat(sampleRate: rate, channelCount: 2))
        XCTAssertNil(analyser.spectrum(of: 1))  // asks for channel 2 from now on
        // Bin 100 exactly (1171.875 Hz) at 0.5 on channel 2; silence on channel 1.
        let frequency = 100 * rate / 4096
        var frame = 0
        for _ in 0..<10 {
            let count = 1024
            var silent = [Float](repeating: 0, count: count)
            var sine = (0..<count).map { Float(0.5 * sin(2 * Double.pi * frequency * Double(frame + $0) / rate)) }
            frame += count
            silent.withUnsafeMutableBufferPointer { a in
                sine.withUnsafeMutableBufferPointer { b in
                    var pointers: [UnsafePointer<Float>] = [UnsafePointer(a.baseAddress!), UnsafePointer(b.baseAddress!)]
                    pointers.withUnsafeMutableBufferPointer { list in
                        analyser.consume(
                            AudioBlock(
                                buffers: AudioBufferListView(channels: list.baseAddress!, channelCount: 2, frameCount: count),
                                timestamp: AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)))
                    }
                }
            }
        }
        let spectrum = try XCTUnwrap(analyser.spectrum(of: 1))
        XCTAssertEqual(spectrum.decibels.count, 2049)
        let peak = try XCTUnwrap(spectrum.decibels.indices.max { spectrum.decibels[$0] < spectrum.decibels[$1] })
        XCTAssertEqual(peak, 100)
        // A sine on a bin reads its amplitude: 0.5 is -6.02 dBFS.
        XCTAssertEqual(spectrum.decibels[100], -6.02, accuracy: 0.05)
        // Hann leakage: far bins are far down.
        XCTAssertLessThan(spectrum.decibels[300], -100)
        XCTAssertEqual(SpectrumAnalyser.quantise([0, -140, -70, -.infinity, 3]), [255, 0, 128, 0, 255])
    }
}
