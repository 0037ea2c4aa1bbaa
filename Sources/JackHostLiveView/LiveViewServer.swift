// LiveViewServer.swift
//
// `--http`: a read-only live view of a capture, served by libmicrohttpd (Debian's
// libmicrohttpd-dev) on its own threads, never the JACK real-time thread.
//
// Threads and bounds:
// - MHD runs one thread per connection (a stalled viewer blocks only its own thread), at most
//   ``LiveViewServer/connectionLimit`` connections (more are refused at accept), each closed
//   after ``LiveViewServer/idleTimeout`` seconds without progress (a slowloris or a viewer that
//   stopped reading), with ``LiveViewServer/requestMemory`` bytes for a request (larger headers get
//   MHD's 4xx). Only GET and HEAD are served (others 405); unknown paths 404; a wrong token 401.
// - Without a token, a request must name the view itself (``LiveViewAuthority``): another `Host`
//   is 421 (DNS rebinding) and an `Origin` of another site 403, before anything else is looked
//   at. With a token, the token is the protection and any name may be used.
// - Every response says nosniff, no-store, no framing, no referrer, and a Content-Security-Policy
//   that lets nothing load or run; the page's policy adds its own inline script and style, by a
//   nonce made for that response, and its event stream (``LiveViewPage/policy(nonce:)``).
// - A publisher thread builds one JSON snapshot 25 times a second (levels from the view's own
//   ``LevelMeter``, a real-time consumer publishing atomics like the terminal meter; counters,
//   session, take and plugin results) and replaces the previous one. Nothing is queued per
//   viewer: each event stream's callback waits for a newer snapshot and sends it (with the
//   spectrum of the channel that viewer picked), so a slow viewer skips snapshots, and its
//   memory is one event.
// - The spectrum comes from ``SpectrumAnalyser``, a deferred consumer on its own worker thread.

import CMicroHTTPD
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostPlugins
import JackHostSupport
import Synchronization

/// A failure to start the live view (the port is in use, the address is not this machine's).
package struct LiveViewError: Error, CustomStringConvertible {
    /// One line for stderr.
    package var description: String
}

/// The `--http` server: the page, its event stream and a JSON snapshot.
package final class LiveViewServer: @unchecked Sendable {
    // @unchecked: `sources` and `daemon` are set on the main thread before MHD and the publisher
    // start, and cleared after they stop; everything else shared is the Mutex-guarded feed.

    /// What the publisher reads from the capture session (all called on the publisher thread).
    package struct Sources: @unchecked Sendable {
        // @unchecked: read only by the publisher thread once started; the host, recorder and
        // result sources are safe to read from any thread (their counters are atomics or locked).
        /// The session's host.
        package var host: CaptureHost
        /// The take, when recording.
        package var recorder: Recorder?
        /// The server's name as given (nil for the default server).
        package var serverName: String?
        /// Seconds of recording the disk still holds, when known.
        package var secondsLeft: () -> Double?
        /// Every plugin's latest results.
        package var results: [PluginResultSource]
        /// `--loudness`: the measurements, when asked for.
        package var loudness: LoudnessMeter?
        /// The alarms raised now (`--silence`, `--clip`), each in words.
        package var alarms: () -> [String]

        /// What the publisher reads: `host`, the take's `recorder` (nil when not recording), the
        /// `serverName` as given, `secondsLeft` on disk, every plugin's `results`, the `loudness`
        /// measurements and the `alarms` raised.
        package init(
            host: CaptureHost, recorder: Recorder?, serverName: String?, secondsLeft: @escaping () -> Double?,
            results: [PluginResultSource], loudness: LoudnessMeter? = nil, alarms: @escaping () -> [String] = { [] }
        ) {
            self.loudness = loudness
            self.alarms = alarms
            self.host = host
            self.recorder = recorder
            self.serverName = serverName
            self.secondsLeft = secondsLeft
            self.results = results
        }
    }

    /// Connections at once; more are refused at accept.
    static let connectionLimit: UInt32 = 128
    /// Seconds a connection may make no progress (no bytes in or out) before it is closed.
    static let idleTimeout: UInt32 = 10
    /// Bytes for one connection's request line, headers and buffers.
    static let requestMemory = 32 * 1024
    /// Snapshots per second.
    static let updateRate = 25.0

    /// Where it listens, and the token it requires.
    package let settings: LiveViewSettings
    /// The view's own meter: add it to the host as a real-time consumer.
    package let meter = LevelMeter()
    /// The spectrum: add it to the host as a deferred consumer.
    package let spectrum = SpectrumAnalyser()
    /// The port listened on (the kernel's choice for port 0).
    private(set) var port: UInt16 = 0
    /// The names requests may use without a token (the bound address and port, and loopback's).
    let authority: LiveViewAuthority

    /// The record, stop, rotate and marker requests (`--http-control`), or nil for a read-only view.
    package let control: LiveViewControl?

    let feed = LiveViewFeed()
    private var listenSocket: Int32 = -1
    private var daemon: OpaquePointer?
    private var sources: Sources?
    private let publisherDone = Mutex<Bool>(false)
    private var publisherStarted = false

    /// Binds and listens (so a port in use fails before JACK is touched); serves nothing until ``start(sources:)``.
    package init(settings: LiveViewSettings) throws(LiveViewError) {
        self.settings = settings
        control = settings.control ? LiveViewControl(token: settings.token ?? LiveViewControl.newToken()) : nil
        let family = settings.isIPv6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw LiveViewError(description: "--http: cannot create a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if settings.isIPv6 {
            // [::] means IPv6 only, as written; 0.0.0.0 is the way to IPv4 (the token rule is per address).
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        // Room for either family; the kernel writes the bound port back into it.
        var storage = sockaddr_storage()
        let length = withUnsafeMutableBytes(of: &storage) { raw -> socklen_t in
            if settings.isIPv6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = settings.port.bigEndian
                _ = inet_pton(AF_INET6, settings.address, &address.sin6_addr)
                withUnsafeBytes(of: address) { raw.copyMemory(from: $0) }
                return socklen_t(MemoryLayout<sockaddr_in6>.size)
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = settings.port.bigEndian
            _ = inet_pton(AF_INET, settings.address, &address.sin_addr)
            withUnsafeBytes(of: address) { raw.copyMemory(from: $0) }
            return socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            let reason = BindFailure.reason(errno)
            close(descriptor)
            throw LiveViewError(description: "--http \(settings.urlHost):\(settings.port): cannot listen: \(reason)")
        }
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) {
            _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &boundLength) }
        }
        // sin_port and sin6_port sit at the same offset, right after the family.
        port = withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
        authority = LiveViewAuthority(address: settings.address, port: port)
        listenSocket = descriptor
    }

    deinit {
        stop()
        if listenSocket >= 0 { close(listenSocket) }
    }

    /// The address viewers open.
    package var url: String { "http://\(settings.urlHost):\(port)/" + (settings.token == nil ? "" : "?token=…") }

    /// Starts the publisher and the HTTP threads.
    package func start(sources: Sources) throws(LiveViewError) {
        self.sources = sources
        let context = Unmanaged.passUnretained(self).toOpaque()
        daemon = jh_mhd_start(
            listenSocket, LiveViewServer.handleRequest, context, Self.connectionLimit, Self.connectionLimit,
            Self.idleTimeout, Self.requestMemory, 512 * 1024)
        guard daemon != nil else { throw LiveViewError(description: "--http: libmicrohttpd could not start its threads") }
        publisherStarted = true
        WorkerThread.start(name: "jackhost-live") { [self] in
            var next = monotonicSeconds()
            let builder = LiveViewSnapshotBuilder(sources: sources, meter: meter, control: control)
            while !feed.isStopping {
                feed.publish(builder.build(now: monotonicSeconds()))
                next += 1 / Self.updateRate
                let wait = next - monotonicSeconds()
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) } else { next = monotonicSeconds() }
            }
            publisherDone.withLock { $0 = true }
        }
    }

    /// Ends every event stream, stops the HTTP threads and the publisher. Idempotent.
    package func stop() {
        feed.stop()
        if let daemon {
            MHD_stop_daemon(daemon)
            self.daemon = nil
        }
        if publisherStarted {
            while !publisherDone.withLock({ $0 }) { usleep(1000) }
            publisherStarted = false
        }
    }

    // MARK: Requests (MHD's connection threads)

    /// What a request is answered with.
    enum Route: Equatable {
        case page
        case events(channel: Int)
        case state
        case notFound, methodNotAllowed, unauthorized
        /// Without a token: a `Host` that does not name this view (421), as DNS rebinding sends.
        case misdirected
        /// Without a token: an `Origin` of another site (403). For a control request, with or
        /// without a token: an `Origin` or `Sec-Fetch-Site` that is not this view's own page.
        case foreignOrigin
        /// A control request (`POST /api/ACTION`) that passed every check.
        case control(LiveViewAction)
        /// A control request to a read-only view (no `--http-control`): 405.
        case controlDisabled
        /// A control request without the token in a header (`X-JackHost-Token` or
        /// `Authorization: Bearer`): 401. A token only in the URL does not count.
        case controlUnauthorized
    }

    /// Decides a request's answer from its method, path, token, `Host` and `Origin` (pure: tested
    /// without a socket). Without an expected token, `host` and `origin` must name the view
    /// (`authority`), checked first; with one, the token alone decides. A `POST /api/...` is a
    /// control request, decided by ``controlRoute(path:control:headerToken:host:origin:fetchSite:)``.
    static func route(
        method: String, path: String, token: String?, expected: String?, channel: String?,
        host: String?, origin: String?, authority: LiveViewAuthority,
        control: String? = nil, headerToken: String? = nil, fetchSite: String? = nil
    ) -> Route {
        if expected == nil {
            guard authority.accepts(host: host) else { return .misdirected }
            guard authority.accepts(origin: origin) else { return .foreignOrigin }
        }
        if method == "POST" && path.hasPrefix("/api/") {
            return controlRoute(path: path, control: control, headerToken: headerToken, host: host, origin: origin, fetchSite: fetchSite)
        }
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed }
        if let expected, !LiveViewSettings.tokenMatches(token, expected: expected) { return .unauthorized }
        switch path {
        case "/", "/index.html": return .page
        case "/events": return .events(channel: channel.flatMap { Int($0) }.map { max(0, min($0, 1023)) } ?? 0)
        case "/state.json": return .state
        default: return .notFound
        }
    }

    /// A control request: refused on a read-only view; from a browser, only from this view's own
    /// page (an `Origin`, when sent, must be `http://` and the request's own `Host`, and a
    /// `Sec-Fetch-Site`, when sent, `same-origin` or `none`); and only with `control`, the token,
    /// in a header. A page of another site can neither read the token nor send that header
    /// without a CORS preflight, which this server never grants.
    static func controlRoute(
        path: String, control: String?, headerToken: String?, host: String?, origin: String?, fetchSite: String?
    ) -> Route {
        guard let control else { return .controlDisabled }
        guard let action = LiveViewAction(rawValue: String(path.dropFirst("/api/".count))) else { return .notFound }
        if let origin, origin.lowercased() != "http://" + (host ?? "").lowercased() { return .foreignOrigin }
        if let fetchSite, fetchSite != "same-origin" && fetchSite != "none" { return .foreignOrigin }
        guard LiveViewSettings.tokenMatches(headerToken, expected: control) else { return .controlUnauthorized }
        return .control(action)
    }

    private static let handleRequest: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
        let server = Unmanaged<LiveViewServer>.fromOpaque(context!).takeUnretainedValue()
        return server.answer(connection!, path: url.map { String(cString: $0) } ?? "", method: method.map { String(cString: $0) } ?? "")
    }

    private func answer(_ connection: OpaquePointer, path: String, method: String) -> MHD_Result {
        func argument(_ kind: MHD_ValueKind, _ key: String) -> String? {
            MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
        }
        var headerToken = argument(.HEADER_KIND, "X-JackHost-Token")
        if headerToken == nil, let header = argument(.HEADER_KIND, "Authorization"), header.hasPrefix("Bearer ") {
            headerToken = String(header.dropFirst(7))
        }
        let route = Self.route(
            method: method, path: path, token: argument(.GET_ARGUMENT_KIND, "token") ?? headerToken, expected: settings.token,
            channel: argument(.GET_ARGUMENT_KIND, "channel"), host: argument(.HEADER_KIND, "Host"),
            origin: argument(.HEADER_KIND, "Origin"), authority: authority, control: control?.token,
            headerToken: headerToken, fetchSite: argument(.HEADER_KIND, "Sec-Fetch-Site"))
        if case .control(let action) = route, let control {
            return Self.answerControl(connection, action: action, label: argument(.GET_ARGUMENT_KIND, "label") ?? "", control: control)
        }
        if path.hasPrefix("/api/") && method == "POST" { control?.countRejected() }
        switch route {
        case .page:
            let nonce = LiveViewPage.newNonce()
            return Self.send(
                connection, status: 200, type: "text/html; charset=utf-8",
                body: Array(LiveViewPage.html(nonce: nonce, controlToken: control?.token).utf8),
                policy: LiveViewPage.policy(nonce: nonce))
        case .state:
            return Self.send(connection, status: 200, type: "application/json", body: Array(feed.event(channel: nil, spectrum: spectrum).utf8))
        case .events(let channel):
            let stream = Unmanaged.passRetained(LiveViewStream(feed: feed, spectrum: spectrum, channel: channel)).toOpaque()
            guard
                let response = MHD_create_response_from_callback(
                    UInt64.max, 64 * 1024, LiveViewStream.read, stream, LiveViewStream.release)
            else {
                Unmanaged<LiveViewStream>.fromOpaque(stream).release()
                return .NO
            }
            Self.addHeaders(response, type: "text/event-stream", policy: Self.restrictivePolicy)
            let result = MHD_queue_response(connection, 200, response)
            MHD_destroy_response(response)
            return result
        case .notFound:
            return Self.send(connection, status: 404, type: "text/plain", body: Array("not found: the live view serves / and /events\n".utf8))
        case .methodNotAllowed:
            return Self.send(connection, status: 405, type: "text/plain", body: Array("read-only: GET only\n".utf8), allow: true)
        case .unauthorized:
            return Self.send(connection, status: 401, type: "text/plain", body: Array("a token is required: add ?token=TOKEN\n".utf8))
        case .misdirected:
            let text = "this live view answers only \(authority.preferredURL); open that address (or give --http-token to reach it by another name)\n"
            return Self.send(connection, status: 421, type: "text/plain", body: Array(text.utf8))
        case .foreignOrigin:
            let text = "this live view does not answer other sites' pages; open \(authority.preferredURL) itself\n"
            return Self.send(connection, status: 403, type: "text/plain", body: Array(text.utf8))
        case .controlDisabled:
            return Self.send(
                connection, status: 405, type: "text/plain",
                body: Array("read-only: start jackhost with --http-control to take record, stop, rotate and marker requests\n".utf8), allow: true)
        case .controlUnauthorized:
            return Self.send(
                connection, status: 401, type: "text/plain",
                body: Array("a control request needs the token in an X-JackHost-Token header (the page sends it)\n".utf8))
        case .control:
            return .NO  // answered above
        }
    }

    /// A control request that passed every check: queued for the take's loop, answered with its
    /// outcome as JSON (`{"ok":…,"action":…,"state":…}` or `{"ok":false,…,"error":…}`).
    private static func answerControl(
        _ connection: OpaquePointer, action: LiveViewAction, label: String, control: LiveViewControl
    ) -> MHD_Result {
        func reply(_ status: UInt32, ok: Bool, _ field: String, _ text: String) -> MHD_Result {
            let body = "{\"ok\":\(ok),\"action\":\"\(action.rawValue)\",\"\(field)\":\(LiveViewSnapshotBuilder.string(text))}\n"
            return send(connection, status: status, type: "application/json", body: Array(body.utf8))
        }
        guard TakeMarker.isAcceptableLabel(label) else {
            control.countRejected()
            return reply(400, ok: false, "error", "a label is at most \(TakeMarker.longestLabel) bytes of text without control characters")
        }
        switch control.submit(action, label: action == .marker ? label : "") {
        case .answered(.accepted(let state)): return reply(200, ok: true, "state", state)
        case .answered(.refused(let reason)): return reply(409, ok: false, "error", reason)
        case .busy: return reply(503, ok: false, "error", "\(LiveViewControl.queueLimit) requests are already waiting; try again")
        case .timedOut: return reply(504, ok: false, "error", "the take did not answer within \(Int(LiveViewControl.replyTimeout)) s")
        }
    }

    /// The Content-Security-Policy of every response but the page: nothing may load, run or frame it.
    static let restrictivePolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The headers every response carries besides its policy: no type sniffing, no caching (the
    /// state changes 25 times a second, and may name files), no framing, no referrer (a token may
    /// be in the address).
    static let commonHeaders = [
        ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
    ]

    /// Adds the type, the policy and ``commonHeaders`` to a response.
    private static func addHeaders(_ response: OpaquePointer, type: String, policy: String) {
        MHD_add_response_header(response, "Content-Type", type)
        MHD_add_response_header(response, "Content-Security-Policy", policy)
        for (name, value) in commonHeaders { MHD_add_response_header(response, name, value) }
    }

    /// Queues a whole response from a buffer, with every header a response carries.
    private static func send(
        _ connection: OpaquePointer, status: UInt32, type: String, body: [UInt8], allow: Bool = false, policy: String = restrictivePolicy
    ) -> MHD_Result {
        var body = body
        guard let response = MHD_create_response_from_buffer(body.count, &body, .RESPMEM_MUST_COPY) else { return .NO }
        addHeaders(response, type: type, policy: policy)
        if allow { MHD_add_response_header(response, "Allow", "GET, HEAD") }
        let result = MHD_queue_response(connection, status, response)
        MHD_destroy_response(response)
        return result
    }
}

/// One viewer's event stream: at most one event in hand, the newest.
final class LiveViewStream: @unchecked Sendable {
    // @unchecked: MHD calls `read` for one connection from that connection's thread only.
    /// Where snapshots come from.
    let feed: LiveViewFeed
    /// Where this viewer's spectrum comes from.
    let spectrum: SpectrumAnalyser
    /// The channel whose spectrum this viewer watches, 0-based.
    let channel: Int
    private var sequence = -1
    private var pending: [UInt8] = []
    private var offset = 0

    /// A stream that starts with the reconnect delay, then sends each newer snapshot.
    init(feed: LiveViewFeed, spectrum: SpectrumAnalyser, channel: Int) {
        self.feed = feed
        self.spectrum = spectrum
        self.channel = channel
        // Tell EventSource to retry after a second if the stream ends.
        pending = Array("retry: 1000\n\n".utf8)
    }

    /// MHD's content reader: `context` is an unmanaged stream, retained until ``release``.
    static let read: MHD_ContentReaderCallback = { context, _, buffer, capacity in
        Unmanaged<LiveViewStream>.fromOpaque(context!).takeUnretainedValue().fill(buffer!, capacity: capacity)
    }

    /// Drops the stream's reference when MHD closes the connection.
    static let release: MHD_ContentReaderFreeCallback = { context in
        Unmanaged<LiveViewStream>.fromOpaque(context!).release()
    }

    /// Copies the rest of the current event, or waits (up to a second) for a newer snapshot.
    /// -1 ends the stream (the server stops).
    func fill(_ buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        if offset >= pending.count {
            guard let next = feed.waitForSnapshot(after: sequence, timeout: 1) else { return -1 }
            if next == sequence {
                pending = Array(": keep-alive\n\n".utf8)
            } else {
                sequence = next
                pending = Array(("data: " + feed.event(channel: channel, spectrum: spectrum) + "\n\n").utf8)
            }
            offset = 0
        }
        let count = min(capacity, pending.count - offset)
        pending.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        offset += count
        return count
    }
}

/// The latest snapshot, and a condition variable the event streams wait on.
final class LiveViewFeed: @unchecked Sendable {
    // @unchecked: every field is guarded by `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var sequence = 0
    private var latest = "{}"
    private var stopping = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// Whether ``stop()`` was called.
    var isStopping: Bool { locked { stopping } }

    /// Replaces the snapshot (JSON without its closing brace) and wakes the streams.
    func publish(_ snapshot: String) {
        locked {
            latest = snapshot
            sequence += 1
            pthread_cond_broadcast(condition)
        }
    }

    /// Wakes every stream to end.
    func stop() {
        locked {
            stopping = true
            pthread_cond_broadcast(condition)
        }
    }

    /// The sequence number of a snapshot newer than `after` (or `after` again on timeout);
    /// nil when the server stops.
    func waitForSnapshot(after: Int, timeout: Double) -> Int? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(timeout * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return locked {
            while !stopping && sequence == after {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
            }
            return stopping ? nil : sequence
        }
    }

    /// The snapshot as one JSON object, with `channel`'s spectrum (null until there is one).
    func event(channel: Int?, spectrum analyser: SpectrumAnalyser) -> String {
        let common = locked { latest }
        guard common.count > 2 else { return common }
        var spectrumJSON = "null"
        if let channel, let spectrum = analyser.spectrum(of: channel) {
            let bytes = SpectrumAnalyser.quantise(spectrum.decibels)
            spectrumJSON =
                "{\"channel\":\(spectrum.channel),\"rate\":\(Int(spectrum.sampleRate)),\"size\":\(spectrum.size),\"bins\":\"\(Data(bytes).base64EncodedString())\"}"
        }
        return common + ",\"spectrum\":\(spectrumJSON)}"
    }
}
