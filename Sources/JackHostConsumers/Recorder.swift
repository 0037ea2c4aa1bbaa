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

    /// One line that names the problem.
    public var description: String {
        switch self {
        case .unsupportedCombination(let container, let sampleFormat):
            let hint = container == .flac ? "FLAC stores integers; use --sample-format s16 or s24"
                                          : "use --sample-format f32, s32, s24 or s16"
            return "\(container.rawValue.uppercased()) cannot store \(sampleFormat.name) samples; \(hint)"
        case .unwritablePath(let path, let reason):
            return "cannot write \(path): \(reason); choose a writable directory"
        case .openFailed(let path, let reason):
            return "cannot create \(path): \(reason)"
        case .writeFailed(let path, let reason):
            return "recording to \(path) stopped: \(reason); the file is valid up to the failure"
        }
    }
}

/// When the recorder starts a new file.
public enum SplitLimit: Sendable, Equatable {
    /// After this many bytes of sample data.
    case bytes(Int)
    /// After this many seconds of audio.
    case seconds(Double)

    /// Parses "500M", "2G", "1024k", "90s", "10m" (minutes), "1h". Sizes use powers of 1024.
    public init?(_ text: String) {
        let lower = text.lowercased()
        guard let unit = lower.last, let number = Double(lower.dropLast()), number > 0 else {
            return nil
        }
        switch unit {
        case "k": self = .bytes(Int(number * 1024))
        case "g": self = .bytes(Int(number * 1024 * 1024 * 1024))
        case "b": self = .bytes(Int(number))
        case "s": self = .seconds(number)
        case "m":
            // "M" is mebibytes and "m" minutes would be too subtle; only "MB"-style upper case means bytes.
            self = text.last == "M" ? .bytes(Int(number * 1024 * 1024)) : .seconds(number * 60)
        case "h": self = .seconds(number * 3600)
        default: return nil
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
/// - With a ``SplitLimit``, takes are named `NAME-0001.ext`, `NAME-0002.ext`, … and split at
///   the exact frame.
/// - After a server loss the current file is finalised and recording continues in the next
///   numbered segment (`take.wav`, then `take-0002.wav`, …) once the host reconnects.
public final class Recorder: DeferredAudioConsumer, EncodedAudioConsumer, @unchecked Sendable {
    /// The name shown in reports.
    public let consumerName = "recorder"
    /// The path asked for (with splitting, the stem of the numbered files).
    public let path: String
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
    private var fileIndex = 0
    private let ownEncoder = BlockEncoder()

    /// Describes a recording; ``validate()`` checks it before anything touches JACK.
    public init(path: String, container: AudioContainer? = nil, sampleFormat: SampleFormat = .float32,
                split: SplitLimit? = nil) {
        self.path = path
        self.container = container ?? AudioContainer(path: path) ?? .wav
        self.sampleFormat = sampleFormat
        self.split = split
    }

    deinit { closeFile() }

    /// Checks the container/sample-format pair and that the directory is writable.
    public func validate(channels: Int = 2, sampleRate: Int = 48000) throws(RecorderError) {
        guard container.supports(sampleFormat, channels: channels, sampleRate: sampleRate) else {
            throw .unsupportedCombination(container: container, sampleFormat: sampleFormat)
        }
        if FileKind(atPath: path) == .directory {
            throw .unwritablePath(path: path, reason: "it is a directory")
        }
        let directory = path.deletingLastPathComponent
        let target = directory.isEmpty ? "." : directory
        guard FileKind(atPath: target) == .directory else {
            throw .unwritablePath(path: path, reason: "directory \(target) does not exist")
        }
        // access(2) says yes to root everywhere, even in /proc; only creating a file tells.
        // The probe is removed at once, so a run that captures nothing leaves no file.
        let existed = FileManager.default.fileExists(atPath: path)
        let probe = existed ? open(path, O_WRONLY | O_CLOEXEC) : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard probe >= 0 else {
            throw .unwritablePath(path: path, reason: String(cString: strerror(errno)))
        }
        close(probe)
        if !existed { unlink(path) }
    }

    /// Checks the format against the container.
    public func prepare(format: StreamFormat) throws {
        try validate(channels: format.channelCount, sampleRate: Int(format.sampleRate))
        self.format = format
    }

    /// The encoding libsndfile is fed: interleaved, 24-bit left-justified in 32-bit words.
    public var encoding: AudioEncoding {
        AudioEncoding(sampleFormat: sampleFormat == .fixed8_24 ? .int32 : sampleFormat, interleaved: true, int24InInt32: true)
    }

    /// Converts and writes a block (used when the recorder is added to a host on its own).
    public func consume(_ block: AudioBlock) {
        ownEncoder.encode(block.buffers, as: encoding) { bytes in
            consume(EncodedBlock(bytes: bytes, frameCount: block.frameCount, channelCount: block.channelCount,
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
        switch encoding.sampleFormat {
        case .float32: count = sf_writef_float(file, bytes.assumingMemoryBound(to: Float.self), sf_count_t(frames))
        case .int16: count = sf_writef_short(file, bytes.assumingMemoryBound(to: Int16.self), sf_count_t(frames))
        default: count = sf_writef_int(file, bytes.assumingMemoryBound(to: Int32.self), sf_count_t(frames))
        }
        if count != sf_count_t(frames) {
            let reason = String(cString: sf_strerror(file))
            if count > 0 { written.add(Int(count), ordering: .relaxed) }
            lostToErrors.add(frames - max(0, Int(count)), ordering: .relaxed)
            fail(.writeFailed(path: currentPath, reason: reason))
            return
        }
        written.add(frames, ordering: .relaxed)
        framesInFile += frames
        framesSinceHeaderUpdate += frames
        if Double(framesSinceHeaderUpdate) >= format.sampleRate / 2 {
            sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
            framesSinceHeaderUpdate = 0
        }
    }

    private func openNextFile(format: StreamFormat) {
        fileIndex += 1
        // Without --split the first file keeps the name asked for; later segments (after a
        // server loss or a format change) are numbered from 2.
        currentPath = split == nil && fileIndex == 1 ? path : Recorder.numberedPath(path, index: fileIndex)
        var info = SF_INFO()
        info.channels = Int32(format.channelCount)
        info.samplerate = Int32(format.sampleRate)
        info.format = container.majorFormat | (container.subtype(for: sampleFormat) ?? 0)
        guard let opened = sf_open(currentPath, Int32(SFM_WRITE), &info) else {
            fail(.openFailed(path: currentPath, reason: String(cString: sf_strerror(nil))))
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
        lock.withLock { _ in createdFiles.append(currentPath) }
    }

    /// `take.wav`, 3 → `take-0003.wav`: four digits sort correctly up to 9999 parts.
    public static func numberedPath(_ path: String, index: Int) -> String {
        let number = index.zeroPadded(to: 4)
        let (stem, ext) = path.splittingPathExtension
        return ext.isEmpty ? "\(stem)-\(number)" : "\(stem)-\(number).\(ext)"
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
