import CSndFile
import Glibc
import JackHostTypes

/// Writes one segment of a take through libsndfile: a single file with every channel, or with
/// `--channel-files` one mono file per channel, all starting on the same frame and finalised
/// together.
///
/// It owns the open files and nothing else: naming, splitting and triggering are the
/// ``Recorder``'s. Worker thread only.
final class TakeWriter {
    /// How the files are encoded.
    struct Settings {
        var container: AudioContainer
        /// The recorder's encoding (interleaved, as libsndfile takes it).
        var encoding: AudioEncoding
        /// libsndfile's subtype for the sample format.
        var subtype: Int32
        /// The sample format on disk.
        var sampleFormat: SampleFormat
        var quality: Double?
        var syncSeconds: Double?
    }

    /// What writes one file: libsndfile, or jackhost's own W64 writer (for its `bext` chunk).
    private enum Output {
        case sndfile(OpaquePointer)
        case wave64(Wave64Writer)
    }

    /// One open file of the segment.
    private struct OpenFile {
        var path: String
        var output: Output
        /// -1 for standard output (never synced).
        var descriptor: Int32
        /// The coding history to put back once libsndfile has closed the file (see
        /// ``CodingHistoryPatch``).
        var codingHistory: String? = nil
        /// Whether jackhost, not libsndfile, closes `descriptor`: after the coding history and
        /// the markers (``CueChunks``) are written.
        var keepsDescriptor = false
    }

    let settings: Settings
    private var files: [OpenFile] = []
    private var format: StreamFormat?
    /// Frames in each file of the segment.
    private(set) var frames = 0
    /// Xrun-flagged cycles and dropped frames inside the segment.
    var xruns = 0
    var droppedFrames = 0
    private var framesSinceHeaderUpdate = 0
    private var framesSinceSync = 0
    /// The segment's markers, written into its WAV and RF64 files when they close.
    private(set) var markers: [CueChunks.Point] = []
    /// Why the last segment closed without its markers in a file, one line each.
    private(set) var markerProblems: [String] = []
    /// One channel's samples, for channel files.
    private var scratch: UnsafeMutableRawPointer?
    private var scratchFrames = 0

    init(settings: Settings) { self.settings = settings }

    deinit {
        _ = close()
        scratch?.deallocate()
    }

    /// Whether a segment is open.
    var isOpen: Bool { !files.isEmpty }
    /// The open files' paths.
    var paths: [String] { files.map(\.path) }
    /// Whether the open segment's files take markers in a `cue ` chunk (WAV, RF64 and W64 files,
    /// not standard output).
    var carriesMarkers: Bool { files.contains { $0.keepsDescriptor } }

    /// Adds a marker at `frame` of the open segment, written when it closes.
    func addMarker(_ point: CueChunks.Point) { markers.append(point) }

    /// Opens libsndfile on each created file. On any failure the files opened so far are
    /// closed, every created regular file is removed, and the error is thrown.
    ///
    /// - Parameters:
    ///   - created: The segment's files, already created (one, or one per channel).
    ///   - broadcast: The `bext` chunk for each file, or nil.
    func open(
        _ created: [(path: String, descriptor: Int32)], format: StreamFormat, broadcast: [BroadcastWave]?
    ) throws(RecorderError) {
        precondition(files.isEmpty, "a segment is already open")
        let channelsPerFile = created.count == 1 ? format.channelCount : 1
        for (index, file) in created.enumerated() {
            if settings.container == .w64, file.path != "-" {
                do {
                    let bext = broadcast.flatMap { index < $0.count ? $0[index].chunkBody() : nil }
                    let writer = try Wave64Writer(
                        descriptor: file.descriptor, channels: channelsPerFile, sampleRate: Int(format.sampleRate),
                        sampleFormat: settings.sampleFormat, bext: bext)
                    files.append(OpenFile(path: file.path, output: .wave64(writer), descriptor: file.descriptor, keepsDescriptor: true))
                    continue
                } catch {
                    let reason = TakeFiles.reason(errno)
                    Glibc.close(file.descriptor)
                    if TakeFiles.isRegularFile(file.path) { unlink(file.path) }
                    for rest in created.dropFirst(index + 1) {
                        Glibc.close(rest.descriptor)
                        if TakeFiles.isRegularFile(rest.path) { unlink(rest.path) }
                    }
                    abandon()
                    throw .openFailed(path: file.path, reason: reason)
                }
            }
            var info = SF_INFO()
            info.channels = Int32(channelsPerFile)
            info.samplerate = Int32(format.sampleRate)
            info.format = settings.container.majorFormat | settings.subtype
            let isStandardOutput = file.path == "-"
            // Only a regular file that is still empty can be ours to remove: a device such as
            // /dev/full or a FIFO was there before and must stay.
            let removable = !isStandardOutput && TakeFiles.isRegularFile(file.path)
            // A file with a `bext` chunk keeps its descriptor past sf_close, for the coding history.
            let history = isStandardOutput ? nil : broadcast.flatMap { index < $0.count ? $0[index].codingHistory : nil }
            // WAV and RF64 keep it for the markers too.
            let keepsDescriptor = !isStandardOutput && (history != nil || settings.container.carriesCueChunks)
            let closedBySndfile = !isStandardOutput && !keepsDescriptor
            let handle = sf_open_fd(file.descriptor, Int32(SFM_WRITE), &info, Int32(closedBySndfile ? SF_TRUE : SF_FALSE))
            guard let handle else {
                let reason = Recorder.libsndfileReason(nil)
                if !isStandardOutput { Glibc.close(file.descriptor) }
                if removable { unlink(file.path) }
                for rest in created.dropFirst(index + 1) {
                    Glibc.close(rest.descriptor)
                    if TakeFiles.isRegularFile(rest.path) { unlink(rest.path) }
                }
                abandon()
                throw .openFailed(path: file.path, reason: reason)
            }
            if settings.container == .wav {
                sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
            }
            // Floats are stored as captured: no normalisation, no clipping.
            sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_FALSE))
            // After the line above: MP3 needs float normalisation back on (see configure).
            settings.container.configure(handle, quality: settings.quality)
            if let broadcast, index < broadcast.count { _ = broadcast[index].apply(to: handle) }
            files.append(
                OpenFile(
                    path: file.path, output: .sndfile(handle), descriptor: isStandardOutput ? -1 : file.descriptor,
                    codingHistory: history, keepsDescriptor: keepsDescriptor))
        }
        self.format = format
        frames = 0
        xruns = 0
        droppedFrames = 0
        markers = []
        markerProblems = []
        framesSinceHeaderUpdate = 0
        framesSinceSync = 0
    }

    /// Closes the files after an open that failed part-way, removing the ones this segment created.
    private func abandon() {
        for file in files {
            _ = Self.close(file, markers: [], sync: false)
            if TakeFiles.isRegularFile(file.path) { unlink(file.path) }
        }
        files.removeAll()
    }

    /// Writes `count` interleaved frames in ``Settings/encoding``.
    ///
    /// - Returns: The frames written to every file; fewer than `count` means a write failed,
    ///   with the reason.
    func write(_ bytes: UnsafeRawPointer, frames count: Int) -> (written: Int, failure: String?) {
        guard count > 0, let format else { return (0, nil) }
        var written = count
        var failure: String?
        if files.count == 1 {
            let done = Self.write(files[0].output, bytes, frames: count, encoding: settings.encoding)
            if done != count {
                written = max(0, done)
                failure = Self.reason(files[0].output)
            }
        } else {
            let sampleBytes = settings.encoding.bytesPerSample
            ensureScratch(frames: count, sampleBytes: sampleBytes)
            let channels = format.channelCount
            for (channel, file) in files.enumerated() {
                Self.deinterleave(bytes, channel: channel, of: channels, frames: count, sampleBytes: sampleBytes, into: scratch!)
                let done = Self.write(file.output, UnsafeRawPointer(scratch!), frames: count, encoding: settings.encoding)
                if done != count {
                    written = min(written, max(0, done))
                    failure = failure ?? Self.reason(file.output)
                }
            }
        }
        frames += written
        framesSinceHeaderUpdate += written
        framesSinceSync += written
        if Double(framesSinceHeaderUpdate) >= format.sampleRate / 2 {
            // Ogg and MP3 have no length to update; libsndfile 1.2.0 would write Ogg's header pages again mid-stream.
            if !settings.container.isLossy {
                for file in files {
                    switch file.output {
                    case .sndfile(let handle): sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
                    case .wave64(let writer): try? writer.updateHeader()
                    }
                }
            }
            framesSinceHeaderUpdate = 0
        }
        if let syncSeconds = settings.syncSeconds, syncSeconds > 0, Double(framesSinceSync) >= syncSeconds * format.sampleRate {
            // Worker thread: the real-time thread never waits for the disk.
            for file in files where file.descriptor >= 0 { fdatasync(file.descriptor) }
            framesSinceSync = 0
        }
        return (written, failure)
    }

    /// Whether the last header rewrite just happened (the moment to check the disk's reserve).
    var headerJustUpdated: Bool { framesSinceHeaderUpdate == 0 && frames > 0 }

    /// Finalises every file of the segment together and returns what each holds.
    func close() -> [RecorderFileSummary] {
        let summaries = files.map {
            RecorderFileSummary(path: $0.path, frames: frames, xruns: xruns, droppedFrames: droppedFrames)
        }
        let sync = settings.syncSeconds.map { $0 > 0 } ?? false
        markerProblems = []
        for file in files {
            if let problem = Self.close(file, markers: markers, sync: sync) { markerProblems.append("\(file.path): \(problem)") }
        }
        files.removeAll()
        return summaries
    }

    /// Finalises one file: libsndfile writes its header for the last time, then the coding
    /// history is made one true line again, the markers are appended (synced with `sync`) and
    /// the descriptor closed; W64 closes itself.
    ///
    /// - Returns: Why the markers could not be written into the file, if they could not.
    private static func close(_ file: OpenFile, markers: [CueChunks.Point], sync: Bool) -> String? {
        switch file.output {
        case .sndfile(let handle):
            sf_close(handle)
            guard file.keepsDescriptor else { return nil }
            if let history = file.codingHistory { CodingHistoryPatch.apply(history, to: file.descriptor, sync: sync) }
            let problem = CueChunks.append(markers, to: file.descriptor)
            if sync && !markers.isEmpty { fdatasync(file.descriptor) }
            Glibc.close(file.descriptor)
            return problem
        case .wave64(let writer):
            return writer.close(markers: markers, sync: sync)
        }
    }

    private static func reason(_ output: Output) -> String {
        switch output {
        case .sndfile(let handle): return Recorder.libsndfileReason(handle, errno: errno)
        case .wave64: return errno == 0 ? "short write" : TakeFiles.reason(errno)
        }
    }

    private static func write(_ output: Output, _ bytes: UnsafeRawPointer, frames: Int, encoding: AudioEncoding) -> Int {
        errno = 0
        guard case .sndfile(let handle) = output else {
            if case .wave64(let writer) = output { return writer.write(bytes, frames: frames, encoding: encoding) }
            return 0
        }
        switch encoding.sampleFormat {
        case .float32: return Int(sf_writef_float(handle, bytes.assumingMemoryBound(to: Float.self), sf_count_t(frames)))
        case .int16: return Int(sf_writef_short(handle, bytes.assumingMemoryBound(to: Int16.self), sf_count_t(frames)))
        default: return Int(sf_writef_int(handle, bytes.assumingMemoryBound(to: Int32.self), sf_count_t(frames)))
        }
    }

    private func ensureScratch(frames: Int, sampleBytes: Int) {
        guard frames > scratchFrames else { return }
        scratch?.deallocate()
        scratch = .allocate(byteCount: frames * sampleBytes, alignment: 16)
        scratchFrames = frames
    }

    /// Copies one channel of interleaved samples into a contiguous run.
    static func deinterleave(
        _ source: UnsafeRawPointer, channel: Int, of channels: Int, frames: Int, sampleBytes: Int,
        into destination: UnsafeMutableRawPointer
    ) {
        if sampleBytes == 4 {
            let from = source.assumingMemoryBound(to: UInt32.self)
            let to = destination.assumingMemoryBound(to: UInt32.self)
            for frame in 0..<frames { to[frame] = from[frame * channels + channel] }
        } else {
            let from = source.assumingMemoryBound(to: UInt16.self)
            let to = destination.assumingMemoryBound(to: UInt16.self)
            for frame in 0..<frames { to[frame] = from[frame * channels + channel] }
        }
    }
}
