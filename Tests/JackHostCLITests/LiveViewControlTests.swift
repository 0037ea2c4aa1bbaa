import Dispatch
import JackHost
import Synchronization
import XCTest

@testable import JackHostCLI
@testable import JackHostLiveView

/// `--http-control` without a socket or JACK: which requests reach the take, the mailbox between
/// the HTTP threads and the loop, and how the controller's effects become answers.
final class LiveViewControlTests: XCTestCase {
    private let loopback = LiveViewAuthority(address: "127.0.0.1", port: 8080)

    private func route(
        _ path: String = "/api/start", method: String = "POST", control: String? = "secret-token", headerToken: String? = "secret-token",
        urlToken: String? = nil, expected: String? = nil, host: String? = "127.0.0.1:8080", origin: String? = nil,
        fetchSite: String? = nil
    ) -> LiveViewServer.Route {
        LiveViewServer.route(
            method: method, path: path, token: urlToken ?? headerToken, expected: expected, channel: nil, host: host, origin: origin,
            authority: loopback, control: control, headerToken: headerToken, fetchSite: fetchSite)
    }

    func testEveryActionNeedsTheTokenInAHeader() {
        for action in LiveViewAction.allCases {
            XCTAssertEqual(route("/api/\(action.rawValue)"), .control(action))
        }
        XCTAssertEqual(route(headerToken: nil), .controlUnauthorized, "no token at all")
        XCTAssertEqual(route(headerToken: "secret-tokeN"), .controlUnauthorized)
        XCTAssertEqual(route(headerToken: nil, urlToken: "secret-token"), .controlUnauthorized, "a token only in the URL does not count")
        XCTAssertEqual(route("/api/quit"), .notFound, "quit is not a browser action")
        XCTAssertEqual(route("/api/start", method: "GET"), .notFound, "GET never acts")
    }

    func testAReadOnlyViewRefusesControl() {
        XCTAssertEqual(route(control: nil), .controlDisabled)
        XCTAssertEqual(route(control: nil, headerToken: nil), .controlDisabled)
    }

    func testOnlyTheViewsOwnPageMayPost() {
        XCTAssertEqual(route(origin: "http://127.0.0.1:8080"), .control(.start))
        XCTAssertEqual(route(origin: "HTTP://127.0.0.1:8080"), .control(.start), "compared case-insensitively")
        XCTAssertEqual(route(fetchSite: "same-origin"), .control(.start))
        XCTAssertEqual(route(fetchSite: "none"), .control(.start))
        // Another site's page in the same browser, even with the token (it cannot read it, but must not need to be unable to).
        XCTAssertEqual(route(origin: "http://evil.example"), .foreignOrigin)
        XCTAssertEqual(route(origin: "http://localhost:8080"), .foreignOrigin, "Origin must be the request's own Host")
        XCTAssertEqual(route(origin: "null"), .foreignOrigin)
        XCTAssertEqual(route(fetchSite: "cross-site"), .foreignOrigin)
        XCTAssertEqual(route(fetchSite: "same-site"), .foreignOrigin, "another port of the same host is another page")
        // Without --http-token, DNS rebinding is stopped before the control rules (the view's own names only).
        XCTAssertEqual(route(host: "evil.example:8080"), .misdirected)
        // With --http-token, a LAN name is fine, but the page must still be the view's own.
        XCTAssertEqual(route(expected: "secret-token", host: "studio.lan:8080", origin: "http://studio.lan:8080"), .control(.start))
        XCTAssertEqual(route(expected: "secret-token", host: "studio.lan:8080", origin: "http://evil.example"), .foreignOrigin)
    }

    func testTheMailboxCarriesEachRequestToItsAnswer() throws {
        let control = LiveViewControl(token: "t")
        let done = DispatchSemaphore(value: 0)
        let submissions = Mutex<[LiveViewControl.Submission]>([])
        DispatchQueue.global().async {
            let first = control.submit(.marker, label: "cough")
            let second = control.submit(.rotate, label: "")
            submissions.withLock { $0 = [first, second] }
            done.signal()
        }
        // The loop's side: take what is queued and answer it, as BrowserSource does each tick.
        var seen: [LiveViewControl.Request] = []
        let deadline = DispatchTime.now() + 5
        while seen.count < 2 && DispatchTime.now() < deadline {
            for request in control.takeRequests() {
                seen.append(request)
                control.answer(
                    request.id, with: request.action == .marker ? .accepted(state: "recording") : .refused("no take is open to rotate"))
            }
            usleep(1000)
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(seen.map(\.action), [.marker, .rotate])
        XCTAssertEqual(seen.first?.label, "cough")
        XCTAssertEqual(submissions.withLock { $0 }, [.answered(.accepted(state: "recording")), .answered(.refused("no take is open to rotate"))])
        XCTAssertEqual(control.counts, .init(accepted: 1, refused: 1, rejected: 0))
    }

    func testAnUnansweredRequestTimesOutAndIsWithdrawn() {
        let control = LiveViewControl(token: "t")
        let started = DispatchTime.now()
        XCTAssertEqual(control.submit(.start, label: ""), .timedOut)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        XCTAssertGreaterThanOrEqual(waited, LiveViewControl.replyTimeout)
        XCTAssertLessThan(waited, LiveViewControl.replyTimeout + 1)
        XCTAssertEqual(control.takeRequests(), [], "a withdrawn request never reaches the take")
    }

    func testEffectsBecomeAnswers() {
        XCTAssertEqual(BrowserSource.outcome(of: .start, effects: [.startTake], state: .recording), .accepted(state: "recording"))
        XCTAssertEqual(
            BrowserSource.outcome(of: .start, effects: [.reportProgress], state: .recording),
            .refused("browser /api/start ignored: it starts a take only with record --signal-trigger"))
        XCTAssertEqual(
            BrowserSource.outcome(of: .rotate, effects: [.refused("browser /api/rotate ignored: no take is open to rotate")], state: .armed),
            .refused("browser /api/rotate ignored: no take is open to rotate"))
        XCTAssertEqual(BrowserSource.outcome(of: .marker, effects: [], state: .idle), .accepted(state: "idle"), "queued until connected")
        let request = LiveViewControl.Request(id: 1, action: .marker, label: "chorus")
        XCTAssertEqual(BrowserSource.command(for: request, origin: "browser /api/marker"), .marker(label: "chorus", origin: "browser /api/marker"))
    }

    func testThePageCarriesTheTokenOnlyWithControl() {
        XCTAssertFalse(LiveViewPage.html(nonce: "n").contains("<meta name=\"jackhost-control\""))
        let page = LiveViewPage.html(nonce: "n", controlToken: "a\"b<c")
        XCTAssertTrue(page.contains(#"<meta name="jackhost-control" content="a&quot;b&lt;c">"#), "the token is escaped for its attribute")
    }

    func testControlNeedsTheLiveView() throws {
        let parsed = try parseArguments(["--http", "0", "--http-control"], options: LiveViewSettings.table, command: "record")
        XCTAssertEqual(try LiveViewSettings.parse(parsed)?.control, true)
        let without = try parseArguments(["--http-control"], options: LiveViewSettings.table, command: "record")
        XCTAssertThrowsError(try LiveViewSettings.parse(without))
    }
}
