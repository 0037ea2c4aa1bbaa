import CJackHostPlugin
import JackHost

// ============================================================================
// REAL-TIME CODE. `RealtimePluginConsumer.process` runs inside JACK's process
// callback. It builds the C block on the stack from the host's zero-copy view
// and makes one indirect call into the plugin: no allocation, no lock, no
// system call. Everything it reads was stored before activation.
// ============================================================================

/// Builds the C view of a block. **Real-time safe**: stack only, no allocation.
@inline(__always)
private func makeBlock(_ block: AudioBlock, structSize: UInt32) -> jackhost_plugin_block_t {
    // The host's channel pointers go to the plugin as they are: the same memory, reinterpreted
    // from non-optional to optional pointers, which have the same layout.
    let channels = UnsafeRawPointer(block.buffers.channelPointers.baseAddress)?
        .assumingMemoryBound(to: UnsafePointer<Float>?.self)
    let time = block.timestamp
    return jackhost_plugin_block_t(
        struct_size: structSize,
        channel_count: UInt32(truncatingIfNeeded: block.channelCount),
        channels: channels,
        frame_count: UInt32(truncatingIfNeeded: block.frameCount),
        frame_time: time.frameTime,
        microseconds: time.microseconds,
        sequence: time.sequence,
        xrun: time.xrunSincePreviousCycle ? 1 : 0,
        reserved: 0,
        dropped_frames_before: UInt64(truncatingIfNeeded: block.droppedFramesBefore))
}

/// A real-time plugin as a JackHost ``RealtimeAudioConsumer``: its `process` runs in JACK's
/// process callback with pointers straight into the port buffers.
final class RealtimePluginConsumer: RealtimeAudioConsumer {
    let instance: PluginInstance
    /// The plugin's name, for reports and error messages.
    let consumerName: String
    // Copied out of `instance` so `process` reads stored constants only (no lazy statics, no metadata lookups).
    private let processFunction: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_block_t>?) -> Void
    private let handle: UnsafeMutableRawPointer
    private let blockSize = UInt32(MemoryLayout<jackhost_plugin_block_t>.size)

    init(instance: PluginInstance) {
        self.instance = instance
        consumerName = instance.library.name
        processFunction = instance.processFunction
        handle = instance.handle
    }

    /// Hands the format to the plugin; throws with the plugin's reason if it refuses.
    func prepare(format: StreamFormat) throws {
        try instance.prepare(format: format)
        warmUp()
    }

    /// **Real-time thread.** One cycle: the C block on the stack, one call into the plugin.
    func process(_ block: AudioBlock) {
        var cBlock = makeBlock(block, structSize: blockSize)
        processFunction(handle, &cBlock)
    }

    /// Calls the plugin's `finish` after the last cycle.
    func finish() { instance.finish() }

    /// Runs the block conversion once outside the real-time thread, so any type metadata it
    /// needs is instantiated here (the first instantiation takes a runtime lock).
    private func warmUp() {
        var samples: Float = 0
        withUnsafePointer(to: &samples) { sample in
            var channel = sample
            withUnsafePointer(to: &channel) { channels in
                let view = AudioBufferListView(channels: channels, channelCount: 1, frameCount: 1)
                let block = AudioBlock(
                    buffers: view,
                    timestamp: AudioTimestamp(
                        frameTime: 0, microseconds: 0, sequence: 0,
                        xrunSincePreviousCycle: false))
                _ = makeBlock(block, structSize: blockSize)
            }
        }
    }
}

/// A deferred plugin as a JackHost ``DeferredAudioConsumer``: its `process` runs on the
/// plugin's own worker thread, fed through its own ring.
final class DeferredPluginConsumer: DeferredAudioConsumer {
    let instance: PluginInstance
    /// The plugin's name, for reports and error messages.
    let consumerName: String
    private let blockSize = UInt32(MemoryLayout<jackhost_plugin_block_t>.size)

    init(instance: PluginInstance) {
        self.instance = instance
        consumerName = instance.library.name
    }

    /// Hands the format to the plugin; throws with the plugin's reason if it refuses.
    func prepare(format: StreamFormat) throws { try instance.prepare(format: format) }

    /// Worker thread: passes the block, with its drop count, to the plugin.
    func consume(_ block: AudioBlock) {
        var cBlock = makeBlock(block, structSize: blockSize)
        instance.processFunction(instance.handle, &cBlock)
    }

    /// Calls the plugin's `finish` after the last block.
    func finish() { instance.finish() }
}
