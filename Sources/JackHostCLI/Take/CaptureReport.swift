import JackHost
import JackHostConsumers

/// The lines a capture session prints about itself, apart from meters: warnings about wiring,
/// progress on SIGUSR1, and what a drain gave up.
enum CaptureReport {
    /// Warnings for a mismatch between the channel count and the sources found.
    static func wiringWarnings(_ wiring: InputWiring, channels: Int?) -> [String] {
        var lines: [String] = []
        if !wiring.unusedSources.isEmpty {
            let number = wiring.unusedSources.count
            lines.append(
                "\(count(number, "matched source")) found no input and \(number == 1 ? "is" : "are") left out: \(list(wiring.unusedSources)); raise --channels to record \(number == 1 ? "it" : "them")"
            )
        }
        if !wiring.silentInputs.isEmpty {
            let asked = channels.map { "--channels \($0) asks for more inputs than there are sources" } ?? "more inputs than sources"
            lines.append(
                "\(asked): \(list(wiring.silentInputs)) \(wiring.silentInputs.count == 1 ? "stays" : "stay") silent until something is connected")
        }
        return lines
    }

    /// One line of progress, for SIGUSR1 (as dd prints on SIGUSR1).
    static func progress(host: CaptureHost, recorder: Recorder?) -> String {
        let stats = host.statistics
        let rate = host.sampleRateOrDefault
        var line =
            "status: \((Double(stats.capturedFrames) / rate).formatted(places: 1)) s captured, xruns \(stats.xruns), dropped frames \(stats.consumers.map(\.droppedFrames).max() ?? 0)"
        if let recorder {
            line += ", \(recorder.framesWritten) frames written to \(recorder.files.last ?? recorder.path)"
        }
        return line
    }

    /// What each consumer's drain gave up, by consumer.
    static func abandonment(_ stats: CaptureStatistics, sampleRate: Double) -> [String] {
        stats.consumers.compactMap { consumer in
            var parts: [String] = []
            if consumer.abandonedFrames > 0 {
                let seconds = (Double(consumer.abandonedFrames) / max(sampleRate, 1)).formatted(places: 3)
                parts.append(
                    "gave up \(consumer.abandonedFrames) frames (\(seconds) s) still queued for consumer \"\(consumer.name)\" (number \(consumer.index + 1)) when its drain ran out of time; it never received them"
                )
            }
            if consumer.isUnresponsive {
                parts.append(
                    "consumer \"\(consumer.name)\" (number \(consumer.index + 1)) did not return from its last block and was left behind without being finished"
                )
            }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
    }

    /// "in_3" or "in_3 … in_1024 (1022 inputs)": long lists stay one readable line.
    /// The summary line of an isolated plugin that failed or fell behind: what happened to it,
    /// and how much of the take its results miss.
    static func isolatedPluginFailure(_ name: String, _ fate: IsolatedPlugin.Fate, takeFrames: Int) -> String {
        var what: [String] = []
        if fate.crashes > 0 { what.append("\(fate.crashes) crash(es) or exit(s)") }
        if fate.hangs > 0 { what.append("\(fate.hangs) hang(s)") }
        if fate.restarts > 0 { what.append("\(fate.restarts) restart(s)") }
        if fate.gaveUp { what.append("given up") }
        if fate.bypassed { what.append("bypassed by its watchdog") }
        if what.isEmpty { what.append("fell behind") }
        let missed =
            fate.missedFrames > 0
            ? "it took in \(max(0, takeFrames - fate.missedFrames)) of the take's \(takeFrames) frames and missed \(fate.missedFrames)"
            : "it missed part of the take"
        return "plugin \(name) (own process): \(what.joined(separator: ", ")); \(missed); its results are partial"
    }

    private static func list(_ names: [String]) -> String {
        if names.count <= 4 { return names.joined(separator: ", ") }
        return "\(names[0]), \(names[1]) … \(names[names.count - 1]) (\(names.count) in all)"
    }

    private static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}

/// Estimates the recording time left on the take's disk and says so once when it runs short
/// (under 10 minutes, and again under 1 minute).
struct DiskSpaceWatch {
    let recorder: Recorder
    let reserve: Int
    private var warnedBelow = Double.infinity
    /// The latest estimate, for the meter.
    private(set) var lastSecondsLeft = Double.infinity

    init(recorder: Recorder, reserve: Int) {
        self.recorder = recorder
        self.reserve = reserve
    }

    /// A warning when a threshold was crossed since the last call, else nil.
    mutating func check(format: StreamFormat) -> String? {
        let channels = max(format.channelCount, 1)
        let bytesPerSecond = format.sampleRate * Double(channels * max(recorder.sampleFormat.bytesPerSample, 2))
        let path = recorder.files.last ?? recorder.path
        guard path != "-", let left = DiskSpace.secondsLeft(atPath: path, bytesPerSecond: bytesPerSecond, reserve: reserve) else {
            return nil
        }
        lastSecondsLeft = left
        for threshold in [600.0, 60.0] where left < threshold && warnedBelow > threshold {
            warnedBelow = threshold
            let free = DiskSpace.freeBytes(atPath: path) ?? 0
            let minutes = (left / 60).formatted(places: 1)
            return "about \(minutes) minutes of recording space left for \(path) (\(DiskSpace.describe(free)) free"
                + (reserve > 0 ? ", \(DiskSpace.describe(reserve)) kept free with --min-free" : "")
                + ", \(DiskSpace.describe(Int(bytesPerSecond)))/s)"
        }
        return nil
    }
}
