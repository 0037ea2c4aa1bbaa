import FoundationEssentials
import Glibc

/// `--sidecar`: a small JSON file beside each segment (`take.wav.json`) that says when its first
/// sample was captured, on the wall clock and on JACK's frame clock, what was recorded from
/// where, and what was lost. It is written when the segment opens and rewritten, complete, when
/// it closes, each time through a temporary file and `rename`, so it is never half-written.
struct TakeSidecar: Codable {
    /// When the first sample was captured.
    struct FirstSample: Codable {
        /// ISO 8601 local time with microseconds and offset.
        var wallClock: String
        /// Seconds since the epoch.
        var unixTime: Double
        /// JACK's frame time of the sample (wraps at 2^32).
        var jackFrameTime: UInt32
        /// The BWF time reference: samples since local midnight.
        var timeReference: UInt64
    }

    /// A marker of the segment (see ``TakeMarker``).
    struct Marker: Codable, Equatable {
        var label: String
        var source: String
        /// Its frame in the segment's files.
        var frame: Int
        /// ISO 8601 local time of that frame, with microseconds and offset.
        var wallClock: String
        var unixTime: Double
        /// Whether the files carry it in a `cue ` chunk too.
        var inFile: Bool

        init(_ marker: TakeMarker) {
            label = marker.label
            source = marker.source
            frame = marker.frame
            wallClock = TakeSidecar.iso8601(marker.unixTime)
            unixTime = marker.unixTime
            inFile = marker.inFile
        }
    }

    /// Losses inside the segment.
    struct Losses: Codable {
        var xruns: Int
        var droppedFrames: Int
    }

    var files: [String]
    var container: String
    var sampleFormat: String
    var sampleRate: Double
    var channels: Int
    var firstSample: FirstSample
    var frames: Int
    var complete: Bool
    var losses: Losses
    var inputs: [RecorderInput]
    /// With `--keep`: the old segments removed when this one opened (absent without `--keep`).
    var removedByRetention: [String]?
    /// The segment's markers, in order.
    var markers: [Marker] = []
    /// With `--loudness`: this segment's loudness and the take's so far, per measurement.
    var loudness: Loudness?

    /// EBU R128 values of the segment and of the take up to its end.
    struct Loudness: Codable {
        var segment: [SegmentLoudness.Entry]
        var take: [SegmentLoudness.Entry]

        init(_ values: (segment: [SegmentLoudness.Entry], take: [SegmentLoudness.Entry])) {
            segment = values.segment
            take = values.take
        }
    }

    /// `take.wav` → `take.wav.json`.
    static func path(forSegment basePath: String) -> String { basePath + ".json" }

    /// Writes the sidecar atomically.
    ///
    /// - Returns: nil, or the reason it could not be written.
    func write(to path: String) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self) else { return "cannot encode the sidecar" }
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return TakeFiles.reason(errno) }
        let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let error = errno
        close(descriptor)
        guard written == data.count else {
            unlink(temporary)
            return written < 0 ? TakeFiles.reason(error) : "short write"
        }
        guard rename(temporary, path) == 0 else {
            let reason = TakeFiles.reason(errno)
            unlink(temporary)
            return reason
        }
        return nil
    }

    /// `2026-12-01T14:00:00.000000+01:00`.
    static func iso8601(_ time: Double) -> String {
        var seconds = time_t(time.rounded(.down))
        let micros = Int(((time - Double(seconds)) * 1e6).rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let offset = parts.tm_gmtoff
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2)).\(pad(micros, 6))"
            + "\(sign)\(pad(minutes / 60, 2)):\(pad(minutes % 60, 2))"
    }
}
