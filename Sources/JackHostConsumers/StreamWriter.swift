import CPosix
import FoundationEssentials
import Glibc
import JackHostSupport
import JackHostTypes
import Synchronization

/// A deferred consumer that writes raw samples to a file descriptor: stdout, a FIFO or a file.
///
/// Each block is encoded once into the requested ``SampleFormat`` (little-endian,
/// 24-bit packed in 3 bytes), interleaved (`L R L R …`) or not (each channel's block
/// in turn). When the reader goes away (EPIPE), the writer stops quietly and
/// ``readerClosed`` turns true; SIGPIPE must be ignored by the process
/// (jackhost does this at start-up).
///
/// ```sh
/// jackhost stream --sample-format s16 --interleaved | sox -t raw -r 48000 -e signed -b 16 -c 4 - out.flac
/// ```
public final class StreamWriter: DeferredAudioConsumer, EncodedAudioConsumer, @unchecked Sendable {
    // @unchecked: the descriptor and encoder are used only by the worker thread; shared state is atomic or in a Mutex.
    /// The name shown in reports.
    public let consumerName = "stream"
    /// The sample format written.
    public let sampleFormat: SampleFormat
    /// Frame-major (true) or channel-major blocks (false).
    public let interleaved: Bool
    private let descriptor: Int32
    private let closesDescriptor: Bool
    private let encoder = BlockEncoder()
    private let closed = Atomic<Bool>(false)
    private let bytes = Atomic<Int>(0)
    private let frames = Atomic<Int>(0)
    private let failureMessage = Mutex<String?>(nil)

    /// Writes to an open file descriptor (for example `STDOUT_FILENO`); the caller keeps ownership.
    public init(descriptor: Int32, sampleFormat: SampleFormat = .float32, interleaved: Bool = true) {
        self.descriptor = descriptor
        self.closesDescriptor = false
        self.sampleFormat = sampleFormat
        self.interleaved = interleaved
    }

    /// Opens a FIFO, a device or a new file for writing.
    ///
    /// - A FIFO waits here for a reader, polling every 20 ms so that `keepWaiting` can end the
    ///   wait (a blocking open(2) would ignore SIGINT and SIGTERM while it waits).
    /// - A regular file is created, and an existing one refused unless `overwrite` (see ``TakeFiles``).
    ///
    /// - Throws: ``RecorderError`` for a path that cannot be written, or
    ///   ``StreamWriterError/stoppedWaitingForReader(path:)`` when `keepWaiting` said stop.
    public init(
        path: String, sampleFormat: SampleFormat = .float32, interleaved: Bool = true, overwrite: Bool = false,
        keepWaiting: () -> Bool = { true }
    ) throws {
        if FileKind.isFIFO(atPath: path) {
            var fd: Int32 = -1
            while true {
                fd = cposix_open_for_writing_nonblocking(path, 0, 0)
                if fd >= 0 { break }
                guard errno == ENXIO || errno == EINTR else {
                    throw RecorderError.unwritablePath(path: path, reason: TakeFiles.reason(errno))
                }
                guard keepWaiting() else { throw StreamWriterError.stoppedWaitingForReader(path: path) }
                usleep(20_000)
            }
            descriptor = fd
        } else {
            var files = TakeFiles(name: .exact(path), overwrite: overwrite, makesSegments: false)
            descriptor = try files.createNext().files[0].descriptor
        }
        self.closesDescriptor = true
        self.sampleFormat = sampleFormat
        self.interleaved = interleaved
    }

    /// Checks before the run that `path` can be written and that no file would be overwritten
    /// (unless `overwrite`); FIFOs and devices are fine.
    public static func validate(path: String, overwrite: Bool = false) throws(RecorderError) {
        try TakeFiles(name: .exact(path), overwrite: overwrite, makesSegments: false).validate()
    }

    deinit {
        if closesDescriptor { close(descriptor) }
    }

    /// True once the reader closed the pipe; nothing more is written.
    public var readerClosed: Bool { closed.load(ordering: .acquiring) }
    /// Bytes written so far.
    public var bytesWritten: Int { bytes.load(ordering: .relaxed) }
    /// Frames written so far.
    public var framesWritten: Int { frames.load(ordering: .relaxed) }
    /// A write error other than a closed pipe, if one stopped the stream.
    public var failure: String? { failureMessage.withLock { $0 } }

    /// Nothing to check: every format can be streamed.
    public func prepare(format: StreamFormat) throws {}

    /// The encoding written.
    public var encoding: AudioEncoding { AudioEncoding(sampleFormat: sampleFormat, interleaved: interleaved) }

    /// Encodes and writes one block (used when the writer is added to a host on its own).
    public func consume(_ block: AudioBlock) {
        guard !readerClosed else { return }
        encoder.encode(block.buffers, as: encoding) { bytes in
            consume(
                EncodedBlock(
                    bytes: bytes, frameCount: block.frameCount, channelCount: block.channelCount,
                    encoding: encoding, timestamp: block.timestamp, droppedFramesBefore: block.droppedFramesBefore))
        }
    }

    /// Writes one already encoded block.
    public func consume(_ block: EncodedBlock) {
        guard !readerClosed, let base = block.bytes.baseAddress else { return }
        var offset = 0
        let count = block.bytes.count
        while offset < count {
            let result = write(descriptor, base + offset, count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                if errno != EPIPE { failureMessage.withLock { $0 = "stream write failed: \(String(cString: strerror(errno)))" } }
                closed.store(true, ordering: .releasing)
                return
            }
            offset += result
        }
        bytes.add(count, ordering: .relaxed)
        frames.add(block.frameCount, ordering: .relaxed)
    }

    /// Nothing buffered to flush: every block is written as it arrives.
    public func finish() {}
}
