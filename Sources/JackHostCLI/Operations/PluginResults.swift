import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostLiveView
import JackHostPlugins

/// `--results FILE`: one JSON object per line, once a second while the take runs and once at
/// the end (`"summary": true`), for every plugin that has published something:
///
/// ```
/// {"time":1.000,"plugin":"FrequencyEstimator","instance":1,"results":{"frequency.hz":440.0}}
/// {"summary":true,"time":3.000,"plugin":"FrequencyEstimator","instance":1,"results":{"frequency.hz":440.0}}
/// ```
///
/// With `--keep`, a last line counts the old segments retention removed (see ``writeRetention(removed:seconds:)``).
/// Each marker placed in the take is a line too, once (see ``writeMarker(_:seconds:)``).
final class PluginResultsWriter {
    private let descriptor: Int32
    let path: String

    /// Creates the file; an existing one is refused unless `overwrite` (the rule for every output).
    init(path: String, overwrite: Bool) throws(UsageError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL)
        let descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "it exists; pass --overwrite to replace it" : String(cString: strerror(errno))
            throw UsageError("cannot write --results \(ValueParsing.shown(path)): \(reason)")
        }
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Appends one line per source that has values.
    func write(_ sources: [PluginResultSource], seconds: Double, summary: Bool) {
        for source in sources {
            let results = source.latest()
            guard !results.isEmpty else { continue }
            let values = results.map { "\(Self.jsonString($0.name)):\(Self.jsonNumber($0.value))" }.joined(separator: ",")
            let missed = source.missedFrames()
            let partial = missed > 0 ? ",\"partial\":true,\"missedFrames\":\(missed)" : ""
            let line =
                "{\(summary ? "\"summary\":true," : "")\"time\":\(seconds.formatted(places: 3)),\"plugin\":\(Self.jsonString(source.plugin)),\"instance\":\(source.instance)\(partial),\"results\":{\(values)}}\n"
            _ = writeAll(line, to: descriptor)
        }
    }

    /// Appends one line per loudness measurement (`--loudness`), values in LUFS, LU and dBTP,
    /// null where there is none yet:
    /// `{"time":1.000,"loudness":{"name":"1-2","momentary":-23.0,"shortTerm":-23.0,"integrated":-23.0,"range":0.0,"truePeak":-23.0}}`.
    func writeLoudness(_ readings: [LoudnessReading], seconds: Double, summary: Bool) {
        for reading in readings {
            let values = [
                ("momentary", reading.momentary), ("shortTerm", reading.shortTerm), ("integrated", reading.integrated),
                ("range", reading.range), ("truePeak", reading.truePeak),
            ].map { "\"\($0.0)\":\(Self.jsonNumber($0.1 ?? .nan))" }.joined(separator: ",")
            let line =
                "{\(summary ? "\"summary\":true," : "")\"time\":\(seconds.formatted(places: 3)),\"loudness\":{\"name\":\(Self.jsonString(reading.name)),\(values)}}\n"
            _ = writeAll(line, to: descriptor)
        }
    }

    /// Appends the take's retention line at the end, with `--keep`:
    /// `{"summary":true,"time":3.000,"retention":{"removed":2}}`.
    func writeRetention(removed: Int, seconds: Double) {
        _ = writeAll("{\"summary\":true,\"time\":\(seconds.formatted(places: 3)),\"retention\":{\"removed\":\(removed)}}\n", to: descriptor)
    }

    /// Appends one marker placed in the take:
    /// `{"time":2.000,"marker":{"label":"cough","source":"OSC","file":"take.wav","frame":48000,"unixTime":…}}`.
    func writeMarker(_ marker: TakeMarker, seconds: Double) {
        let fields =
            "\"label\":\(Self.jsonString(marker.label)),\"source\":\(Self.jsonString(marker.source)),\"file\":\(Self.jsonString(marker.file)),"
            + "\"frame\":\(marker.frame),\"unixTime\":\(marker.unixTime.formatted(places: 6)),\"inFile\":\(marker.inFile)"
        _ = writeAll("{\"time\":\(seconds.formatted(places: 3)),\"marker\":{\(fields)}}\n", to: descriptor)
    }

    /// A JSON string literal (one escaper for every JSON jackhost writes: ``LiveViewSnapshotBuilder/string(_:)``).
    static func jsonString(_ text: String) -> String { LiveViewSnapshotBuilder.string(text) }

    /// JSON has no NaN or infinity: those are written as null.
    static func jsonNumber(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "null"
    }
}
