import JackHost
import JackHostConsumers
import JackHostPlugins

/// The host's own keys in a `--plugin PATH:key=value,...` specification: `block-frames=N`,
/// `sample-rate=HZ` and `channels=LIST` shape the blocks a plugin receives (``BlockShape``).
/// A plugin that declares an option of the same name keeps it: the key is then the plugin's.
enum PluginShaping {
    static let keys = ["block-frames", "sample-rate", "channels"]

    /// Splits the host's keys off `specification`; `declared` are the plugin's own option names
    /// (the host's keys the plugin declares stay with the plugin).
    static func split(
        _ specification: PluginSpecification, declared: [String]
    ) throws(UsageError) -> (specification: PluginSpecification, shape: BlockShape) {
        var shape = BlockShape()
        var remaining: [(key: String, value: String)] = []
        let shown = ValueParsing.shown(specification.path)
        for (key, value) in specification.options {
            guard keys.contains(key), !declared.contains(key) else {
                remaining.append((key, value))
                continue
            }
            switch key {
            case "block-frames":
                guard let frames = Int(value), (1...BlockShape.maximumFrames).contains(frames) else {
                    throw UsageError(
                        "plugin \(shown): block-frames=\(ValueParsing.shown(value)) is not a whole number from 1 to \(BlockShape.maximumFrames)")
                }
                shape.frames = frames
            case "sample-rate":
                guard let rate = Double(value), rate.isFinite, BlockShape.sampleRates.contains(rate) else {
                    throw UsageError("plugin \(shown): sample-rate=\(ValueParsing.shown(value)) is not a rate from 1000 to 768000 Hz")
                }
                shape.sampleRate = rate
            default:
                guard let channels = BlockShape.channels(parsing: value) else {
                    throw UsageError(
                        "plugin \(shown): channels=\(ValueParsing.shown(value)) is not a channel list such as 1-2 or 1,3,5 (1-based, no repeats)")
                }
                shape.channels = channels
            }
        }
        return (PluginSpecification(path: specification.path, options: remaining), shape)
    }

    /// Adds `plugin` to `host` shaped as the user asked, else as the plugin asked.
    static func add(_ plugin: LoadedPlugin, to host: CaptureHost, userShape: BlockShape) throws(UsageError) {
        var shape = userShape
        if shape.frames == nil { shape.frames = plugin.preferredBlockFrames }
        if shape.sampleRate == nil { shape.sampleRate = plugin.preferredSampleRate }
        switch plugin.makeConsumer() {
        case .realtime(let consumer):
            guard shape.isRealtimeCapable else {
                throw UsageError(
                    "plugin \"\(plugin.name)\" runs in the real-time thread, where blocks cannot be rebuffered or resampled; drop block-frames and sample-rate (channels works)"
                )
            }
            if let channels = shape.channels {
                host.add(realtime: ChannelSubsetConsumer(consumer, channels: channels))
            } else {
                host.add(realtime: consumer)
            }
        case .deferred(let consumer):
            if shape.isIdentity {
                host.add(deferred: consumer)
            } else {
                host.add(deferred: ShapedDeferredConsumer(consumer, shape: shape))
            }
        }
    }
}
