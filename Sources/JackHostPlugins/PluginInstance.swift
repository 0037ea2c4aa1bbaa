import CJackHostPlugin
import FoundationEssentials
import Glibc
import JackHost

/// One created plugin instance: owns the C instance pointer, keeps its library alive,
/// enforces the lifecycle the ABI promises, and destroys the instance when released.
///
/// The host may prepare and finish a consumer more than once (a reconnect with a new
/// format), and may call `finish` on a consumer whose `prepare` failed; this class turns
/// that into exactly what jackhost_plugin.h promises the plugin: `finish` only after an
/// accepted `prepare`, and never twice in a row.
final class PluginInstance {
    let library: PluginLibrary
    /// The plugin's instance pointer (from `create`).
    let handle: UnsafeMutableRawPointer
    /// `process`, copied out of the descriptor so the real-time path does one indirect call.
    let processFunction: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_block_t>?) -> Void
    /// The host's services for an ABI 2 plugin (logging, frame clock, results); nil for version 1.
    let services: PluginHostServices?
    /// Events waiting for the plugin's `handle_event`; nil when it takes none.
    let mailbox: PluginEventMailbox?
    /// `handle_event`, copied out of the descriptor.
    let eventFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_event_t>?) -> Void)?
    /// Whether the plugin accepted a format and has not been finished since.
    private var prepared = false

    /// Calls `create` with `options` (already resolved and checked).
    init(library: PluginLibrary, options: [(key: String, value: String)]) throws(PluginError) {
        self.library = library
        let descriptor = library.descriptor
        // C copies of the strings, alive until create returns (the ABI lets the plugin read them only during the call).
        let strings = options.flatMap { [strdup($0.key)!, strdup($0.value)!] }
        defer { strings.forEach { free($0) } }
        var pairs = stride(from: 0, to: strings.count, by: 2).map {
            jackhost_plugin_key_value_t(key: strings[$0], value: strings[$0 + 1])
        }
        var error = [CChar](repeating: 0, count: Int(JACKHOST_PLUGIN_ERROR_CAPACITY))
        let services = library.abiVersion >= 2 ? PluginHostServices(pluginName: library.name, results: library.results) : nil
        var status = JACKHOST_PLUGIN_CREATED
        let created = pairs.withUnsafeMutableBufferPointer { buffer in
            error.withUnsafeMutableBufferPointer { errorBuffer in
                if let create2 = library.fields.create2, let services {
                    return create2(
                        descriptor, buffer.baseAddress, UInt32(buffer.count), services.host, &status,
                        errorBuffer.baseAddress, errorBuffer.count)
                }
                return library.fields.create(
                    descriptor, buffer.baseAddress, UInt32(buffer.count),
                    errorBuffer.baseAddress, errorBuffer.count)
            }
        }
        guard let created else {
            if status == JACKHOST_PLUGIN_REFUSED_OPTION {
                throw .optionRefused(path: library.path, plugin: library.name, reason: Self.message(from: error))
            }
            throw .createFailed(path: library.path, plugin: library.name, reason: Self.message(from: error))
        }
        handle = created
        self.services = services
        eventFunction = library.fields.handle_event
        mailbox = eventFunction == nil ? nil : PluginEventMailbox()
        processFunction = library.fields.process!
    }

    deinit {
        if prepared { library.fields.finish(handle) }
        library.fields.destroy(handle)
    }

    /// Hands the format to the plugin's `prepare`; throws ``PluginError/prepareRejected(path:plugin:format:reason:)``
    /// with the plugin's reason when it refuses.
    func prepare(format: StreamFormat) throws(PluginError) {
        // A prepare without finish in between: close the previous run first, as the ABI promises pairs.
        if prepared { finish() }
        var cFormat = jackhost_plugin_format_t(
            struct_size: UInt32(MemoryLayout<jackhost_plugin_format_t>.size),
            channel_count: UInt32(format.channelCount),
            sample_rate: format.sampleRate)
        var error = [CChar](repeating: 0, count: Int(JACKHOST_PLUGIN_ERROR_CAPACITY))
        let status = error.withUnsafeMutableBufferPointer { buffer in
            library.fields.prepare(handle, &cFormat, buffer.baseAddress, buffer.count)
        }
        guard status == 0 else {
            throw .prepareRejected(
                path: library.path, plugin: library.name, format: format.description,
                reason: Self.message(from: error))
        }
        prepared = true
    }

    /// Calls the plugin's `finish` if it is prepared, after any events still waiting.
    func finish() {
        guard prepared else { return }
        deliverEvents()
        prepared = false
        library.fields.finish(handle)
    }

    /// **Real-time safe.** Hands waiting events to the plugin; call on the thread that calls `process`.
    @inline(__always)
    func deliverEvents() {
        if let mailbox, let eventFunction { mailbox.deliver(to: eventFunction, instance: handle) }
    }

    /// The plugin's error text, or a note that it gave none.
    private static func message(from buffer: [CChar]) -> String {
        // Stop at the first NUL, or at the end if a plugin filled the buffer without one.
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "the plugin gave no reason" : text
    }
}
