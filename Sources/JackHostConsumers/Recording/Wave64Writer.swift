import Glibc
import JackHostTypes

/// Writes a Sony Wave64 file with a Broadcast Wave `bext` chunk and the take's markers before
/// its audio.
///
/// libsndfile writes W64 but has no place for `bext` in it (`SFC_SET_BROADCAST_INFO` and
/// `sf_set_chunk` are refused for W64), and a chunk appended after the audio confuses its own
/// reader and sox (they read it as audio: 256 frames became 280). So jackhost lays W64 files out
/// itself: the `riff` and `wave` headers, a `fmt ` chunk (PCM or IEEE float, as libsndfile
/// writes it), the `bext` chunk when there is one, a `junk` chunk of ``markerRoom`` bytes, then
/// `data`, each chunk 8-byte aligned as the format requires. At close the markers are written
/// into the reserved room as WAV's `cue ` and `LIST`/`adtl` chunks in W64 form (the chunk names
/// as GUIDs, the format's rule for RIFF chunks; W64 defines no marker chunk of its own that
/// readers agree on), and a smaller `junk` chunk fills what is left. libsndfile and sox skip
/// them and read the audio like any W64 file. Sizes are rewritten in place at every header
/// update, so a take killed with SIGKILL stays readable up to the last one. Worker thread only.
final class Wave64Writer {
    /// Bytes per sample on disk (2, 3 or 4).
    let bytesPerSample: Int
    let channels: Int
    private let descriptor: Int32
    private let floatSamples: Bool
    /// Where the `data` chunk starts.
    private let dataChunkOffset: Int
    /// Where the reserved room for markers (a `junk` chunk until close) starts.
    private let markerOffset: Int
    /// Bytes reserved before the audio for the markers: room for 100 markers with labels of
    /// up to 255 bytes, or about 800 with short ones.
    static let markerRoom = 32 * 1024
    private(set) var dataBytes = 0
    private var scratch: UnsafeMutableRawPointer?
    private var scratchBytes = 0

    /// The GUID suffix every W64 chunk name shares, after its four ASCII letters.
    private static let chunkSuffix: [UInt8] = [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A]
    private static let riffGUID: [UInt8] =
        Array("riff".utf8) + [0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]
    /// W64's `list` chunk, RIFF's `LIST`.
    private static let listGUID: [UInt8] =
        Array("list".utf8) + [0x2F, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00]

    /// Writes the header to `descriptor` (a new, empty file).
    ///
    /// - Parameters:
    ///   - sampleFormat: What is stored: f32, s32, s24 (packed in three bytes) or s16.
    ///   - bext: The Broadcast Wave chunk's body (see ``BroadcastWave/chunkBody()``), or nil.
    init(descriptor: Int32, channels: Int, sampleRate: Int, sampleFormat: SampleFormat, bext: [UInt8]?) throws(RecorderError) {
        self.descriptor = descriptor
        self.channels = channels
        floatSamples = sampleFormat == .float32
        bytesPerSample = sampleFormat == .int16 ? 2 : sampleFormat == .int24 ? 3 : 4
        var header: [UInt8] = []
        header += Self.riffGUID + Self.little(UInt64(0))
        header += Array("wave".utf8) + Self.chunkSuffix
        let blockAlign = channels * bytesPerSample
        var format: [UInt8] = []
        format += Self.little(UInt16(floatSamples ? 3 : 1)) + Self.little(UInt16(channels))
        format += Self.little(UInt32(sampleRate)) + Self.little(UInt32(sampleRate * blockAlign))
        format += Self.little(UInt16(blockAlign)) + Self.little(UInt16(bytesPerSample * 8))
        header += Self.chunk("fmt ", format)
        if let bext { header += Self.chunk("bext", bext) }
        markerOffset = header.count
        header += Self.junk(Self.markerRoom)
        dataChunkOffset = header.count
        header += Array("data".utf8) + Self.chunkSuffix + Self.little(UInt64(24))
        let written = header.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == header.count else {
            throw .writeFailed(path: "", reason: written < 0 ? TakeFiles.reason(errno) : "short write")
        }
        try updateHeader(padding: 0)
    }

    deinit { scratch?.deallocate() }

    /// Appends `frames` interleaved frames in `encoding` (f32, s16, or s32 with 24-bit samples
    /// left-justified), packing 24-bit samples to three bytes.
    ///
    /// - Returns: The frames written; fewer on a write error, with `errno` set.
    func write(_ bytes: UnsafeRawPointer, frames: Int, encoding: AudioEncoding) -> Int {
        let samples = frames * channels
        let source: UnsafeRawPointer
        if bytesPerSample == 3 {
            ensureScratch(samples * 3)
            let words = bytes.assumingMemoryBound(to: UInt32.self)
            let packed = scratch!.assumingMemoryBound(to: UInt8.self)
            for index in 0..<samples {
                let word = words[index]
                packed[index * 3] = UInt8(truncatingIfNeeded: word >> 8)
                packed[index * 3 + 1] = UInt8(truncatingIfNeeded: word >> 16)
                packed[index * 3 + 2] = UInt8(truncatingIfNeeded: word >> 24)
            }
            source = UnsafeRawPointer(scratch!)
        } else {
            source = bytes
        }
        let total = samples * bytesPerSample
        var done = 0
        while done < total {
            let count = Glibc.write(descriptor, source + done, total - done)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            done += count
        }
        let whole = done / (channels * bytesPerSample)
        dataBytes += whole * channels * bytesPerSample
        return whole
    }

    /// Rewrites the `riff` and `data` sizes for what is written so far.
    func updateHeader() throws(RecorderError) { try updateHeader(padding: 0) }

    /// `padding`: the bytes that end the file after the audio (only at close).
    private func updateHeader(padding: Int) throws(RecorderError) {
        let dataSize = UInt64(24 + dataBytes)
        let fileSize = UInt64(dataChunkOffset) + dataSize + UInt64(padding)
        guard Self.pwrite(descriptor, Self.little(fileSize), at: 16), Self.pwrite(descriptor, Self.little(dataSize), at: dataChunkOffset + 16)
        else { throw .writeFailed(path: "", reason: TakeFiles.reason(errno)) }
    }

    /// Pads the audio to the 8-byte boundary, writes the markers and the final sizes, and closes
    /// the descriptor.
    ///
    /// - Parameter sync: Whether to sync the markers to the disk before closing (the take's
    ///   `--sync-interval` is on).
    /// - Returns: nil, or why some or all of the markers are not in the file.
    func close(markers: [CueChunks.Point], sync: Bool) -> String? {
        let problem = writeMarkers(markers)
        if sync && !markers.isEmpty { fdatasync(descriptor) }
        close()
        return problem
    }

    /// The markers that fit into the reserved room, written there as `cue ` and `list` chunks
    /// followed by `junk` for the rest.
    private func writeMarkers(_ markers: [CueChunks.Point]) -> String? {
        guard !markers.isEmpty else { return nil }
        var count = markers.count
        var chunks = Self.markerChunks(markers)
        while count > 0 && !Self.fits(chunks.count) {
            count -= 1
            chunks = Self.markerChunks(Array(markers.prefix(count)))
        }
        guard count > 0 else { return "no marker fits the \(Self.markerRoom) bytes W64 reserves for them" }
        let room = chunks + (chunks.count == Self.markerRoom ? [] : Self.junk(Self.markerRoom - chunks.count))
        guard Self.pwrite(descriptor, room, at: markerOffset) else { return TakeFiles.reason(errno) }
        return count == markers.count
            ? nil : "\(markers.count - count) of \(markers.count) markers did not fit the \(Self.markerRoom) bytes W64 reserves for them"
    }

    /// Whether chunks of `bytes` leave room that is empty or can hold a `junk` chunk's header.
    private static func fits(_ bytes: Int) -> Bool { bytes == markerRoom || bytes + 24 <= markerRoom }

    /// The `cue ` and `list` (`adtl`) chunks of `markers`, in W64 form.
    static func markerChunks(_ markers: [CueChunks.Point]) -> [UInt8] {
        guard !markers.isEmpty else { return [] }
        return chunk("cue ", CueChunks.cueBody(markers)) + chunk(listGUID, CueChunks.labelListBody(markers))
    }

    /// Pads the audio to the 8-byte boundary, writes the final sizes and closes the descriptor.
    func close() {
        let padding = (8 - dataBytes % 8) % 8
        if padding > 0 {
            let zeros = [UInt8](repeating: 0, count: padding)
            _ = zeros.withUnsafeBytes { Glibc.pwrite(descriptor, $0.baseAddress, padding, off_t(dataChunkOffset + 24 + dataBytes)) }
        }
        try? updateHeader(padding: padding)
        Glibc.close(descriptor)
    }

    private func ensureScratch(_ bytes: Int) {
        guard bytes > scratchBytes else { return }
        scratch?.deallocate()
        scratch = .allocate(byteCount: bytes, alignment: 16)
        scratchBytes = bytes
    }

    private static func chunk(_ name: String, _ body: [UInt8]) -> [UInt8] { chunk(Array(name.utf8) + chunkSuffix, body) }

    private static func chunk(_ guid: [UInt8], _ body: [UInt8]) -> [UInt8] {
        var bytes = guid + little(UInt64(24 + body.count)) + body
        bytes += [UInt8](repeating: 0, count: (8 - bytes.count % 8) % 8)
        return bytes
    }

    /// A `junk` chunk of `total` bytes, its header included (`total` is a multiple of 8, at least 24).
    private static func junk(_ total: Int) -> [UInt8] {
        Array("junk".utf8) + chunkSuffix + little(UInt64(total)) + [UInt8](repeating: 0, count: total - 24)
    }

    private static func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    private static func pwrite(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBytes { Glibc.pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) } == bytes.count
    }
}
