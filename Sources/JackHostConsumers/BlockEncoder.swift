import FoundationEssentials
import Glibc
import JackHostTypes

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
