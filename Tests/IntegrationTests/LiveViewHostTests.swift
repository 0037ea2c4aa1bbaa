import Foundation
import JackHost
import JackHostTesting
import XCTest

/// `--http` over a real loopback socket, against the built jackhost and a private server: a
/// request naming another host (DNS rebinding) or sent by another site's page gets a refusal
/// that tells nothing, the view's own names get the view, and every answer carries the
/// security headers.
final class LiveViewHostTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-live-host-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// A loopback view without a token: `Host: evil.example:PORT` on the state, the page and the
    /// event stream is 421 with nothing of the server, ports or take; a missing `Host` and a
    /// foreign `Origin` are refused too; `127.0.0.1`, `localhost` and the right port are served.
    func testAForeignHostIsRefusedWithoutDataAndTheViewsOwnHostIsServed() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let take = workDirectory.appendingPathComponent("secret-take-name.wav").path
            let child = try RunningJackhost(
                arguments: ["record", take, "-s", server.name, "-d", "60", "--no-meter", "--http", "127.0.0.1:0"], directory: workDirectory)
            let port = try Self.livePort(of: child)
            // Whatever the state would tell: the server's name, the ports, the take's path.
            let secrets = [server.name, "secret-take-name", "jackhost:in_", "system:capture", "\"session\"", "\"levels\""]

            for path in ["/state.json", "/", "/events", "/index.html?token=x", "/nowhere"] {
                let answer = try RawHTTP.get(port: port, path: path, headers: ["Host: evil.example:\(port)"])
                XCTAssertEqual(answer.status, 421, "\(path): \(answer.head)")
                XCTAssertTrue(answer.body.contains("http://127.0.0.1:\(port)/"), "\(path): the refusal says where to go: \(answer.body.prefix(300))")
                for secret in secrets { XCTAssertFalse(answer.body.contains(secret), "\(path) leaks \(secret): \(answer.body.prefix(300))") }
                Self.assertSecurityHeaders(answer, path)
            }
            for host in ["EVIL.EXAMPLE:\(port)", "localhost:\(port + 1)", "127.0.0.1", "localhost"] {
                XCTAssertEqual(try RawHTTP.get(port: port, path: "/state.json", headers: ["Host: \(host)"]).status, 421, host)
            }
            let noHost = try RawHTTP.get(port: port, path: "/state.json", headers: [], version: "HTTP/1.0")
            XCTAssertEqual(noHost.status, 421, "HTTP/1.0 without Host: \(noHost.head)")
            // HTTP/1.1 without Host: libmicrohttpd answers 400 itself, before jackhost sees it.
            let noHost11 = try RawHTTP.get(port: port, path: "/state.json", headers: [])
            XCTAssertTrue([400, 421].contains(noHost11.status), "HTTP/1.1 without Host: \(noHost11.head)")
            for secret in secrets { XCTAssertFalse(noHost.body.contains(secret) || noHost11.body.contains(secret), secret) }

            let foreign = try RawHTTP.get(port: port, path: "/state.json", headers: ["Host: 127.0.0.1:\(port)", "Origin: http://evil.example"])
            XCTAssertEqual(foreign.status, 403, foreign.head)
            for secret in secrets { XCTAssertFalse(foreign.body.contains(secret), "a foreign Origin gets \(secret): \(foreign.body)") }
            Self.assertSecurityHeaders(foreign, "foreign Origin")

            // The view's own names.
            var state = try RawHTTP.get(port: port, path: "/state.json", headers: ["Host: 127.0.0.1:\(port)"])
            XCTAssertTrue(
                JACKFixture.waitUntil(timeout: 10) {
                    state = (try? RawHTTP.get(port: port, path: "/state.json", headers: ["Host: 127.0.0.1:\(port)"])) ?? state
                    return state.body.contains("secret-take-name")
                }, state.body)
            XCTAssertEqual(state.status, 200, state.head)
            XCTAssertTrue(state.body.contains("\"levels\"") && state.body.contains(server.name), state.body)
            Self.assertSecurityHeaders(state, "/state.json")
            XCTAssertEqual(
                state.headers["content-security-policy"], "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

            let same = try RawHTTP.get(port: port, path: "/state.json", headers: ["Host: LOCALHOST:\(port)", "Origin: http://localhost:\(port)"])
            XCTAssertEqual(same.status, 200, same.head)

            let page = try RawHTTP.get(port: port, path: "/", headers: ["Host: localhost:\(port)"])
            XCTAssertEqual(page.status, 200, page.head)
            Self.assertSecurityHeaders(page, "/")
            let policy = page.headers["content-security-policy"] ?? ""
            let nonce = try XCTUnwrap(policy.firstMatch(of: /script-src 'nonce-([0-9a-f]{32})'/)?.1, policy)
            XCTAssertTrue(page.body.contains("<script nonce=\"\(nonce)\">") && page.body.contains("<style nonce=\"\(nonce)\">"), policy)
            XCTAssertTrue(policy.contains("connect-src 'self'") && !policy.contains("unsafe"), policy)

            let events = try RawHTTP.get(port: port, path: "/events", headers: ["Host: [::1]:\(port)"]) { $0.contains("data: ") }
            XCTAssertEqual(events.status, 200, events.head)
            XCTAssertEqual(events.headers["content-type"], "text/event-stream")
            XCTAssertTrue(events.body.contains("data: {"), events.body)
            Self.assertSecurityHeaders(events, "/events")

            for (path, method, status) in [("/nowhere", "GET", 404), ("/", "POST", 405)] {
                let answer = try RawHTTP.get(port: port, path: path, headers: ["Host: 127.0.0.1:\(port)"], method: method)
                XCTAssertEqual(answer.status, status, answer.head)
                Self.assertSecurityHeaders(answer, "\(method) \(path)")
            }
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
        }
    }

    /// With `--http-token`, the token is the protection: a LAN name in `Host` (or any other) is
    /// served with the token and refused (401, with the headers) without it.
    func testWithATokenAnyHostIsServedWithTheTokenOnly() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let token = "live-host-test-token"
            let child = try RunningJackhost(
                arguments: ["meter", "-s", server.name, "-d", "60", "--http", "127.0.0.1:0", "--http-token", token], directory: workDirectory)
            let port = try Self.livePort(of: child)
            let served = try RawHTTP.get(port: port, path: "/state.json?token=\(token)", headers: ["Host: recorder.local:\(port)"])
            XCTAssertEqual(served.status, 200, served.head)
            Self.assertSecurityHeaders(served, "with the token")
            let refused = try RawHTTP.get(port: port, path: "/state.json", headers: ["Host: recorder.local:\(port)"])
            XCTAssertEqual(refused.status, 401, refused.head)
            XCTAssertFalse(refused.body.contains(server.name), refused.body)
            Self.assertSecurityHeaders(refused, "without the token")
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(), 0, child.stderr)
        }
    }

    /// The port from "live view at http://127.0.0.1:PORT/" on jackhost's stderr.
    private static func livePort(of child: RunningJackhost, file: StaticString = #filePath, line: UInt = #line) throws -> UInt16 {
        var port: UInt16?
        _ = JACKFixture.waitUntil(timeout: 20) {
            port = child.stderr.firstMatch(of: /live view at http:\/\/127\.0\.0\.1:([0-9]+)\//).flatMap { UInt16($0.1) }
            return port != nil || !child.process.isRunning
        }
        return try XCTUnwrap(port, "no live view address on stderr: \(child.stderr)", file: file, line: line)
    }

    /// The headers every answer must carry, refusals included.
    private static func assertSecurityHeaders(_ answer: RawHTTP.Answer, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(answer.headers["x-content-type-options"], "nosniff", what, file: file, line: line)
        XCTAssertEqual(answer.headers["cache-control"], "no-store", what, file: file, line: line)
        XCTAssertEqual(answer.headers["x-frame-options"], "DENY", what, file: file, line: line)
        let policy = answer.headers["content-security-policy"] ?? ""
        XCTAssertTrue(
            policy.hasPrefix("default-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(what): \(policy)", file: file, line: line)
    }
}

/// HTTP/1.x by hand over a loopback TCP socket, so a test chooses every header (or none).
enum RawHTTP {
    /// A response: the status, the head as sent, headers by lowercased name, and the body read.
    struct Answer {
        var status: Int
        var head: String
        var headers: [String: String]
        var body: String
    }

    /// Sends one request with `headers` (and `Connection: close`) and reads until the server
    /// closes, `done` holds for the body read so far, or 5 s pass.
    static func get(
        port: UInt16, path: String, headers: [String], method: String = "GET", version: String = "HTTP/1.1",
        until done: (String) -> Bool = { _ in false }
    ) throws -> Answer {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .ECONNREFUSED) }
        let request = Array(([method + " " + path + " " + version] + headers + ["Connection: close", "", ""]).joined(separator: "\r\n").utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
            if let split = headEnd(received), done(String(decoding: received[split...], as: UTF8.self)) { break }
        }
        return parse(received)
    }

    /// Where the body starts (after the blank line), if the head is complete.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        let blank: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == blank }.map { $0 + 4 }
    }

    /// Splits a response into status, headers and body (status 0 when nothing came).
    private static func parse(_ bytes: [UInt8]) -> Answer {
        let split = headEnd(bytes) ?? bytes.count
        let head = String(decoding: bytes[..<split], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let status = lines.first.flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: status, head: head, headers: headers, body: String(decoding: bytes[split...], as: UTF8.self))
    }
}
