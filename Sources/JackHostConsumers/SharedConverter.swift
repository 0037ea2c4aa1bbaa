import FoundationEssentials
import Glibc
import JackHostTypes
import Synchronization

/// How a consumer wants its samples: format, layout, and (for libsndfile) 24-bit in 32-bit words.
public struct AudioEncoding: Hashable, Sendable, CustomStringConvertible {
    /// The sample format.
    public var sampleFormat: SampleFormat
    /// Frame-major (`L R L R`) when true; one run per channel when false.
    public var interleaved: Bool
    /// 24-bit samples left-justified in native 32-bit words (what libsndfile's `sf_writef_int`
    /// takes) instead of packed little-endian 3-byte samples (what a raw stream carries).
    public var int24InInt32: Bool

    /// Creates an encoding.
    public init(sampleFormat: SampleFormat, interleaved: Bool, int24InInt32: Bool = false) {
        self.sampleFormat = sampleFormat
        self.interleaved = interleaved
        self.int24InInt32 = int24InInt32 && sampleFormat == .int24
    }

    /// Bytes one sample takes in memory under this encoding.
    public var bytesPerSample: Int { int24InInt32 ? 4 : sampleFormat.bytesPerSample }

    /// For example "s16 interleaved".
    public var description: String {
        "\(sampleFormat.name)\(int24InInt32 ? " in 32-bit" : "") \(interleaved ? "interleaved" : "non-interleaved")"
    }
}

/// One block already converted to an ``AudioEncoding``.
///
/// Not `Sendable`: like ``AudioBlock``, it borrows memory for one call.
public struct EncodedBlock {
    /// The converted samples; valid only during the call that receives the block.
    public let bytes: UnsafeRawBufferPointer
    /// Frames in the block.
    public let frameCount: Int
    /// Channels in the block.
    public let channelCount: Int
    /// The encoding of `bytes`.
    public let encoding: AudioEncoding
    /// When the block was captured.
    public let timestamp: AudioTimestamp
    /// Frames dropped before this block (the source ring was full).
    public let droppedFramesBefore: Int

    /// Bytes per interleaved frame (all channels).
    public var bytesPerFrame: Int { channelCount * encoding.bytesPerSample }
}

/// A consumer that takes samples already converted, so that a ``SharedConverter`` can
/// convert once for several of them.
public protocol EncodedAudioConsumer: AnyObject {
    /// A short name for reports.
    var consumerName: String { get }
    /// The encoding this consumer wants.
    var encoding: AudioEncoding { get }
    /// Called once before the first block.
    func prepare(format: StreamFormat) throws
    /// Receives one converted block on the converter's worker thread.
    func consume(_ block: EncodedBlock)
    /// Called once after the last block.
    func finish()
    /// Session events; see ``AudioConsumer/handle(_:)``.
    func handle(_ event: AudioSessionEvent)
}

/// Converts blocks into an ``AudioEncoding`` with scratch memory it reuses (worker thread only).
public final class BlockEncoder {
    private var scratch = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
    private var scratchBytes = 16
    private var planar = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    private var planarCount = 1
    /// How many conversions this encoder has performed (tests check sharing with it).
    public private(set) var conversions = 0

    /// Creates an encoder.
    public init() {}

    deinit {
        scratch.deallocate()
        planar.deallocate()
    }

    /// Converts `buffers` and passes the bytes to `body`; they are valid only inside it.
    public func encode<R>(
        _ buffers: AudioBufferListView, as encoding: AudioEncoding,
        _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        let channels = buffers.channelCount, frames = buffers.frameCount
        let byteCount = channels * frames * encoding.bytesPerSample
        if byteCount > scratchBytes {
            scratch.deallocate()
            scratch = .allocate(byteCount: byteCount, alignment: 16)
            scratchBytes = byteCount
        }
        conversions += 1
        if encoding.int24InInt32 {
            if channels * frames > planarCount {
                planar.deallocate()
                planar = .allocate(capacity: channels * frames)
                planarCount = channels * frames
            }
            SampleConversion.encodeInt24LeftJustified(
                buffers.channelPointers, frames: frames,
                interleaved: encoding.interleaved,
                into: scratch.assumingMemoryBound(to: Int32.self), scratch: planar)
        } else {
            SampleConversion.encode(
                buffers.channelPointers, frames: frames, format: encoding.sampleFormat,
                interleaved: encoding.interleaved, into: scratch)
        }
        return body(UnsafeRawBufferPointer(start: scratch, count: byteCount))
    }
}

/// A deferred consumer that converts each block **once per distinct encoding** and hands
/// the result to every ``EncodedAudioConsumer`` that asked for that encoding, in order.
///
/// For example a recording and a stream that both want interleaved 16-bit share one
/// conversion per cycle. They also share one worker thread, so a stalled sink delays the
/// others; give a consumer that may stall (a pipe nobody reads) its own converter.
public final class SharedConverter: DeferredAudioConsumer, @unchecked Sendable {
    // @unchecked: the encoder is used only by the worker thread that calls consume; the wrapped consumers follow the same contract.
    /// The name shown in reports.
    public let consumerName: String
    /// The consumers fed, in order.
    public let consumers: [any EncodedAudioConsumer]
    private let encodings: [AudioEncoding]
    private let encoder = BlockEncoder()

    /// Feeds `consumers`; `name` defaults to their names joined with "+".
    public init(_ consumers: [any EncodedAudioConsumer], name: String? = nil) {
        self.consumers = consumers
        var distinct: [AudioEncoding] = []
        for consumer in consumers where !distinct.contains(consumer.encoding) { distinct.append(consumer.encoding) }
        encodings = distinct
        consumerName = name ?? consumers.map(\.consumerName).joined(separator: "+")
    }

    /// Conversions performed so far: blocks × distinct encodings.
    public var conversions: Int { encoder.conversions }

    /// Prepares every consumer; the first that throws stops the rest.
    public func prepare(format: StreamFormat) throws {
        for consumer in consumers { try consumer.prepare(format: format) }
    }

    /// Converts once per encoding and fans out.
    public func consume(_ block: AudioBlock) {
        for encoding in encodings {
            encoder.encode(block.buffers, as: encoding) { bytes in
                let encoded = EncodedBlock(
                    bytes: bytes, frameCount: block.frameCount, channelCount: block.channelCount,
                    encoding: encoding, timestamp: block.timestamp,
                    droppedFramesBefore: block.droppedFramesBefore)
                for consumer in consumers where consumer.encoding == encoding { consumer.consume(encoded) }
            }
        }
    }

    /// Finishes every consumer.
    public func finish() { consumers.forEach { $0.finish() } }

    /// Forwards events to every consumer.
    public func handle(_ event: AudioSessionEvent) { consumers.forEach { $0.handle(event) } }
}
