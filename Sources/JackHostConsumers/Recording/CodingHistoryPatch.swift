import Glibc

/// Makes a finalised WAV or RF64 take's `bext` coding history the one line jackhost means.
///
/// libsndfile appends a line of its own to the coding history it is given, every time it
/// writes the header (`A=PCM,…,W=24,…,T=libsndfile-…`, false for a float take), and rewrites
/// the header at every `SFC_UPDATE_HEADER_NOW` and at `sf_close`. So once libsndfile has closed
/// the file, its `bext` chunk is found by walking the RIFF or RF64 chunks, and the coding history
/// area (from byte 602 of the chunk's body to its end) is overwritten in place with jackhost's
/// line, CR LF, and NULs. The chunk keeps its size; nothing else in the file moves.
enum CodingHistoryPatch {
    /// Where the fixed fields of a `bext` body end and the coding history begins (EBU Tech 3285).
    static let historyOffset = 602
    /// How many chunks are looked at before giving up (a take has four or five).
    static let chunkLimit = 64

    /// Replaces the coding history in the file open on `descriptor` with `line`, and with
    /// `sync` (the take's `--sync-interval` is not 0) syncs it.
    ///
    /// - Returns: false when the file has no `bext` chunk before its audio, or a read, write or
    ///   sync failed (the file is then as libsndfile left it, or as far as the write got).
    @discardableResult
    static func apply(_ line: String, to descriptor: Int32, sync: Bool) -> Bool {
        guard let area = historyArea(in: descriptor) else { return false }
        let bytes = historyBytes(line, size: area.size)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(area.offset)) }
        guard written == bytes.count else { return false }
        return !sync || fdatasync(descriptor) == 0
    }

    /// `line` and CR LF as ASCII (other bytes become `?`), cut to `size`, NUL-filled to `size`.
    static func historyBytes(_ line: String, size: Int) -> [UInt8] {
        let text = (line + "\r\n").utf8.prefix(size).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }
        return text + [UInt8](repeating: 0, count: size - text.count)
    }

    /// The file offset and size of the coding history area of the `bext` chunk of a RIFF or
    /// RF64 file, or nil when none comes before `data` (libsndfile writes `bext` before it).
    static func historyArea(in descriptor: Int32) -> (offset: Int64, size: Int)? {
        guard let header = read(12, at: 0, from: descriptor),
            ["RIFF", "RF64"].contains(text(header[0..<4])), text(header[8..<12]) == "WAVE"
        else { return nil }
        var offset: Int64 = 12
        for _ in 0..<chunkLimit {
            guard let chunk = read(8, at: offset, from: descriptor) else { return nil }
            let id = text(chunk[0..<4])
            let size = Int64(littleEndian32(chunk[4..<8]))
            if id == "bext" {
                guard size >= historyOffset else { return nil }
                return (offset + 8 + Int64(historyOffset), Int(size) - historyOffset)
            }
            if id == "data" { return nil }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    /// `count` bytes at `offset`, or nil on a short read.
    private static func read(_ count: Int, at offset: Int64, from descriptor: Int32) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    /// A chunk identifier as text.
    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A little-endian 32-bit size.
    private static func littleEndian32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
