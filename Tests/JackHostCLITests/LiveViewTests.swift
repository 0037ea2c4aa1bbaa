import JackHost
import XCTest

@testable import JackHostCLI

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

    func testRoutes() {
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/", token: nil, expected: nil, channel: nil), .page)
        XCTAssertEqual(LiveViewServer.route(method: "HEAD", path: "/index.html", token: nil, expected: nil, channel: nil), .page)
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/events", token: nil, expected: nil, channel: "3"), .events(channel: 3))
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/events", token: nil, expected: nil, channel: "x"), .events(channel: 0))
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/events", token: nil, expected: nil, channel: "99999"), .events(channel: 1023))
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/state.json", token: nil, expected: nil, channel: nil), .state)
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/../etc/passwd", token: nil, expected: nil, channel: nil), .notFound)
        XCTAssertEqual(LiveViewServer.route(method: "POST", path: "/", token: nil, expected: nil, channel: nil), .methodNotAllowed)
        XCTAssertEqual(LiveViewServer.route(method: "DELETE", path: "/", token: "t", expected: "t", channel: nil), .methodNotAllowed)
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/", token: "wrong", expected: "right", channel: nil), .unauthorized)
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/nowhere", token: nil, expected: "right", channel: nil), .unauthorized)
        XCTAssertEqual(LiveViewServer.route(method: "GET", path: "/events", token: "right", expected: "right", channel: nil), .events(channel: 0))
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
