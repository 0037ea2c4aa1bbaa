// LiveViewSnapshot.swift
//
// The live view's JSON, built on its publisher thread 25 times a second: levels every time,
// the session (ports, pretty-names, connections: JACK calls) once a second.

import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostPlugins

/// Builds the live view's snapshots (one thread only).
package final class LiveViewSnapshotBuilder {
    let sources: LiveViewServer.Sources
    let meter: LevelMeter
    let control: LiveViewControl?
    private var sessionJSON = "null"
    private var nextSession = 0.0
    private var levels: [ChannelLevels] = []
    private var lastCaptured = -1
    private var nextHistory = 0.0

    init(sources: LiveViewServer.Sources, meter: LevelMeter, control: LiveViewControl? = nil) {
        self.sources = sources
        self.meter = meter
        self.control = control
    }

    /// The snapshot: a JSON object without its closing brace (each stream adds its spectrum).
    func build(now: Double) -> String {
        let host = sources.host
        let stats = host.statistics
        // A window with no new cycle would read as silence: keep the previous one instead.
        if stats.capturedFrames != lastCaptured || levels.count != meter.channelCount {
            levels = meter.takeSnapshot()
            lastCaptured = stats.capturedFrames
        }
        if now >= nextSession {
            nextSession = now + 1
            sessionJSON = Self.sessionJSON(host: host, serverName: sources.serverName)
        }
        let rate = host.session?.sampleRate ?? 48000
        var json = "{\"session\":\(sessionJSON)"
        json += ",\"levels\":[" + levels.map(Self.levelJSON).joined(separator: ",") + "]"
        json += ",\"xruns\":\(stats.xruns),\"skipped\":\(stats.timelineGapFrames),\"captured\":\(stats.capturedFrames)"
        json += ",\"seconds\":\(Self.number(Double(stats.capturedFrames) / max(rate, 1), places: 2))"
        json += ",\"consumers\":["
        json += stats.consumers.map {
            "{\"name\":\(Self.string($0.name)),\"index\":\($0.index + 1),\"delivered\":\($0.deliveredFrames),\"dropped\":\($0.droppedFrames),\"abandoned\":\($0.abandonedFrames),\"buffered\":\(Self.number(Double($0.bufferedFrames) / max(rate, 1), places: 3))}"
        }.joined(separator: ",")
        json += "]"
        json += ",\"take\":" + takeJSON(rate: rate)
        json += ",\"results\":[" + sources.results.map(Self.resultJSON).joined(separator: ",") + "]"
        if let control { json += ",\"control\":{\"state\":\(Self.string(control.state))}" }
        json += ",\"alarms\":[" + sources.alarms().map(Self.string).joined(separator: ",") + "]"
        if let loudness = sources.loudness {
            json += ",\"loudness\":[" + loudness.readings.map(Self.loudnessJSON).joined(separator: ",") + "]"
            // The ten-minute history once a second, not 25 times.
            if now >= nextHistory {
                nextHistory = now + 1
                json +=
                    ",\"loudnessHistory\":["
                    + loudness.history.map { "[" + $0.map { Self.number($0 ?? .nan, places: 1) }.joined(separator: ",") + "]" }.joined(separator: ",")
                    + "]"
            }
        }
        return json
    }

    private func takeJSON(rate: Double) -> String {
        guard let recorder = sources.recorder else { return "null" }
        let files = recorder.files
        var size = 0
        for file in files {
            var status = stat()
            if stat(file, &status) == 0 { size += Int(status.st_size) }
        }
        let left = sources.secondsLeft().map { Self.number($0, places: 0) } ?? "null"
        return "{\"name\":\(Self.string(recorder.path)),\"file\":\(Self.string(files.last ?? "")),\"files\":\(files.count),\"bytes\":\(size),"
            + "\"frames\":\(recorder.framesWritten),\"seconds\":\(Self.number(Double(recorder.framesWritten) / max(rate, 1), places: 2)),\"secondsLeft\":\(left),"
            + "\"markers\":\(Self.markersJSON(recorder.markers, rate: rate))}"
    }

    /// The take's markers for the page: how many, and the last ``shownMarkers`` (label, source,
    /// file and the time into that file).
    static func markersJSON(_ markers: [TakeMarker], rate: Double) -> String {
        let last = markers.suffix(shownMarkers).map {
            "{\"label\":\(string($0.label)),\"source\":\(string($0.source)),\"file\":\(string($0.file)),"
                + "\"seconds\":\(number(Double($0.frame) / max(rate, 1), places: 3))}"
        }
        return "{\"count\":\(markers.count),\"last\":[\(last.joined(separator: ","))]}"
    }

    /// Markers the page lists (the newest).
    static let shownMarkers = 10

    /// Server, rate, period, and each input with its pretty-name and connections.
    static func sessionJSON(host: CaptureHost, serverName: String?) -> String {
        guard let session = host.session else { return "null" }
        let inputs = host.inputPortNames.map { port in
            let label = host.prettyName(ofPort: port)
            let sources = host.connections(ofInput: port)
            // A source's pretty-name ("Kick" on system:capture_1) says more than the input's own ("Input 1").
            let sourceLabel = sources.first.flatMap { host.prettyName(ofPort: $0) }
            return "{\"port\":\(string(port)),\"label\":\(string(sourceLabel ?? label ?? port)),\"connections\":["
                + sources.map(string).joined(separator: ",") + "]}"
        }
        return "{\"server\":\(string(serverName ?? "default")),\"rate\":\(Int(session.sampleRate)),\"period\":\(session.bufferSize),"
            + "\"latency\":\(session.inputLatencyFrames),\"inputs\":[\(inputs.joined(separator: ","))]}"
    }

    /// One loudness measurement: LUFS, LU and dBTP with two decimals, null where there is none.
    static func loudnessJSON(_ reading: LoudnessReading) -> String {
        let value = { (reading: Double?) in Self.number(reading ?? .nan, places: 2) }
        return "{\"name\":\(string(reading.name)),\"momentary\":\(value(reading.momentary)),\"shortTerm\":\(value(reading.shortTerm)),"
            + "\"integrated\":\(value(reading.integrated)),\"range\":\(value(reading.range)),\"truePeak\":\(value(reading.truePeak))}"
    }

    /// `[peak dB, rms dB, clips, overall peak dB, overall rms dB]`; silence is null.
    static func levelJSON(_ levels: ChannelLevels) -> String {
        let db = decibelJSON
        return "[\(db(levels.peak)),\(db(levels.rms)),\(levels.clips),\(db(levels.overallPeak)),\(db(levels.overallRMS))]"
    }

    static func resultJSON(_ source: PluginResultSource) -> String {
        let values = source.latest().map { result in
            "{\"name\":\(string(result.name)),\"value\":\(result.value.isFinite ? String(result.value) : "null"),\"text\":\(string(PluginResultSource.format(result.value))),\"unit\":\(string(result.unit))}"
        }
        return "{\"plugin\":\(string(source.plugin)),\"instance\":\(source.instance),\"values\":[\(values.joined(separator: ","))]}"
    }

    /// A linear level in dBFS with two decimals; silence is null.
    static func decibelJSON(_ linear: Float) -> String {
        let value = ChannelLevels.dBFS(linear)
        return value.isFinite ? number(Double(value), places: 2) : "null"
    }

    /// A finite number with up to `places` decimals; null otherwise.
    static func number(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "null" }
        return places == 0 ? String(Int64(value.rounded())) : value.formatted(places: places)
    }

    /// A JSON string literal.
    package static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<": out += "\\u003c"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
