import CJackHostPlugin
import JackHostPluginSDK

/// Feeds a consumer (a plugin type, or a loaded plugin's consumer) without JACK, under the
/// same contract the live host keeps:
///
/// 1. `prepare(format:)` once, with the canonical format; if it throws, nothing else runs;
/// 2. blocks of ``blockFrames`` frames (the last one may be shorter, as at the end of a
///    timed run), with sequence numbers counting cycles from 0, JACK-style frame times
///    (wrapping at 2^32) and microsecond times derived from them;
/// 3. optionally, simulated xruns (a block's `xrunSincePreviousCycle`) and, for deferred
///    consumers, simulated full-ring drops: a dropped cycle is not delivered, and the next
///    delivered block reports its frames in `droppedFramesBefore`;
/// 4. `finish()` once.
///
/// A real-time consumer's `process` calls are marked as real-time sections, so tests linked
/// with RealtimeSanitizer (docs/REALTIME.md) report any allocation or lock in them.
///
/// ```swift
/// let plugin = try FrequencyEstimator.make(options: ["output": path])
/// try PluginTestDriver(blockFrames: 256).run(plugin, channels: [PluginTestAudio.sine(frequency: 1000, frames: 48000)])
/// ```
public struct PluginTestDriver: Sendable {
    /// Frames per second in the format handed to `prepare`.
    public var sampleRate: Double
    /// Frames per block: JACK's period.
    public var blockFrames: Int
    /// The frame time of the first block.
    public var firstFrameTime: UInt32
    /// Indices of cycles the consumer loses to a full ring (deferred consumers only).
    public var droppedCycles: Set<Int>
    /// Indices of cycles whose block is flagged with an xrun.
    public var xrunCycles: Set<Int>

    /// Creates a driver; by default 48 kHz, 256-frame blocks, no drops, no xruns.
    public init(
        sampleRate: Double = 48000, blockFrames: Int = 256, firstFrameTime: UInt32 = 0,
        droppedCycles: Set<Int> = [], xrunCycles: Set<Int> = []
    ) {
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.firstFrameTime = firstFrameTime
        self.droppedCycles = droppedCycles
        self.xrunCycles = xrunCycles
    }

    /// What a run delivered.
    public struct Report: Sendable, Equatable {
        /// The format `prepare` received.
        public var format: StreamFormat
        /// Cycles run, delivered or dropped.
        public var cycles: Int
        /// Blocks handed to `process`/`consume`.
        public var deliveredBlocks: Int
        /// Frames in those blocks.
        public var deliveredFrames: Int
        /// Frames in dropped cycles.
        public var droppedFrames: Int

        /// Creates a report, for comparing against.
        public init(format: StreamFormat, cycles: Int, deliveredBlocks: Int, deliveredFrames: Int, droppedFrames: Int) {
            self.format = format
            self.cycles = cycles
            self.deliveredBlocks = deliveredBlocks
            self.deliveredFrames = deliveredFrames
            self.droppedFrames = droppedFrames
        }
    }

    /// Runs the whole contract over `channels` (`channels[c][i]` is frame i of channel c).
    @discardableResult
    public func run(_ consumer: any AudioConsumer, channels: [[Float]]) throws -> Report {
        guard let frames = channels.first?.count, !channels.isEmpty else { throw PluginTestDriverError.noChannels }
        guard channels.allSatisfy({ $0.count == frames }) else { throw PluginTestDriverError.unequalChannelLengths }
        guard blockFrames > 0 else { throw PluginTestDriverError.invalidBlockSize(blockFrames) }
        let isRealtime = consumer is any RealtimeAudioConsumer
        guard isRealtime || consumer is any DeferredAudioConsumer else { throw PluginTestDriverError.unknownConsumerKind }
        if isRealtime && !droppedCycles.isEmpty { throw PluginTestDriverError.dropsNeedDeferredConsumer }

        // One planar copy and one pointer table, allocated before the first block, as the host does.
        let channelCount = channels.count
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: max(1, channelCount * frames))
        let pointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        defer {
            samples.deallocate()
            pointers.deallocate()
        }
        for (index, channel) in channels.enumerated() { (samples + index * frames).initialize(from: channel, count: frames) }

        let format = StreamFormat(sampleRate: sampleRate, channelCount: channelCount)
        try consumer.prepare(format: format)
        var report = Report(format: format, cycles: 0, deliveredBlocks: 0, deliveredFrames: 0, droppedFrames: 0)
        var pendingDropped = 0
        var offset = 0
        while offset < frames {
            let cycle = report.cycles
            let count = min(blockFrames, frames - offset)
            defer {
                offset += count
                report.cycles += 1
            }
            if droppedCycles.contains(cycle) {
                pendingDropped += count
                report.droppedFrames += count
                continue
            }
            for channel in 0..<channelCount { pointers[channel] = UnsafePointer(samples + channel * frames + offset) }
            let view = AudioBufferListView(channels: pointers, channelCount: channelCount, frameCount: count)
            let timestamp = AudioTimestamp(
                frameTime: firstFrameTime &+ UInt32(truncatingIfNeeded: offset),
                microseconds: UInt64(Double(offset) * 1_000_000 / sampleRate),
                sequence: UInt64(cycle), xrunSincePreviousCycle: xrunCycles.contains(cycle))
            let block = AudioBlock(buffers: view, timestamp: timestamp, droppedFramesBefore: pendingDropped)
            pendingDropped = 0
            if let realtime = consumer as? any RealtimeAudioConsumer {
                jackhost_sdk_realtime_enter()
                realtime.process(block)
                jackhost_sdk_realtime_exit()
            } else if let deferred = consumer as? any DeferredAudioConsumer {
                deferred.consume(block)
            }
            report.deliveredBlocks += 1
            report.deliveredFrames += count
        }
        consumer.finish()
        return report
    }

    /// Runs the whole contract over an audio file, at the file's own sample rate.
    @discardableResult
    public func run(_ consumer: any AudioConsumer, audioFile path: String) throws -> Report {
        let file = try PluginTestAudio.read(path)
        var driver = self
        driver.sampleRate = file.sampleRate
        return try driver.run(consumer, channels: file.channels)
    }

    /// Whether this process has RealtimeSanitizer linked, so real-time sections are checked.
    public static var isRealtimeSanitizerLinked: Bool { jackhost_sdk_realtime_sanitizer_linked() != 0 }
}

/// Why a ``PluginTestDriver`` run could not start.
public enum PluginTestDriverError: Error, CustomStringConvertible, Equatable, Sendable {
    /// No channels were given.
    case noChannels
    /// The channels have different lengths.
    case unequalChannelLengths
    /// The block size is not positive.
    case invalidBlockSize(Int)
    /// The consumer is neither a real-time nor a deferred consumer.
    case unknownConsumerKind
    /// Drops were requested for a real-time consumer, which the live host never drops for.
    case dropsNeedDeferredConsumer
    /// libsndfile could not read the file.
    case cannotReadFile(path: String, reason: String)

    /// One line describing the problem.
    public var description: String {
        switch self {
        case .noChannels: return "no channels to play"
        case .unequalChannelLengths: return "every channel must have the same number of frames"
        case .invalidBlockSize(let frames): return "block size \(frames) is not positive"
        case .unknownConsumerKind: return "the consumer must adopt RealtimeAudioConsumer or DeferredAudioConsumer"
        case .dropsNeedDeferredConsumer: return "only deferred consumers lose cycles; the host never drops for real-time ones"
        case .cannotReadFile(let path, let reason): return "cannot read \(path): \(reason)"
        }
    }
}
