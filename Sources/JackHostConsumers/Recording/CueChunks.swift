import Glibc

/// Writes a take's markers into a finalised WAV or RF64 file, where DAWs, sound editors and
/// libsndfile (`SFC_GET_CUE`) read them: a `cue ` chunk with one cue point per marker (its
/// sample offset in the `data` chunk) and a `LIST` chunk of type `adtl` with one `labl` per
/// cue point, its name.
///
/// libsndfile takes cue points only before the first sample is written (`SFC_SET_CUE`), and
/// markers arrive while the take records. So once libsndfile has closed the file, the two
/// chunks are appended after everything in it (RIFF allows chunks after `data`; Broadcast Wave
/// recorders put them there) and the file's size is set again: the 32-bit RIFF size at byte 4,
/// or for RF64 the 64-bit RIFF size in the `ds64` chunk. Worker thread only.
enum CueChunks {
    /// One cue point: the frame it marks in the file and its name.
    struct Point: Equatable {
        var frame: UInt32
        var label: String
    }

    /// The `cue ` and `LIST`/`adtl` chunks for `points`, cue point IDs counted from 1.
    static func bytes(_ points: [Point]) -> [UInt8] {
        chunk("cue ", cueBody(points)) + chunk("LIST", labelListBody(points))
    }

    /// The `cue ` chunk's body: the count, then one 24-byte cue point per marker (IDs from 1).
    static func cueBody(_ points: [Point]) -> [UInt8] {
        var cue: [UInt8] = []
        append32(UInt32(points.count), to: &cue)
        for (index, point) in points.enumerated() {
            append32(UInt32(index + 1), to: &cue)
            append32(0, to: &cue)  // play order position
            cue += Array("data".utf8)
            append32(0, to: &cue)  // chunk start: the data chunk itself
            append32(0, to: &cue)  // block start: uncompressed audio
            append32(point.frame, to: &cue)
        }
        return cue
    }

    /// The `LIST` chunk's body: `adtl`, then a `labl` sub-chunk naming each cue point.
    static func labelListBody(_ points: [Point]) -> [UInt8] {
        var labels: [UInt8] = Array("adtl".utf8)
        for (index, point) in points.enumerated() {
            var label: [UInt8] = []
            append32(UInt32(index + 1), to: &label)
            label += Array(sanitized(point.label).utf8) + [0]
            labels += chunk("labl", label)
        }
        return labels
    }

    /// Appends the chunks for `points` to the closed RIFF or RF64 file open on `descriptor` and
    /// sets its size.
    ///
    /// - Returns: nil, or why the file keeps no markers (it is then as libsndfile left it,
    ///   unless the size update itself failed).
    static func append(_ points: [Point], to descriptor: Int32) -> String? {
        guard !points.isEmpty else { return nil }
        var magic = [UInt8](repeating: 0, count: 16)
        guard pread(descriptor, &magic, 16, 0) == 16, Array(magic[8..<12]) == Array("WAVE".utf8) else {
            return "not a RIFF or RF64 WAVE file"
        }
        let isRF64 = Array(magic[0..<4]) == Array("RF64".utf8)
        guard isRF64 || Array(magic[0..<4]) == Array("RIFF".utf8) else { return "not a RIFF or RF64 WAVE file" }
        if isRF64 && Array(magic[12..<16]) != Array("ds64".utf8) { return "an RF64 file without its ds64 chunk" }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return TakeFiles.reason(errno) }
        var end = Int(status.st_size)
        // Chunks start on even offsets: an odd-sized data chunk is followed by a pad byte.
        var tail: [UInt8] = end % 2 == 1 ? [0] : []
        tail += bytes(points)
        let riffSize = end + tail.count - 8
        if !isRF64 && riffSize > Int(UInt32.max) { return "the file is too close to 4 GiB for a RIFF size" }
        let written = tail.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(end)) }
        guard written == tail.count else {
            let reason = written < 0 ? TakeFiles.reason(errno) : "short write"
            _ = ftruncate(descriptor, off_t(end))
            return reason
        }
        end += tail.count
        var size: [UInt8] = []
        if isRF64 { append64(UInt64(riffSize), to: &size) } else { append32(UInt32(riffSize), to: &size) }
        let sizeOffset: off_t = isRF64 ? 20 : 4
        guard size.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, sizeOffset) }) == size.count else {
            return TakeFiles.reason(errno)
        }
        return nil
    }

    /// The label as a cue chunk holds it: no control characters, at most 255 bytes of UTF-8
    /// (cut on a character boundary).
    static func sanitized(_ label: String) -> String {
        var text = String(label.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        while text.utf8.count > 255 { text.removeLast() }
        return text
    }

    private static func chunk(_ name: String, _ body: [UInt8]) -> [UInt8] {
        var bytes = Array(name.utf8)
        append32(UInt32(body.count), to: &bytes)
        bytes += body
        if body.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private static func append64(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
