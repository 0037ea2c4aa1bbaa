import CJackHostPlugin
import Glibc
import JackHostTypes
import Synchronization

/// Builds (once) and returns the C descriptor for a real-time plugin type. Call it from the
/// plugin's one exported function:
///
/// ```swift
/// @c(jackhost_plugin_descriptor)
/// public func jackhostPluginDescriptor() -> UnsafeRawPointer { exportPlugin(PeakFinder.self) }
/// ```
public func exportPlugin<Plugin: RealtimePlugin>(_ plugin: Plugin.Type) -> UnsafeRawPointer {
    ExportedPlugin.descriptor(for: plugin, mode: JACKHOST_PLUGIN_MODE_REALTIME) { .realtime(try Plugin(options: $0, host: $1)) }
}

/// Builds (once) and returns the C descriptor for a deferred plugin type; see the real-time overload.
public func exportPlugin<Plugin: DeferredPlugin>(_ plugin: Plugin.Type) -> UnsafeRawPointer {
    ExportedPlugin.descriptor(for: plugin, mode: JACKHOST_PLUGIN_MODE_DEFERRED) { .deferred(try Plugin(options: $0, host: $1)) }
}

/// Descriptors already built, by plugin type, so the entry point returns the same pointer
/// every time (the ABI requires it to stay valid and unchanged). Keyed by type rather than
/// a single slot, so two plugin types in one image cannot be confused.
private let exportedDescriptors = Mutex<[ObjectIdentifier: UInt]>([:])

/// What the descriptor's `plugin_data` points at: how to make instances of one plugin type.
final class ExportedPlugin {
    let options: [PluginOption]
    let results: [PluginResult]
    let blockFrames: Int?
    let sampleRate: Double?
    let make: (PluginOptions, PluginHost) throws -> ExportedInstance.Delivery

    private init(
        options: [PluginOption], results: [PluginResult], blockFrames: Int?, sampleRate: Double?,
        make: @escaping (PluginOptions, PluginHost) throws -> ExportedInstance.Delivery
    ) {
        self.options = options
        self.results = results
        self.blockFrames = blockFrames
        self.sampleRate = sampleRate
        self.make = make
    }

    /// The descriptor for `type`, built on first use. Descriptor memory is never freed: it
    /// must outlive every caller, and the host never unloads a plugin.
    static func descriptor<Plugin: JackHostPlugin>(
        for type: Plugin.Type, mode: UInt32,
        make: @escaping (PluginOptions, PluginHost) throws -> ExportedInstance.Delivery
    )
        -> UnsafeRawPointer
    {
        let address = exportedDescriptors.withLock { built in
            if let address = built[ObjectIdentifier(type)] { return address }
            let exported = ExportedPlugin(
                options: Plugin.options, results: Plugin.results, blockFrames: Plugin.blockFrames, sampleRate: Plugin.sampleRate, make: make)
            let descriptor = buildDescriptor(name: Plugin.name, version: Plugin.version, mode: mode, exported: exported)
            built[ObjectIdentifier(type)] = UInt(bitPattern: descriptor)
            return UInt(bitPattern: descriptor)
        }
        return UnsafeRawPointer(bitPattern: address)!
    }

    private static func buildDescriptor(
        name: String, version: String, mode: UInt32,
        exported: ExportedPlugin
    ) -> UnsafeMutablePointer<jackhost_plugin_descriptor_t> {
        let options = exported.options
        let table = UnsafeMutablePointer<jackhost_plugin_option_t>.allocate(capacity: max(1, options.count))
        for (index, option) in options.enumerated() {
            (table + index).initialize(
                to: jackhost_plugin_option_t(
                    name: UnsafePointer(strdup(option.name)), type: option.kind.abiValue, reserved: 0,
                    default_value: option.defaultValue.map { UnsafePointer(strdup($0)) },
                    help: UnsafePointer(strdup(option.help))))
        }
        let results = exported.results
        let resultTable = UnsafeMutablePointer<jackhost_plugin_result_t>.allocate(capacity: max(1, results.count))
        for (index, result) in results.enumerated() {
            (resultTable + index).initialize(
                to: jackhost_plugin_result_t(
                    name: UnsafePointer(strdup(result.name)), unit: UnsafePointer(strdup(result.unit)),
                    help: UnsafePointer(strdup(result.help))))
        }
        let descriptor = UnsafeMutablePointer<jackhost_plugin_descriptor_t>.allocate(capacity: 1)
        descriptor.initialize(
            to: jackhost_plugin_descriptor_t(
                abi_version: JACKHOST_PLUGIN_ABI_VERSION,
                struct_size: UInt32(MemoryLayout<jackhost_plugin_descriptor_t>.size),
                name: UnsafePointer(strdup(name)),
                version: UnsafePointer(strdup(version)),
                mode: mode,
                option_count: UInt32(options.count),
                options: options.isEmpty ? nil : UnsafePointer(table),
                plugin_data: Unmanaged.passRetained(exported).toOpaque(),
                create: pluginCreate,
                prepare: pluginPrepare,
                process: pluginProcess,
                finish: pluginFinish,
                destroy: pluginDestroy,
                result_count: UInt32(results.count), reserved_v2: 0, results: results.isEmpty ? nil : UnsafePointer(resultTable),
                create2: pluginCreate2, handle_event: pluginHandleEvent,
                block_frames: UInt32(exported.blockFrames ?? 0), reserved_v2b: 0, sample_rate: exported.sampleRate ?? 0))
        return descriptor
    }
}

/// One instance behind the C `void *instance`: the Swift consumer and its lifecycle state.
final class ExportedInstance {
    /// The consumer, by the mode it was exported in.
    enum Delivery {
        case realtime(any RealtimeAudioConsumer)
        case deferred(any DeferredAudioConsumer)
    }

    let delivery: Delivery
    /// Whether `prepare` accepted a format and `finish` has not run since.
    private(set) var prepared = false

    init(delivery: Delivery) { self.delivery = delivery }

    var consumer: any AudioConsumer {
        switch delivery {
        case .realtime(let consumer): return consumer
        case .deferred(let consumer): return consumer
        }
    }

    func prepare(format: StreamFormat) throws {
        if prepared { finish() }
        try consumer.prepare(format: format)
        prepared = true
        warmUp()
    }

    func finish() {
        guard prepared else { return }
        prepared = false
        consumer.finish()
    }

    /// **Real-time thread in real-time mode.** Turns the C block into an ``AudioBlock`` (no
    /// copy, no allocation) and hands it to the consumer.
    @inline(__always)
    func process(_ block: UnsafePointer<jackhost_plugin_block_t>) {
        guard prepared, let audio = Self.audioBlock(block) else { return }
        switch delivery {
        case .realtime(let consumer): consumer.process(audio)
        case .deferred(let consumer): consumer.consume(audio)
        }
    }

    /// The C event as a session event, or nil for a kind this SDK does not know (the ABI lets
    /// hosts add kinds). **Real-time safe.**
    static func sessionEvent(_ event: UnsafePointer<jackhost_plugin_event_t>) -> AudioSessionEvent? {
        let fields = event.pointee
        let value = Int(truncatingIfNeeded: fields.value)
        switch fields.kind {
        case JACKHOST_PLUGIN_EVENT_XRUN: return .xrun(total: value)
        case JACKHOST_PLUGIN_EVENT_BUFFER_SIZE: return .bufferSizeChanged(frames: value)
        case JACKHOST_PLUGIN_EVENT_SAMPLE_RATE: return .sampleRateChanged(fields.sample_rate)
        case JACKHOST_PLUGIN_EVENT_SERVER_LOST: return .serverLost
        case JACKHOST_PLUGIN_EVENT_SERVER_RESTORED: return .serverRestored
        case JACKHOST_PLUGIN_EVENT_ROUTE_CHANGED: return .routeChanged(channelCount: value)
        case JACKHOST_PLUGIN_EVENT_FREEWHEEL: return .freewheelChanged(value != 0)
        default: return nil
        }
    }

    /// The C block as a JackHost block over the same memory. **Real-time safe.**
    @inline(__always)
    static func audioBlock(_ block: UnsafePointer<jackhost_plugin_block_t>) -> AudioBlock? {
        let fields = block.pointee
        guard let channels = fields.channels else { return nil }
        // Optional and non-optional pointers share a layout: reinterpret, do not copy.
        let pointers = UnsafeRawPointer(channels).assumingMemoryBound(to: UnsafePointer<Float>.self)
        let view = AudioBufferListView(
            channels: pointers, channelCount: Int(fields.channel_count),
            frameCount: Int(fields.frame_count))
        let timestamp = AudioTimestamp(
            frameTime: fields.frame_time, microseconds: fields.microseconds,
            sequence: fields.sequence, xrunSincePreviousCycle: fields.xrun != 0)
        return AudioBlock(
            buffers: view, timestamp: timestamp,
            droppedFramesBefore: Int(truncatingIfNeeded: fields.dropped_frames_before))
    }

    /// Converts a dummy block once, off the real-time thread, so the type metadata the
    /// conversion needs exists before the first cycle (instantiating it takes a runtime lock).
    private func warmUp() {
        var sample: Float = 0
        withUnsafePointer(to: &sample) { samplePointer in
            var channel: UnsafePointer<Float>? = samplePointer
            withUnsafePointer(to: &channel) { channels in
                var block = jackhost_plugin_block_t()
                block.channels = channels
                block.channel_count = 1
                block.frame_count = 1
                _ = withUnsafePointer(to: &block) { Self.audioBlock($0) }
            }
        }
    }
}

// MARK: The C functions in every exported descriptor

/// `create`: checks options against the declarations, then runs the plugin's `init(options:host:)`
/// with a host that offers nothing (``PluginHost/none``); `create2` with no host and no status.
private func pluginCreate(
    _ descriptor: UnsafePointer<jackhost_plugin_descriptor_t>?,
    _ pairs: UnsafePointer<jackhost_plugin_key_value_t>?, _ pairCount: UInt32,
    _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> UnsafeMutableRawPointer? {
    pluginCreate2(descriptor, pairs, pairCount, nil, nil, errorBuffer, capacity)
}

/// `create2` (ABI 2): like `create`, with the host's services, and a status that tells the
/// user's mistake (an option value refused: ``PluginOptionError`` or ``PluginUsageError``)
/// from a failure.
private func pluginCreate2(
    _ descriptor: UnsafePointer<jackhost_plugin_descriptor_t>?,
    _ pairs: UnsafePointer<jackhost_plugin_key_value_t>?, _ pairCount: UInt32,
    _ host: UnsafePointer<jackhost_host_t>?, _ status: UnsafeMutablePointer<Int32>?,
    _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> UnsafeMutableRawPointer? {
    status?.pointee = JACKHOST_PLUGIN_FAILED
    guard let data = descriptor?.pointee.plugin_data else {
        writeError("the host passed no descriptor to create()", to: errorBuffer, capacity: capacity)
        return nil
    }
    let exported = Unmanaged<ExportedPlugin>.fromOpaque(data).takeUnretainedValue()
    var given: [String: String] = [:]
    for index in 0..<Int(pairCount) {
        guard let pair = pairs?[index], let key = pair.key, let value = pair.value else { continue }
        given[String(cString: key)] = String(cString: value)
    }
    do {
        let options = try PluginOptions(given, declaredBy: exported.options)
        let instance = ExportedInstance(delivery: try exported.make(options, PluginHost(host, results: exported.results)))
        status?.pointee = JACKHOST_PLUGIN_CREATED
        return Unmanaged.passRetained(instance).toOpaque()
    } catch {
        if error is PluginOptionError || error is PluginUsageError { status?.pointee = JACKHOST_PLUGIN_REFUSED_OPTION }
        writeError(String(describing: error), to: errorBuffer, capacity: capacity)
        return nil
    }
}

/// `handle_event` (ABI 2): the event as an ``AudioSessionEvent``, to the consumer's `handle(_:)`,
/// on the thread that calls `process` (**real-time in real-time mode**: no allocation).
private func pluginHandleEvent(_ instance: UnsafeMutableRawPointer?, _ event: UnsafePointer<jackhost_plugin_event_t>?) {
    guard let instance, let event, let sessionEvent = ExportedInstance.sessionEvent(event) else { return }
    Unmanaged<ExportedInstance>.fromOpaque(instance).takeUnretainedValue().consumer.handle(sessionEvent)
}

/// `prepare`: the plugin's `prepare(format:)`; a thrown error becomes the refusal's reason.
private func pluginPrepare(
    _ instance: UnsafeMutableRawPointer?, _ format: UnsafePointer<jackhost_plugin_format_t>?,
    _ errorBuffer: UnsafeMutablePointer<CChar>?, _ capacity: Int
) -> Int32 {
    guard let instance, let format else {
        writeError("the host passed no instance or format to prepare()", to: errorBuffer, capacity: capacity)
        return 1
    }
    let fields = format.pointee
    let streamFormat = StreamFormat(sampleRate: fields.sample_rate, channelCount: Int(fields.channel_count))
    do {
        try Unmanaged<ExportedInstance>.fromOpaque(instance).takeUnretainedValue().prepare(format: streamFormat)
        return 0
    } catch {
        writeError(String(describing: error), to: errorBuffer, capacity: capacity)
        return 1
    }
}

/// `process`: **real-time thread in real-time mode.** One indirect call, no allocation.
private func pluginProcess(_ instance: UnsafeMutableRawPointer?, _ block: UnsafePointer<jackhost_plugin_block_t>?) {
    guard let instance, let block else { return }
    Unmanaged<ExportedInstance>.fromOpaque(instance).takeUnretainedValue().process(block)
}

/// `finish`: the plugin's `finish()`, once per accepted `prepare`.
private func pluginFinish(_ instance: UnsafeMutableRawPointer?) {
    guard let instance else { return }
    Unmanaged<ExportedInstance>.fromOpaque(instance).takeUnretainedValue().finish()
}

/// `destroy`: releases the instance (finishing it first if the host did not).
private func pluginDestroy(_ instance: UnsafeMutableRawPointer?) {
    guard let instance else { return }
    let unmanaged = Unmanaged<ExportedInstance>.fromOpaque(instance)
    unmanaged.takeUnretainedValue().finish()
    unmanaged.release()
}

/// Copies a message into the host's error buffer: truncated at a character boundary, NUL-terminated.
private func writeError(_ message: String, to buffer: UnsafeMutablePointer<CChar>?, capacity: Int) {
    guard let buffer, capacity > 0 else { return }
    var bytes = Array(message.utf8.prefix(capacity - 1))
    if bytes.count < message.utf8.count {
        // Do not leave half a UTF-8 sequence: drop continuation bytes, then their lead byte.
        while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
        if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
    }
    for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
    buffer[bytes.count] = 0
}
