import FoundationEssentials
import Glibc
import JackHostTypes
import Synchronization

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
