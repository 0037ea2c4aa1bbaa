import CSndFile
import FoundationEssentials
import Glibc
import JackHost
import Synchronization

/// Errors the recorder reports; each is one line that says what to do.
public enum RecorderError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The container cannot hold this sample format.
    case unsupportedCombination(container: AudioContainer, sampleFormat: SampleFormat)
    /// The file cannot be created where asked.
    case unwritablePath(path: String, reason: String)
    /// libsndfile refused to open the file.
    case openFailed(path: String, reason: String)
    /// Writing failed (disk full, I/O error); the file is closed and valid up to this point.
    case writeFailed(path: String, reason: String)
    /// The file exists, and takes are never overwritten without ``TakeFiles/overwrite``.
    case fileExists(path: String)
    /// The path is a symbolic link whose target does not exist.
    case danglingSymlink(path: String)
    /// A numbered segment of the same name (`take-0002.wav`) exists from an earlier take.
    case segmentExists(path: String)
    /// Two outputs of one run would write the same file.
    case sameDestination(path: String, other: String)
    /// Recording stopped because the disk's free space fell below the `--min-free` reserve.
    case reserveReached(path: String, minimumFreeBytes: Int)

    /// One line that names the problem.
    public var description: String {
        switch self {
        case .unsupportedCombination(let container, let sampleFormat):
            let hint =
                container == .flac
                ? "FLAC stores integers; use --sample-format s16 or s24"
                : "use --sample-format f32, s32, s24 or s16"
            return "\(container.rawValue.uppercased()) cannot store \(sampleFormat.name) samples; \(hint)"
        case .unwritablePath(let path, let reason):
            return "cannot write \(path): \(reason); choose a writable directory"
        case .openFailed(let path, let reason):
            return "cannot create \(path): \(reason)"
        case .writeFailed(let path, let reason):
            return "recording to \(path) stopped: \(reason); the file is valid up to the failure"
        case .fileExists(let path):
            return "\(path) exists and jackhost never overwrites a take; choose another name, or pass --overwrite"
        case .danglingSymlink(let path):
            return "\(path) is a symbolic link to a file that does not exist; remove the link, or pass --overwrite to create its target"
        case .segmentExists(let path):
            return "\(path) exists from an earlier take and would be overwritten by this one's segments; choose another name, or pass --overwrite"
        case .reserveReached(let path, let bytes):
            return
                "recording to \(path) stopped: less than \(DiskSpace.describe(bytes)) would be left free on its disk (--min-free); the file is valid up to here"
        case .sameDestination(let path, let other):
            return "\(path) and \(other) are the same file; give each output its own destination"
        }
    }
}

/// A deferred consumer that writes every input to an audio file through libsndfile.
///
/// - The file holds exactly the frames captured: when the ring dropped frames, the
///   recorder writes the same number of frames of silence, so the timeline stays aligned,
///   and counts them in ``silenceFramesInserted``.
/// - The header is rewritten every half second of audio, so a take killed with SIGKILL
///   stays readable up to the last rewrite.
/// - WAV is written as RF64 with auto-downgrade: a plain WAV below 4 GiB, RF64 beyond.
/// - The file is created with the first block, so a run that captures nothing leaves no file.
/// - No file is ever overwritten unless asked (see ``TakeFiles``): an existing take, segment
///   or link is refused before the run and again, atomically, when the file is created.
/// - With a ``SplitLimit``, takes are named `NAME-0001.ext`, `NAME-0002.ext`, … and split at
///   the exact frame.
/// - After a server loss the current file is finalised and recording continues in the next
///   numbered segment (`take.wav`, then `take-0002.wav`, …) once the host reconnects.
public final class Recorder: DeferredAudioConsumer, EncodedAudioConsumer, @unchecked Sendable {
    // @unchecked: file state is touched only by the worker thread (consume/finish, ordered by the host); counters are atomics; `createdFiles` and the failure are under `lock`.
    /// The name shown in reports.
    public let consumerName = "recorder"
    /// The path asked for (with splitting, the stem of the numbered files; for an automatic
    /// name, its pattern).
    public var path: String { takeFiles.displayName }
    /// The container.
    public let container: AudioContainer
    /// The sample format on disk.
    public let sampleFormat: SampleFormat
    /// When to start a new file, if ever.
    public let split: SplitLimit?

    /// Frames written to disk, including inserted silence.
    public var framesWritten: Int { written.load(ordering: .relaxed) }
    /// Frames of silence written in place of frames the ring dropped.
    public var silenceFramesInserted: Int { silence.load(ordering: .relaxed) }
    /// Frames that arrived after a write error and were not written.
    public var framesLostToErrors: Int { lostToErrors.load(ordering: .relaxed) }
    /// Every file created so far, in order.
    public var files: [String] { lock.withLock { _ in createdFiles } }
    /// The write error that stopped the recorder, if any.
    public var failure: RecorderError? { lock.withLock { _ in failureStorage } }

    private let written = Atomic<Int>(0)
    private let silence = Atomic<Int>(0)
    private let lostToErrors = Atomic<Int>(0)
    private let lock = Mutex<Void>(())
    private var createdFiles: [String] = []
    private var failureStorage: RecorderError?

    private var format: StreamFormat?
    private var file: OpaquePointer?
    private var currentPath = ""
    private var framesInFile = 0
    private var framesSinceHeaderUpdate = 0
    private var framesSinceSync = 0
    /// The open file's descriptor, for fdatasync; -1 for standard output.
    private var descriptor: Int32 = -1
    /// Names and creates the files (worker thread once recording).
    private var takeFiles: TakeFiles
    private let ownEncoder = BlockEncoder()

    /// Describes a recording to `path` (`-` for standard output); ``validate()`` checks it
    /// before anything touches JACK.
    ///
    /// - Parameter overwrite: Replace an existing file instead of refusing it.
    public convenience init(
        path: String, container: AudioContainer? = nil, sampleFormat: SampleFormat = .float32,
        split: SplitLimit? = nil, overwrite: Bool = false
    ) {
        self.init(
            name: .exact(path), container: container ?? AudioContainer(path: path) ?? .wav,
            sampleFormat: sampleFormat, split: split, overwrite: overwrite)
    }

    /// Seconds of audio between `fdatasync` calls (data and header reach stable storage); nil
    /// leaves it to the kernel. After a power cut, at most this much of what was written is
    /// lost, plus what still waited in memory (the elastic buffer).
    public var syncSeconds: Double? = 2
    /// Stop the take cleanly (a valid file) before the disk's free space falls below this.
    public var minimumFreeBytes: Int?

    /// Describes a recording with a name ``TakeFiles`` makes, for example an automatic one.
    public init(
        name: TakeFiles.TakeName, container: AudioContainer, sampleFormat: SampleFormat = .float32,
        split: SplitLimit? = nil, overwrite: Bool = false
    ) {
        self.container = container
        self.sampleFormat = sampleFormat
        self.split = split
        self.takeFiles = TakeFiles(name: name, numbersEveryFile: split != nil, overwrite: overwrite)
    }

    deinit { closeFile() }

    /// Checks the container/sample-format pair, that the directory takes a new file, and that
    /// no existing take would be overwritten.
    public func validate(channels: Int = 2, sampleRate: Int = 48000) throws(RecorderError) {
        guard container.supports(sampleFormat, channels: channels, sampleRate: sampleRate) else {
            throw .unsupportedCombination(container: container, sampleFormat: sampleFormat)
        }
        try takeFiles.validate()
    }

    /// Checks the format against the container.
    ///
    /// Before the first file, this also checks the destination (``validate(channels:sampleRate:)``);
    /// on a later format change the take's own files exist, and only the format is checked.
    public func prepare(format: StreamFormat) throws {
        if files.isEmpty {
            try validate(channels: format.channelCount, sampleRate: Int(format.sampleRate))
        } else if !container.supports(sampleFormat, channels: format.channelCount, sampleRate: Int(format.sampleRate)) {
            throw RecorderError.unsupportedCombination(container: container, sampleFormat: sampleFormat)
        }
        self.format = format
    }

    /// The encoding libsndfile is fed: interleaved, 24-bit left-justified in 32-bit words.
    public var encoding: AudioEncoding {
        AudioEncoding(sampleFormat: sampleFormat == .fixed8_24 ? .int32 : sampleFormat, interleaved: true, int24InInt32: true)
    }

    /// Converts and writes a block (used when the recorder is added to a host on its own).
    public func consume(_ block: AudioBlock) {
        ownEncoder.encode(block.buffers, as: encoding) { bytes in
            consume(
                EncodedBlock(
                    bytes: bytes, frameCount: block.frameCount, channelCount: block.channelCount,
                    encoding: encoding, timestamp: block.timestamp,
                    droppedFramesBefore: block.droppedFramesBefore))
        }
    }

    /// Writes an already converted block (and silence for frames dropped before it).
    public func consume(_ block: EncodedBlock) {
        guard failure == nil else {
            lostToErrors.add(block.frameCount + block.droppedFramesBefore, ordering: .relaxed)
            return
        }
        if block.droppedFramesBefore > 0 {
            writeSilence(frames: block.droppedFramesBefore, channels: block.channelCount)
            silence.add(block.droppedFramesBefore, ordering: .relaxed)
        }
        var offset = 0
        while offset < block.frameCount && failure == nil {
            let count = min(block.frameCount - offset, framesUntilSplit())
            write(block.bytes.baseAddress! + offset * block.bytesPerFrame, frames: count)
            offset += count
        }
    }

    /// Closes the file, which writes its final header.
    public func finish() { closeFile() }

    /// On server loss, finalises the current file: the next block starts a new segment,
    /// `NAME-0002.ext`, and so on. Called with no block in flight.
    public func handle(_ event: AudioSessionEvent) {
        if event == .serverLost { closeFile() }
    }

    // MARK: Writing (worker thread)

    private func framesUntilSplit() -> Int {
        guard let split, let format else { return .max }
        let limit: Int
        switch split {
        case .seconds(let seconds): limit = max(1, Int(seconds * format.sampleRate))
        case .bytes(let bytes): limit = max(1, bytes / (format.channelCount * max(sampleFormat.bytesPerSample, 2)))
        }
        if file != nil && framesInFile >= limit { closeFile() }
        return limit - (file == nil ? 0 : framesInFile)
    }

    /// Writes zeros: in every encoding the recorder uses, all-zero bytes are silence.
    private func writeSilence(frames: Int, channels: Int) {
        let chunk = 4096
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: chunk * channels * 4, alignment: 16)
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: chunk * channels * 4)
        defer { zeros.deallocate() }
        var remaining = frames
        while remaining > 0 && failure == nil {
            let count = min(remaining, chunk, framesUntilSplit())
            write(UnsafeRawPointer(zeros), frames: count)
            remaining -= count
        }
    }

    /// Writes `frames` interleaved frames in ``encoding`` at `bytes`.
    private func write(_ bytes: UnsafeRawPointer, frames: Int) {
        guard frames > 0, let format else { return }
        if file == nil { openNextFile(format: format) }
        guard let file else {
            lostToErrors.add(frames, ordering: .relaxed)
            return
        }
        let count: sf_count_t
        errno = 0
        switch encoding.sampleFormat {
        case .float32: count = sf_writef_float(file, bytes.assumingMemoryBound(to: Float.self), sf_count_t(frames))
        case .int16: count = sf_writef_short(file, bytes.assumingMemoryBound(to: Int16.self), sf_count_t(frames))
        default: count = sf_writef_int(file, bytes.assumingMemoryBound(to: Int32.self), sf_count_t(frames))
        }
        if count != sf_count_t(frames) {
            let reason = Recorder.libsndfileReason(file, errno: errno)
            if count > 0 { written.add(Int(count), ordering: .relaxed) }
            lostToErrors.add(frames - max(0, Int(count)), ordering: .relaxed)
            fail(.writeFailed(path: currentPath, reason: reason))
            return
        }
        written.add(frames, ordering: .relaxed)
        framesInFile += frames
        framesSinceHeaderUpdate += frames
        framesSinceSync += frames
        if Double(framesSinceHeaderUpdate) >= format.sampleRate / 2 {
            sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
            framesSinceHeaderUpdate = 0
            checkReserve()
        }
        if let syncSeconds, syncSeconds > 0, descriptor >= 0, Double(framesSinceSync) >= syncSeconds * format.sampleRate {
            // Worker thread: the real-time thread never waits for the disk.
            fdatasync(descriptor)
            framesSinceSync = 0
        }
    }

    /// Ends the take cleanly when the disk's free space has fallen below the reserve: the file
    /// is closed (valid), and what arrives later is counted as lost to the failure.
    private func checkReserve() {
        guard let minimumFreeBytes, currentPath != "-", let free = DiskSpace.freeBytes(atPath: currentPath),
            free < minimumFreeBytes
        else { return }
        fail(.reserveReached(path: currentPath, minimumFreeBytes: minimumFreeBytes))
    }

    private func openNextFile(format: StreamFormat) {
        var info = SF_INFO()
        info.channels = Int32(format.channelCount)
        info.samplerate = Int32(format.sampleRate)
        info.format = container.majorFormat | (container.subtype(for: sampleFormat) ?? 0)
        let opened: OpaquePointer?
        if takeFiles.isStandardOutput {
            currentPath = "-"
            descriptor = -1
            opened = sf_open_fd(STDOUT_FILENO, Int32(SFM_WRITE), &info, Int32(SF_FALSE))
        } else {
            let created: (path: String, descriptor: Int32)
            do {
                created = try takeFiles.createNext()
            } catch {
                fail(error)
                return
            }
            currentPath = created.path
            descriptor = created.descriptor
            // Only a regular file that is still empty can be ours to remove: a device such as
            // /dev/full or a FIFO was there before and must stay.
            let removable = TakeFiles.isRegularFile(created.path)
            opened = sf_open_fd(created.descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE))
            if opened == nil {
                close(created.descriptor)
                if removable { unlink(created.path) }
            }
        }
        guard let opened else {
            fail(.openFailed(path: currentPath, reason: Recorder.libsndfileReason(nil)))
            return
        }
        if container == .wav {
            sf_command(opened, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
        // Floats are stored as captured: no normalisation, no clipping.
        sf_command(opened, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_FALSE))
        file = opened
        framesInFile = 0
        framesSinceHeaderUpdate = 0
        framesSinceSync = 0
        lock.withLock { _ in createdFiles.append(currentPath) }
    }

    /// `take.wav`, 3 → `take-0003.wav`: four digits sort correctly up to 9999 parts.
    public static func numberedPath(_ path: String, index: Int) -> String {
        TakeFiles.numberedPath(path, index: index)
    }

    /// libsndfile's error in jackhost's words: its system errors read
    /// "System error : No space left on device.;", so the errno text is used when there is one.
    static func libsndfileReason(_ file: OpaquePointer?, errno code: Int32 = 0) -> String {
        if code != 0 { return TakeFiles.reason(code) }
        var text = String(cString: sf_strerror(file))
        for prefix in ["System error : ", "Error : "] where text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
        while let last = text.last, last == "." || last == ";" || last == " " || last == "\n" { text.removeLast() }
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    private func closeFile() {
        guard let file else { return }
        sf_close(file)
        self.file = nil
    }

    private func fail(_ error: RecorderError) {
        lock.withLock { _ in if failureStorage == nil { failureStorage = error } }
        closeFile()
    }

}
