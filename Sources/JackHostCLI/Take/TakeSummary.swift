import Glibc
import JackHost
import JackHostConsumers

/// The end of a run in words and one exit status: what failed, the meter's and the
/// recorder's summaries, the hooks, the plugins' results, and every loss, each said once.
struct TakeSummary {
    let take: RunningTake
    let ending: TakeEnding

    private var plan: CapturePlan { take.plan }
    private var stats: CaptureStatistics { ending.statistics }
    private var rate: Double { take.host.sampleRateOrDefault }
    /// The largest loss of any consumer (the meter's summary column has room for one number).
    private var dropped: Int { stats.consumers.map(\.droppedFrames).max() ?? 0 }

    /// Prints the summary and returns the run's exit status.
    func report() -> ExitStatus {
        var status = ending.reason.status
        if ending.bypassedInChild { status = Self.worse(status, .pluginFailed) }
        status = reportFailures(status)
        reportTotals()
        reportLosses()
        reportResults()
        if !ending.pluginFailures.isEmpty { status = Self.worse(status, .pluginFailed) }
        if let link = take.link {
            // The child of an isolated plugin: its final count, after the drain, tells the
            // recording exactly how much of the take this plugin took in. The recording reports
            // xruns and skips; say only what this plugin itself lost.
            link.sendProgress(stats.consumers.map(\.deliveredFrames).min() ?? stats.capturedFrames)
            if dropped > 0 { printNote("dropped frames: \(dropped)") }
            return status
        }
        if stats.xruns > 0 || dropped > 0 {
            // Each consumer's own count: two instances of one plugin are told apart by position.
            let perConsumer = stats.consumers.filter { $0.droppedFrames > 0 }
                .map { "\($0.name) #\($0.index + 1) \($0.droppedFrames)" }.joined(separator: ", ")
            printNote("xruns: \(stats.xruns), dropped frames: \(perConsumer.isEmpty ? "0" : perConsumer)")
        }
        return status
    }

    /// `status` unless it is success, else `failure`: the first problem decides.
    private static func worse(_ status: ExitStatus, _ failure: ExitStatus) -> ExitStatus {
        status == .success ? failure : status
    }

    /// Consumers abandoned in their drain, and the recorder's and the stream's failures.
    private func reportFailures(_ status: ExitStatus) -> ExitStatus {
        var status = status
        for line in CaptureReport.abandonment(stats, sampleRate: rate) { printError("warning: \(line)") }
        if stats.consumers.contains(where: { $0.abandonedFrames > 0 || $0.isUnresponsive }) { status = Self.worse(status, .failure) }
        if let failure = take.parts.recorder?.failure {
            if !take.endWatch.reportedRecorderFailure { printError(failure.description) }
            status = Self.worse(status, .failure)
        }
        if let failure = take.parts.stream?.failure {
            printError(failure)
            status = Self.worse(status, .failure)
        }
        return status
    }

    /// The meter's summary, the recorder's notes and its line, and the hooks' line.
    private func reportTotals() {
        if let meter = take.parts.meter, !plan.quiet {
            let counters = MeterDisplay.Counters(droppedFrames: dropped, xruns: stats.xruns, skippedFrames: stats.timelineGapFrames)
            write(MeterDisplay.summary(levels: meter.totals(), counters: counters))
        }
        if let recorder = take.parts.recorder {
            TakeNotesReport.flush(recorder)
            if !plan.quiet { write(recorderLine(recorder)) }
            if let line = Self.markerLine(recorder.markers), !plan.quiet { write(line) }
        }
        if let loudness = take.parts.loudness, !plan.quiet {
            write(loudness.readings.map { "loudness \($0.summaryLine)\n" }.joined())
        }
        if let line = ending.hookCounts.flatMap(HookRunner.summary), !plan.quiet { write(line + "\n") }
        if let remote = take.remote, !plan.quiet { write(remote.summary) }
        if let browser = take.browser, !plan.quiet { write(browser.summary) }
        if let midi = take.midi, !plan.quiet { write(midi.summary) }
        if let alarms = take.alarms, !plan.quiet { write(alarms.summary) }
        if let timer = take.host.callbackTimer {
            writeAll("\(timer.summary) period_us=\(take.host.periodMicroseconds)\n", to: STDERR_FILENO)
        }
    }

    /// "recorded N frames (S s) to FILES; silence inserted …".
    private func recorderLine(_ recorder: Recorder) -> String {
        let seconds = (Double(recorder.framesWritten) / rate).formatted(places: 3)
        let nothing = recorder.trigger == nil ? "no file (nothing was captured)" : "no file (no take was triggered)"
        let files = recorder.files.isEmpty ? nothing : recorder.files.joined(separator: ", ")
        let takes = recorder.trigger == nil ? "" : " in \(recorder.takesStarted) triggered take(s)"
        let peak = stats.consumers.map(\.peakBufferedFrames).max() ?? 0
        let removed = recorder.retention == nil ? "" : "; --keep removed \(recorder.filesRemovedByRetention) old file(s)"
        return
            "recorded \(recorder.framesWritten) frames (\(seconds) s)\(takes) to \(files); silence inserted for \(recorder.silenceFramesInserted) dropped frames; xruns \(stats.xruns); buffer peak \((Double(peak) / rate).formatted(places: 2)) s\(removed)\n"
    }

    /// `markers: 3 (2 in take.wav, 1 in take-0002.wav), in the files' cue chunks and sidecars`; nil for none.
    static func markerLine(_ markers: [TakeMarker]) -> String? {
        guard !markers.isEmpty else { return nil }
        var perFile: [(file: String, count: Int)] = []
        for marker in markers {
            if let index = perFile.firstIndex(where: { $0.file == marker.file }) {
                perFile[index].count += 1
            } else {
                perFile.append((marker.file, 1))
            }
        }
        let files = perFile.map { "\($0.count) in \($0.file)" }.joined(separator: ", ")
        var kept: [String] = []
        let inFiles = markers.filter(\.inFile).count, inSidecars = markers.filter(\.inSidecar).count
        if inFiles > 0 { kept.append(inFiles == markers.count ? "in the files' cue chunks" : "\(inFiles) in cue chunks") }
        if inSidecars > 0 { kept.append(inSidecars == markers.count ? "in the sidecars" : "\(inSidecars) in sidecars") }
        let lost = markers.filter { !$0.inFile && !$0.inSidecar }.count
        if lost > 0 { kept.append("\(lost) in no file (no cue chunk in this container; --sidecar keeps them)") }
        return "markers: \(markers.count) (\(files)), \(kept.joined(separator: ", "))\n"
    }

    /// The server's skips, the plugins' failures, and connections never restored.
    private func reportLosses() {
        if stats.timelineGaps > 0 && take.link == nil {
            printNote(
                "the server's clock skipped this client \(stats.timelineGaps) time(s), \(stats.timelineGapFrames) frames in all (frame time jumped); audio a device captured then never reached jackhost"
            )
        }
        if stats.sourceReturns > 0 {
            printNote(
                "sources came back \(stats.sourceReturns) time(s) after going away, reconnected each time; their inputs recorded \(stats.sourceAbsentFrames) frames of silence in all meanwhile"
            )
        }
        for line in ending.pluginFailures { printError(line) }
        for failure in take.host.connectionFailures.dropFirst(take.failuresAtStart) {
            printError("warning: a connection was not restored: \(failure)")
        }
    }

    /// The plugins' final results, on the report and in `--results FILE` (with the markers not yet
    /// written there), and what `--keep` removed.
    private func reportResults() {
        if take.link == nil && !plan.quiet {
            for line in take.resultSources.compactMap(\.line) { write("results \(line)\n") }
        }
        let seconds = Double(stats.capturedFrames) / rate
        take.resultsFile?.writeNewMarkers(seconds: seconds)
        take.parts.resultsWriter?.write(take.resultSources, seconds: seconds, summary: true)
        if let loudness = take.parts.loudness { take.parts.resultsWriter?.writeLoudness(loudness.readings, seconds: seconds, summary: true) }
        if let recorder = take.parts.recorder, recorder.retention != nil {
            take.parts.resultsWriter?.writeRetention(removed: recorder.filesRemovedByRetention, seconds: seconds)
        }
    }

    private func write(_ text: String) { writeAll(text, to: take.parts.reportDescriptor) }
}
