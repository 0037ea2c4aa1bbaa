import CSndFile
import Glibc

/// The EBU Broadcast Wave (`bext`) metadata of one file: who made it, when its first sample
/// was captured, and where it sits on a DAW's timeline (the time reference, in samples since
/// local midnight).
struct BroadcastWave {
    /// What the file holds, for example "jackhost take: in_1 (system:capture_1)".
    var description: String
    /// The first sample's local date, `YYYY-MM-DD`.
    var originationDate: String
    /// The first sample's local time, `HH:MM:SS`.
    var originationTime: String
    /// Samples since local midnight of the first sample.
    var timeReference: UInt64
    /// The coding history line (EBU R 98): `A=PCM,F=48000,W=24,M=mono,T=jackhost`.
    var codingHistory: String

    /// Metadata for a file whose first sample is at `wallClock` (seconds since the epoch).
    init(description: String, wallClock: Double, timeReference: UInt64, codingHistory: String) {
        self.description = description
        var seconds = time_t(wallClock.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        originationDate = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
        originationTime = "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        self.timeReference = timeReference
        self.codingHistory = codingHistory
    }

    /// The one coding history line (EBU R 98) that is true for a file jackhost writes:
    /// `A=PCM` for integer samples and `A=PCM_FLOAT` for IEEE float (R 98 names no float
    /// coding; libsndfile's own line says `A=PCM,W=24` for float, which is wrong), `F=` the
    /// rate, `W=` the bits per stored sample, `M=` mono, stereo or multi, and `T=jackhost`.
    static func codingHistory(sampleFormat: SampleFormat, sampleRate: Int, channels: Int) -> String {
        let coding = sampleFormat == .float32 ? "PCM_FLOAT" : "PCM"
        let bits: Int
        switch sampleFormat {
        case .int16: bits = 16
        case .int24: bits = 24
        case .float32, .int32, .fixed8_24: bits = 32
        }
        let mode = channels == 1 ? "mono" : channels == 2 ? "stereo" : "multi"
        return "A=\(coding),F=\(sampleRate),W=\(bits),M=\(mode),T=jackhost"
    }

    /// Whether takes in this container carry a `bext` chunk: WAV and RF64 through libsndfile,
    /// W64 through ``Wave64Writer``; CAF, FLAC and the lossy containers have no place for it.
    static func isSupported(by container: AudioContainer) -> Bool {
        container == .wav || container == .rf64 || container == .w64
    }

    /// Sets the chunk on a file opened for writing, before any audio is written.
    ///
    /// libsndfile appends its own coding history line to ours whenever it writes the header;
    /// ``CodingHistoryPatch`` takes it out again once the file is closed.
    ///
    /// - Returns: false when libsndfile refused it.
    func apply(to file: OpaquePointer) -> Bool {
        var info = SF_BROADCAST_INFO()
        fill(&info)
        return sf_command(file, Int32(SFC_SET_BROADCAST_INFO), &info, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE
    }

    private func fill(_ info: inout SF_BROADCAST_INFO) {
        Self.copy(description, into: &info.description)
        Self.copy("jackhost", into: &info.originator)
        Self.copy("jackhost", into: &info.originator_reference)
        Self.copy(originationDate, into: &info.origination_date)
        Self.copy(originationTime, into: &info.origination_time)
        info.time_reference_low = UInt32(truncatingIfNeeded: timeReference)
        info.time_reference_high = UInt32(truncatingIfNeeded: timeReference >> 32)
        info.version = 1
        let history = codingHistory + "\r\n"
        Self.copy(history, into: &info.coding_history)
        info.coding_history_size = UInt32(min(history.utf8.count, 256))
    }

    /// The chunk's body as EBU Tech 3285 lays it out, field by field (602 bytes, then the
    /// coding history), for containers jackhost writes itself (``Wave64Writer``). The C struct
    /// cannot be copied as it is: its compiler pads the time reference to a 4-byte boundary.
    func chunkBody() -> [UInt8] {
        func field(_ text: String, _ size: Int) -> [UInt8] {
            let bytes = text.utf8.prefix(size).map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }
            return bytes + [UInt8](repeating: 0, count: size - bytes.count)
        }
        func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        var body = field(description, 256) + field("jackhost", 32) + field("jackhost", 32)
        body += field(originationDate, 10) + field(originationTime, 8)
        body += little(UInt32(truncatingIfNeeded: timeReference)) + little(UInt32(truncatingIfNeeded: timeReference >> 32))
        body += little(UInt16(1)) + [UInt8](repeating: 0, count: 64)  // version, UMID
        body += [UInt8](repeating: 0, count: 10 + 180)  // loudness fields (unknown: 0), reserved
        return body + Array((codingHistory + "\r\n").utf8.prefix(256))
    }

    /// Copies ASCII text into a fixed C field, truncated to fit (bext fields need no terminator).
    private static func copy<Field>(_ text: String, into field: inout Field) {
        withUnsafeMutableBytes(of: &field) { bytes in
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            for (index, byte) in text.utf8.prefix(bytes.count).enumerated() {
                bytes[index] = byte < 0x80 ? byte : UInt8(ascii: "?")
            }
        }
    }
}
