import CJack
import CPosix
import Glibc

/// The client layer: every `jack_*` call in the package goes through this file.
///
/// A `JackClient` owns one `jack_client_t`. Methods that are safe inside the
/// process callback are marked **real-time safe**; everything else must be
/// called from an ordinary thread and never from a JACK notification callback.
///
/// Any thread may use a client, and ``close(serverAlive:)`` may come from another thread at
/// any time: the ordinary methods take the client's lock and, once it is closed, answer as
/// an empty graph would (no ports, no connections) instead of touching a freed handle. The
/// client also owns the context its callbacks receive (`install(_:)`), as rust-jack's
/// `AsyncClient` owns its handlers, so a callback can never see a freed context.
public final class JackClient: @unchecked Sendable {
    // @unchecked: `isClosed`, `registeredPorts` and `callbackOwner` are guarded by `lock`;
    // `handle` is immutable, and used without the lock only by the real-time calls, which
    // run inside callbacks that end before `jack_client_close` returns.

    /// The raw `jack_client_t *`. Exposed to the package for the process callback only.
    package let handle: OpaquePointer
    /// Guards the fields below and serialises every ordinary libjack call with `close`.
    private let lock = Lock()
    /// The object the callbacks' context points to, kept alive until after `jack_client_close`.
    private var callbackOwner: AnyObject?
    /// The server this client talks to; nil for the default server.
    public let serverName: String?
    /// The client name the server assigned (normally the one asked for).
    public let name: String
    private var isClosed = false
    /// Ports this client registered and has not unregistered, removed before closing.
    private var registeredPorts: [JackPort] = []

    /// The JACK type string of audio ports.
    public static let audioPortType = "32 bit float mono audio"
    /// JACK's MIDI port type (`JACK_DEFAULT_MIDI_TYPE`).
    public static let midiPortType = "8 bit raw midi"

    /// Opens a client on a server.
    ///
    /// - Parameters:
    ///   - name: The client name to ask for.
    ///   - server: The server name, or nil for the default server (`$JACK_DEFAULT_SERVER` or "default").
    ///   - startServerIfNeeded: Let libjack start a server when none runs. Off by default: a capture
    ///     host should never start a server behind the user's back.
    /// - Throws: ``JackError`` that says why the server refused.
    ///
    /// The corresponding C function is `jack_client_open`.
    public init(name: String, server: String? = nil, startServerIfNeeded: Bool = false) throws(JackError) {
        // Names libjack would choke on (a long server name smashes its stack) never reach it;
        // libjack reads $JACK_DEFAULT_SERVER itself when no name is given.
        try JackError.checkClientName(name)
        let effectiveServer = server ?? JackClient.defaultServerFromEnvironment
        if let effectiveServer { try JackError.checkServerName(effectiveServer) }
        // libjack opens its metadata database now: it must not land on a closed stdout or stderr.
        _ = cposix_ensure_standard_descriptors()
        JackClient.silenceLibraryMessages()
        var status = jack_status_t(rawValue: 0)
        let options = startServerIfNeeded ? JackNullOption : JackNoStartServer
        // JackUseExactName: a renamed client (jackhost-01) would break every saved patch.
        let flags = jack_options_t(rawValue: options.rawValue | JackUseExactName.rawValue)
        let opened: OpaquePointer? = name.withCString { cName in
            if let server {
                return server.withCString { cServer in cjack_client_open(cName, flags, &status, cServer) }
            }
            return cjack_client_open(cName, flags, &status, nil)
        }
        guard let opened else {
            throw JackError.fromOpenStatus(status.rawValue, clientName: name, server: effectiveServer) {
                JackClient.isClientNameTaken(name, server: server)
            }
        }
        self.handle = opened
        self.serverName = server
        self.name = String(cString: jack_get_client_name(opened))
        // libjack's clock is set up now; consumers, which link no libjack, read it through this.
        CycleClock.install(jack_get_time)
    }

    /// The server libjack uses when none is named: `$JACK_DEFAULT_SERVER`, or nil for "default".
    public static var defaultServerFromEnvironment: String? {
        guard let value = getenv("JACK_DEFAULT_SERVER") else { return nil }
        let name = String(cString: value)
        return name.isEmpty ? nil : name
    }

    /// Whether a client called `name` exists on the server, asked through a short-lived probe
    /// client with a name of its own. Used only to explain a refused open.
    ///
    /// The corresponding C function is `jack_get_uuid_for_client_name`.
    private static func isClientNameTaken(_ name: String, server: String?) -> Bool {
        var status = jack_status_t(rawValue: 0)
        let flags = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
        let probeName = "jackhost-probe-\(getpid())"
        let probe: OpaquePointer? = probeName.withCString { cName in
            withOptionalCString(server) { cServer in cjack_client_open(cName, flags, &status, cServer) }
        }
        guard let probe else { return false }
        defer { jack_client_close(probe) }
        guard let uuid = jack_get_uuid_for_client_name(probe, name) else { return false }
        jack_free(uuid)
        return true
    }

    deinit { close() }

    /// Closes the client; safe to call more than once. The corresponding C function is `jack_client_close`.
    ///
    /// - Parameter serverAlive: Pass false after the server went away: the client then skips
    ///   the clean-up requests below, which a dead server cannot answer.
    ///
    /// Why ports go first: closing a client makes jack2 (1.9.21) remove every port and notify
    /// every client of each removed metadata property, the closing client included, whose
    /// notification thread has already stopped. With two properties on each of 48 or more
    /// ports that socket fills, the server blocks writing to it, and `jack_client_close`
    /// waits for the server forever. Removing the properties and ports while the client can
    /// still read its notifications avoids the deadlock.
    public func close(serverAlive: Bool = true) {
        let owner: AnyObject? = lock.withLock {
            guard !isClosed else { return nil }
            isClosed = true
            if serverAlive {
                for port in registeredPorts {
                    jack_remove_properties(handle, jack_port_uuid(port.handle))
                    jack_port_unregister(handle, port.handle)
                }
            }
            registeredPorts.removeAll()
            jack_client_close(handle)
            // No callback runs after jack_client_close returns: only now may the context go.
            defer { callbackOwner = nil }
            return callbackOwner
        }
        withExtendedLifetime(owner) {}
    }

    /// Whether ``close(serverAlive:)`` has run.
    public var closed: Bool { lock.withLock { isClosed } }

    /// Runs `body` with the open handle under the lock, or returns `closedValue` once closed.
    private func ifOpen<R>(_ closedValue: R, _ body: (OpaquePointer) -> R) -> R {
        lock.withLock { isClosed ? closedValue : body(handle) }
    }

    /// Installs the engine's callbacks with the engine as their context, and keeps the engine
    /// alive until the client is closed. Call before ``activate()``.
    func install(_ engine: CaptureEngine) {
        lock.withLock { callbackOwner = engine }
        engine.installCallbacks(on: self)
    }

    /// Installs a process callback whose context is `owner`, and keeps `owner` alive until
    /// the client is closed (for other process handlers in the package, such as test signals).
    package func installProcessCallback(_ callback: JackProcessCallback, owner: AnyObject) {
        lock.withLock { callbackOwner = owner }
        jack_set_process_callback(handle, callback, Unmanaged.passUnretained(owner).toOpaque())
    }

    // MARK: Server facts

    /// The server's sample rate in Hz. The corresponding C function is `jack_get_sample_rate`.
    public var sampleRate: Int { ifOpen(0) { Int(jack_get_sample_rate($0)) } }

    /// The buffer size: frames per process cycle. The corresponding C function is `jack_get_buffer_size`.
    public var bufferSize: Int { ifOpen(0) { Int(jack_get_buffer_size($0)) } }

    /// The DSP load the server reports, in percent. The corresponding C function is `jack_cpu_load`.
    public var cpuLoad: Float { ifOpen(0) { jack_cpu_load($0) } }

    /// Whether the server runs with real-time scheduling. The corresponding C function is `jack_is_realtime`.
    public var isRealtime: Bool { ifOpen(false) { jack_is_realtime($0) != 0 } }

    // MARK: Port queries

    /// Port names matching a regular expression, type and flags, in the server's order.
    ///
    /// - Throws: ``JackError/invalidPattern(pattern:reason:)`` for a pattern ``PortPattern``
    ///   refuses (malformed, or able to stall libjack's matcher), before libjack sees it.
    ///
    /// The corresponding C function is `jack_get_ports`.
    public func portNames(
        matching pattern: String?, type: String? = JackClient.audioPortType,
        flags: JackPortFlags = JackPortFlags(rawValue: 0)
    ) throws(JackError) -> [String] {
        if let pattern { try PortPattern.check(pattern) }
        return matchingPortNames(pattern, type: type, flags: flags)
    }

    /// Every port of a type and flags, in the server's order. The corresponding C function is `jack_get_ports`.
    public func portNames(type: String? = JackClient.audioPortType, flags: JackPortFlags = JackPortFlags(rawValue: 0)) -> [String] {
        matchingPortNames(nil, type: type, flags: flags)
    }

    private func matchingPortNames(_ pattern: String?, type: String?, flags: JackPortFlags) -> [String] {
        ifOpen([]) { handle in
            Self.copyNames(
                withOptionalCString(pattern) { cPattern in
                    withOptionalCString(type) { cType in jack_get_ports(handle, cPattern, cType, UInt(flags.rawValue)) }
                })
        }
    }

    /// Copies and frees a NULL-terminated list of names from libjack. Call it under the lock, with
    /// the client open: jack2's entries point into the server's shared graph, which
    /// `jack_client_close` unmaps, so a copy made after the lock is released can read unmapped
    /// memory (a query racing ``close(serverAlive:)`` crashed that way on a loaded machine).
    private static func copyNames(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let list else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var index = 0
        while let entry = list[index] {
            names.append(String(cString: entry))
            index += 1
        }
        return names
    }

    /// The physical audio capture ports (`system:capture_N` on jackd), in order.
    public func physicalCapturePorts() -> [String] {
        portNames(flags: JackPortFlags(rawValue: JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue))
    }

    /// Audio output ports (sources) whose names match a JACK regular expression; every one when
    /// `pattern` is nil.
    public func audioOutputPortNames(matching pattern: String? = nil) throws(JackError) -> [String] {
        try portNames(matching: pattern, flags: JackPortIsOutput)
    }

    /// Audio input ports (destinations) whose names match a JACK regular expression; every one when
    /// `pattern` is nil.
    public func audioInputPortNames(matching pattern: String? = nil) throws(JackError) -> [String] {
        try portNames(matching: pattern, flags: JackPortIsInput)
    }

    /// The ports connected to the named port. The corresponding C function is `jack_port_get_all_connections`.
    public func connections(ofPortNamed name: String) -> [String] {
        ifOpen([]) { handle in
            guard let port = jack_port_by_name(handle, name) else { return [] }
            return Self.copyNames(jack_port_get_all_connections(handle, port))
        }
    }

    /// Whether a port with this full name exists. The corresponding C function is `jack_port_by_name`.
    public func portExists(_ name: String) -> Bool { ifOpen(false) { jack_port_by_name($0, name) != nil } }

    /// The capture latency range of a port, in frames. The corresponding C function is `jack_port_get_latency_range`.
    public func captureLatencyRange(ofPortNamed name: String) -> ClosedRange<Int>? {
        let found: jack_latency_range_t? = ifOpen(nil) { handle in
            guard let port = jack_port_by_name(handle, name) else { return nil }
            var range = jack_latency_range_t(min: 0, max: 0)
            jack_port_get_latency_range(port, JackCaptureLatency, &range)
            return range
        }
        guard let range = found else { return nil }
        return Int(range.min)...Int(max(range.min, range.max))
    }

    // MARK: Ports

    /// Registers an audio input port (short name, without the client prefix).
    ///
    /// The corresponding C function is `jack_port_register`.
    public func registerAudioInput(named shortName: String) throws(JackError) -> JackPort {
        try registerAudioPort(named: shortName, flags: JackPortIsInput)
    }

    /// Registers an audio output port (short name, without the client prefix).
    ///
    /// - Parameters:
    ///   - shortName: The port's name without the client prefix, e.g. `out_1`.
    ///   - physical: Mark it physical and terminal, as bridges to hardware
    ///     (alsa_in, netjack) do; capture hosts then count it as a capture channel.
    public func registerAudioOutput(named shortName: String, physical: Bool = false) throws(JackError) -> JackPort {
        let flags =
            physical
            ? JackPortIsOutput.rawValue | JackPortIsPhysical.rawValue | JackPortIsTerminal.rawValue
            : JackPortIsOutput.rawValue
        return try registerAudioPort(named: shortName, flags: JackPortFlags(rawValue: flags))
    }

    /// Registers a MIDI input port (short name, without the client prefix), e.g. `control`.
    public func registerMIDIInput(named shortName: String) throws(JackError) -> JackPort {
        try registerAudioPort(named: shortName, flags: JackPortIsInput, type: JackClient.midiPortType)
    }

    private func registerAudioPort(
        named shortName: String, flags: JackPortFlags, type: String = JackClient.audioPortType
    ) throws(JackError) -> JackPort {
        let port: OpaquePointer? = ifOpen(nil) { handle in
            guard let port = jack_port_register(handle, shortName, type, UInt(flags.rawValue), 0) else { return nil }
            registeredPorts.append(JackPort(handle: port))
            return port
        }
        guard let port else { throw JackError.portRegistrationFailed(port: "\(name):\(shortName)") }
        return JackPort(handle: port)
    }

    /// Unregisters a port. The corresponding C function is `jack_port_unregister`.
    public func unregister(_ port: JackPort) {
        ifOpen(()) { handle in
            registeredPorts.removeAll { $0 == port }
            jack_remove_properties(handle, jack_port_uuid(port.handle))
            jack_port_unregister(handle, port.handle)
        }
    }

    /// The full name ("client:port") of one of this client's ports. The corresponding C function is `jack_port_name`.
    public func fullName(of port: JackPort) -> String { ifOpen("") { _ in String(cString: jack_port_name(port.handle)) } }

    /// Sets a metadata property on a port, as patchbays (qjackctl, Carla) read it.
    ///
    /// - Parameters:
    ///   - port: One of this client's ports.
    ///   - key: A property URI such as ``JackClient/prettyNameKey``.
    ///   - value: The value, as UTF-8 text.
    ///   - type: The value's MIME or XML Schema type; nil means a plain UTF-8 string.
    /// - Returns: false when the server refused (jackd built without metadata support).
    ///
    /// The corresponding C function is `jack_set_property`.
    @discardableResult
    public func setProperty(on port: JackPort, key: String, value: String, type: String? = nil) -> Bool {
        let uuid = jack_port_uuid(port.handle)
        return ifOpen(false) { handle in withOptionalCString(type) { cType in jack_set_property(handle, uuid, key, value, cType) } == 0 }
    }

    /// Reads a metadata property of a named port; nil when unset. The corresponding C function is `jack_get_property`.
    public func property(ofPortNamed name: String, key: String) -> String? {
        guard let port = ifOpen(nil, { jack_port_by_name($0, name) }) else { return nil }
        return Self.property(ofPortHandle: port, key: key)
    }

    /// Reads a metadata property of one of this client's ports; nil when unset or closed.
    public func property(of port: JackPort, key: String) -> String? {
        ifOpen(nil) { _ in Self.property(ofPortHandle: port.handle, key: key) }
    }

    private static func property(ofPortHandle port: OpaquePointer, key: String) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        var type: UnsafeMutablePointer<CChar>?
        guard jack_get_property(jack_port_uuid(port), key, &value, &type) == 0, let value else { return nil }
        defer {
            jack_free(value)
            if let type { jack_free(type) }
        }
        return String(cString: value)
    }

    /// The metadata key for a human-readable port name.
    public static let prettyNameKey = "http://jackaudio.org/metadata/pretty-name"

    /// Whether port metadata read through this libjack belongs to the server it was read from.
    ///
    /// jack2 keeps one metadata store for every server of a user, keyed by port UUIDs that repeat
    /// from one server to the next: a property read there can be another server's stale entry,
    /// and closing a client on one server can erase a property of a port on another. PipeWire's
    /// libjack (run through `pw-jack`) keeps metadata in its own server. So this is true only when
    /// the libjack in use is PipeWire's, found by the path of the library `jack_client_open`
    /// comes from. The corresponding C function is `dladdr`.
    public static let metadataIsPerServer: Bool = {
        guard let file = cposix_library_path_of("jack_client_open") else { return false }
        return String(cString: file).contains("pipewire")
    }()
    /// The metadata key for a port's position among its siblings.
    public static let orderKey = "http://jackaudio.org/metadata/order"
    /// The type URI JACK's metadata spec gives integer values.
    public static let integerType = "http://www.w3.org/2001/XMLSchema#int"

    // MARK: Life cycle

    /// Activates the client: the process callback starts running. The corresponding C function is `jack_activate`.
    public func activate() throws(JackError) {
        let code = ifOpen(-1) { jack_activate($0) }
        if code != 0 { throw JackError.activationFailed(code: code) }
    }

    /// Deactivates the client: the process callback stops. The corresponding C function is `jack_deactivate`.
    public func deactivate() {
        ifOpen(()) { _ = jack_deactivate($0) }
    }

    /// Connects two ports by full name. Only valid after ``activate()``.
    ///
    /// An already existing connection counts as success. The corresponding C function is `jack_connect`.
    public func connect(_ source: String, to destination: String) throws(JackError) {
        let code = ifOpen(-1) { jack_connect($0, source, destination) }
        if code != 0 && code != EEXIST {
            throw JackError.connectionFailed(source: source, destination: destination, code: code)
        }
    }

    /// Disconnects two ports by full name. The corresponding C function is `jack_disconnect`.
    public func disconnect(_ source: String, from destination: String) {
        ifOpen(()) { _ = jack_disconnect($0, source, destination) }
    }

    // MARK: Callbacks (set before activate)

    /// Installs the process callback. The corresponding C function is `jack_set_process_callback`.
    func setProcessCallback(_ callback: JackProcessCallback, context: UnsafeMutableRawPointer) {
        jack_set_process_callback(handle, callback, context)
    }

    /// Installs the xrun callback. The corresponding C function is `jack_set_xrun_callback`.
    func setXrunCallback(_ callback: JackXRunCallback, context: UnsafeMutableRawPointer) {
        jack_set_xrun_callback(handle, callback, context)
    }

    /// Installs the buffer-size callback. The corresponding C function is `jack_set_buffer_size_callback`.
    func setBufferSizeCallback(_ callback: JackBufferSizeCallback, context: UnsafeMutableRawPointer) {
        jack_set_buffer_size_callback(handle, callback, context)
    }

    /// Installs the sample-rate callback. The corresponding C function is `jack_set_sample_rate_callback`.
    func setSampleRateCallback(_ callback: JackSampleRateCallback, context: UnsafeMutableRawPointer) {
        jack_set_sample_rate_callback(handle, callback, context)
    }

    /// Installs the freewheel callback. The corresponding C function is `jack_set_freewheel_callback`.
    func setFreewheelCallback(_ callback: JackFreewheelCallback, context: UnsafeMutableRawPointer) {
        jack_set_freewheel_callback(handle, callback, context)
    }

    /// Installs the port-connect callback. The corresponding C function is `jack_set_port_connect_callback`.
    func setPortConnectCallback(_ callback: JackPortConnectCallback, context: UnsafeMutableRawPointer) {
        jack_set_port_connect_callback(handle, callback, context)
    }

    /// Installs the port-registration callback. The corresponding C function is `jack_set_port_registration_callback`.
    func setPortRegistrationCallback(_ callback: JackPortRegistrationCallback, context: UnsafeMutableRawPointer) {
        jack_set_port_registration_callback(handle, callback, context)
    }

    /// Installs the shutdown callback. It runs on a libjack thread after the server is gone:
    /// it may only signal. The corresponding C function is `jack_on_info_shutdown`.
    func setShutdownCallback(_ callback: JackInfoShutdownCallback, context: UnsafeMutableRawPointer) {
        jack_on_info_shutdown(handle, callback, context)
    }

    // MARK: Real-time safe calls (process callback only)

    /// **Real-time safe.** The buffer of a port for this cycle. The corresponding C function is `jack_port_get_buffer`.
    @inline(__always)
    package static func buffer(of port: OpaquePointer, frames: UInt32) -> UnsafeMutablePointer<Float> {
        jack_port_get_buffer(port, frames).assumingMemoryBound(to: Float.self)
    }

    /// **Real-time safe.** Hands each MIDI event of a MIDI port's buffer for this cycle to `body`:
    /// its frame offset in the cycle, its bytes (valid during the call only) and their count. The
    /// corresponding C functions are `jack_port_get_buffer`, `jack_midi_get_event_count` and
    /// `jack_midi_event_get`. A plain counter and a raw pointer, not a range and a buffer type: a
    /// debug build instantiates generic metadata on first use, under a lock (RealtimeSanitizer).
    @inline(__always)
    static func forEachMIDIEvent(of port: OpaquePointer, frames: UInt32, _ body: (UInt32, UnsafePointer<UInt8>, Int) -> Void) {
        guard let buffer = jack_port_get_buffer(port, frames) else { return }
        let count = jack_midi_get_event_count(buffer)
        var event = jack_midi_event_t()
        var index: UInt32 = 0
        while index < count {
            if jack_midi_event_get(&event, buffer, index) == 0, let bytes = event.buffer {
                body(event.time, UnsafePointer(bytes), event.size)
            }
            index += 1
        }
    }

    /// When frame `frameTime` starts on JACK's microsecond clock, as the server's clock model
    /// says (`jack_frames_to_time`); 0 when the client is closed.
    public func microseconds(atFrameTime frameTime: UInt32) -> UInt64 {
        ifOpen(0) { jack_frames_to_time($0, frameTime) }
    }

    /// JACK's microsecond clock now (`jack_get_time`), the clock of ``AudioTimestamp/microseconds``.
    /// Shared by every process on the machine, but which system clock it is depends on the libjack:
    /// CLOCK_MONOTONIC_RAW with Debian's jack2 1.9.21, CLOCK_MONOTONIC with pipewire-jack. Code
    /// without libjack reads it as `CycleClock` (JackHostSupport), installed when a client opens.
    public static var microsecondClock: UInt64 { jack_get_time() }

    /// **Real-time safe.** Whether JACK transport is rolling: `jack_transport_query` reads the
    /// server's shared state without locking, and is documented as callable from the process callback.
    @inline(__always)
    static func transportRolling(of handle: OpaquePointer) -> Bool {
        cjack_transport_rolling(handle) != 0
    }

    /// **Real-time safe.** The frame time and microseconds at the start of this cycle; when
    /// libjack cannot tell, the cycle's frame time (``lastFrameTime(of:)``) and 0 microseconds.
    @inline(__always)
    static func cycleTimes(of handle: OpaquePointer) -> (frames: UInt32, microseconds: UInt64) {
        if let start = cycleStart(of: handle) { return start }
        return (lastFrameTime(of: handle), 0)
    }

    /// **Real-time safe.** The frame time and microseconds at the start of this cycle, as the
    /// server's clock has them now; nil when libjack cannot tell. No allocation, no lock.
    ///
    /// The corresponding C function is `jack_get_cycle_times`.
    @inline(__always)
    package static func cycleStart(of handle: OpaquePointer) -> (frames: UInt32, microseconds: UInt64)? {
        var frames: jack_nframes_t = 0
        var current: jack_time_t = 0
        var next: jack_time_t = 0
        var period: Float = 0
        guard jack_get_cycle_times(handle, &frames, &current, &next, &period) == 0 else { return nil }
        return (frames, current)
    }

    /// **Real-time safe.** The frame time at the start of this cycle.
    ///
    /// The corresponding C function is `jack_last_frame_time`.
    @inline(__always)
    package static func lastFrameTime(of handle: OpaquePointer) -> UInt32 { jack_last_frame_time(handle) }

    /// Whether this binary was linked with LLVM's RealtimeSanitizer runtime, which then
    /// checks every process callback (see docs/REALTIME.md).
    public static var isRealtimeSanitizerLinked: Bool { cjack_rt_sanitizer_linked() != 0 }

    // MARK: Library messages

    /// libjack prints to stderr on every failed open ("Cannot connect to server socket ...").
    /// JackHost reports its own one-line errors instead, so the library's are dropped unless
    /// `JACKHOST_DEBUG_LIBJACK` is set.
    static func silenceLibraryMessages() {
        guard getenv("JACKHOST_DEBUG_LIBJACK") == nil else { return }
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
    }
}

/// A port owned by a ``JackClient``.
public struct JackPort: @unchecked Sendable, Hashable {
    // @unchecked: an opaque handle that libjack owns; every use goes through the owning client.
    /// The raw `jack_port_t *`.
    package let handle: OpaquePointer
}

/// Calls `body` with a C string for `string`, or with nil.
@inline(__always)
func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    if let string { return string.withCString { body($0) } }
    return body(nil)
}
