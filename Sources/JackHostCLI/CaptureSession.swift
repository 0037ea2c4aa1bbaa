import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostPlugins
import JackHostTesting
import Synchronization

/// Wires a ``CapturePlan`` together: server, host, consumers, the wait, and the report.
final class CaptureSession {
    let plan: CapturePlan

    init(plan: CapturePlan) { self.plan = plan }

    func run() throws -> ExitStatus {
        csignals_install_stop_handlers()
        setenv("JACK_NO_START_SERVER", "1", 1)

        // Plugins load, check their options and create their instances before JACK is touched.
        var plugins: [LoadedPlugin] = []
        for specification in plan.plugins {
            do {
                plugins.append(try LoadedPlugin.load(specification))
            } catch {
                // A missing file or a bad option is the user's mistake (status 2); a broken plugin is a failure (1).
                if error.isUsageError { throw UsageError(error.description) }
                throw error
            }
        }

        // Audio is real or jackhost fails: a private server with test tones runs only when
        // asked for (--embedded-server, as scripts/demo does), never as a fallback.
        let embedded = try EmbeddedServer.startIfRequested(plan.embedded, channels: plan.channels ?? 4)
        defer { embedded?.stop() }
        let serverName = embedded?.server.name ?? plan.server

        // One destination, one writer: when audio goes to stdout, everything for people goes to stderr.
        let reportDescriptor: Int32 = plan.audioOnStandardOutput ? STDERR_FILENO : STDOUT_FILENO

        var connections = plan.connections
        if let embedded {
            // The tones play before the host starts, so its very first cycle already carries them.
            let tone = try embedded.startTones(channels: plan.channels ?? embedded.server.captureChannels)
            if connections == .physicalCapture { connections = .patterns(tone.outputPortNames) }
        }
        var configuration = CaptureHost.Configuration(
            clientName: plan.clientName, serverName: serverName,
            channelCount: plan.channels, connections: connections,
            reconnect: plan.reconnect && embedded == nil,
            measureCallbackTime: plan.callbackTime)
        // The host turns seconds into frames at the sample rate it finds when it connects.
        configuration.durationLimit = plan.duration
        let host = CaptureHost(configuration: configuration)

        let meter = plan.meter ? LevelMeter() : nil
        if let meter { host.add(realtime: meter) }
        let recorder = plan.recordName.map {
            let recorder = Recorder(
                name: $0, container: plan.container, sampleFormat: plan.recordSampleFormat, split: plan.split,
                overwrite: plan.overwrite)
            recorder.syncSeconds = plan.syncSeconds > 0 ? plan.syncSeconds : nil
            recorder.minimumFreeBytes = plan.minimumFreeBytes
            return recorder
        }
        var stream: StreamWriter?
        if plan.stream {
            if let path = plan.streamPath {
                do {
                    // A FIFO waits for its reader here; a stop signal ends the wait.
                    stream = try StreamWriter(
                        path: path, sampleFormat: plan.streamSampleFormat, interleaved: plan.interleaved,
                        overwrite: plan.overwrite, keepWaiting: { csignals_stop_requests() == 0 })
                } catch let error as StreamWriterError {
                    printNote(error.description)
                    return .success
                } catch let error as RecorderError {
                    throw UsageError(error.description)
                }
            } else {
                stream = StreamWriter(descriptor: STDOUT_FILENO, sampleFormat: plan.streamSampleFormat, interleaved: plan.interleaved)
            }
        }
        // Files and streams get an elastic buffer: a 0.5 s real-time ring that a transfer thread
        // empties into memory that grows up to --max-buffer, so a disk or reader that stalls
        // for seconds or minutes loses nothing (jack_capture's buffer grows to 40 s at most).
        if let recorder, let stream, recorder.encoding == stream.encoding {
            // Same samples wanted twice: convert once per cycle and share.
            host.add(deferred: SharedConverter([recorder, stream]), maximumBuffer: plan.maxBuffer)
        } else {
            if let recorder { host.add(deferred: recorder, maximumBuffer: plan.maxBuffer) }
            if let stream { host.add(deferred: stream, maximumBuffer: plan.maxBuffer) }
        }
        for plugin in plugins { host.add(plugin) }

        if csignals_stop_requests() > 0 { return .success }
        try host.start()
        for failure in host.connectionFailures { printError("warning: \(failure)") }
        for warning in CaptureReport.wiringWarnings(host.wiring, channels: plan.channels) { printError("warning: \(warning)") }
        if !plan.quiet, let session = host.session {
            printNote(
                "capturing \(host.inputPortNames.count) channels at \(Int(session.sampleRate)) Hz from server \(serverName.map { "\"\($0)\"" } ?? "(default)")"
            )
        }

        let quiet = plan.quiet
        let reconnecting = configuration.reconnect
        host.onEvent = { event in
            switch event {
            case .serverLost where reconnecting:
                printNote("the JACK server went away; files are finalised; waiting for it to return (Ctrl-C to stop)")
            case .serverRestored: if !quiet { printNote("reconnected to the JACK server; recording continues in a new segment") }
            case .routeChanged(let channels): if !quiet { printNote("the server now reports \(channels) capture channels") }
            default: break
            }
        }
        // --quiet keeps the meter measuring (for --stop-on-xrun and the exit status) but draws nothing.
        let display = plan.quiet ? nil : meter.map { MeterDisplay(meter: $0, output: reportDescriptor, plainInterval: plan.meterInterval) }
        // The main loop estimates the disk's remaining time; the display thread shows it.
        let secondsLeft = Atomic<UInt64>(Double.infinity.bitPattern)
        display?.counters = { [host] in
            let stats = host.statistics
            let rate = host.session?.sampleRate ?? 48000
            let left = Double(bitPattern: secondsLeft.load(ordering: .relaxed))
            return .init(
                droppedFrames: stats.consumers.map(\.droppedFrames).max() ?? 0, xruns: stats.xruns,
                skippedFrames: stats.timelineGapFrames,
                bufferedSeconds: Double(stats.consumers.map(\.bufferedFrames).max() ?? 0) / max(rate, 1),
                recordingSecondsLeft: left.isFinite ? left : nil)
        }
        display?.start()

        var status = ExitStatus.success
        var reportedFailure = false
        var statusRequests = csignals_status_requests()
        var spaceWatch = recorder.map { DiskSpaceWatch(recorder: $0, reserve: plan.minimumFreeBytes ?? 0) }
        var ticks = 0
        while true {
            if csignals_stop_requests() > 0 { break }
            // Once a second: how long the disk lasts at this rate; warn below 10 minutes.
            if ticks % 50 == 0, let format = host.format, spaceWatch != nil {
                if let warning = spaceWatch?.check(format: format) { printError("warning: \(warning)") }
                secondsLeft.store((spaceWatch?.lastSecondsLeft ?? .infinity).bitPattern, ordering: .relaxed)
            }
            ticks &+= 1
            if csignals_status_requests() != statusRequests {
                statusRequests = csignals_status_requests()
                printNote(CaptureReport.progress(host: host, recorder: recorder))
            }
            if host.isComplete { break }
            if host.isServerLost {
                printError(JackError.serverLost(reason: "the server shut down").description)
                status = .serverLost
                break
            }
            if let stream, stream.readerClosed { break }
            if plan.stopOnXrun && host.statistics.xruns > 0 {
                printError("stopped at the first xrun (--stop-on-xrun); the take up to it is kept")
                status = .failure
                break
            }
            if let failure = recorder?.failure, !reportedFailure {
                printError(failure.description)
                reportedFailure = true
                if meter == nil && stream == nil { break }
            }
            usleep(20_000)
        }

        display?.stop()
        // Drain what the consumers still have queued, but within limits: 5 s after a normal end,
        // half a second after a stop signal (every command ends within a second of one), and
        // no longer once another signal arrives.
        let stopsSoFar = csignals_stop_requests()
        host.stop(drainLimit: stopsSoFar > 0 ? 0.5 : nil, abandonWhen: { csignals_stop_requests() > stopsSoFar })
        let stats = host.statistics
        for line in CaptureReport.abandonment(stats, sampleRate: host.session?.sampleRate ?? 48000) { printError("warning: \(line)") }
        if stats.consumers.contains(where: { $0.abandonedFrames > 0 || $0.isUnresponsive }) && status == .success {
            status = .failure
        }

        if let failure = recorder?.failure {
            if !reportedFailure { printError(failure.description) }
            status = status == .success ? .failure : status
        }
        if let failure = stream?.failure {
            printError(failure)
            status = status == .success ? .failure : status
        }
        // The meter's summary column has room for one number: the largest loss of any consumer;
        // the note below names every consumer's own.
        let dropped = stats.consumers.map(\.droppedFrames).max() ?? 0
        if let meter, !plan.quiet {
            write(
                MeterDisplay.summary(
                    levels: meter.totals(),
                    counters: .init(
                        droppedFrames: dropped, xruns: stats.xruns,
                        skippedFrames: stats.timelineGapFrames)),
                to: reportDescriptor)
        }
        if let recorder, !plan.quiet {
            let rate = host.session?.sampleRate ?? 48000
            let seconds = (Double(recorder.framesWritten) / rate).formatted(places: 3)
            let files = recorder.files.isEmpty ? "no file (nothing was captured)" : recorder.files.joined(separator: ", ")
            let peak = stats.consumers.map(\.peakBufferedFrames).max() ?? 0
            write(
                "recorded \(recorder.framesWritten) frames (\(seconds) s) to \(files); silence inserted for \(recorder.silenceFramesInserted) dropped frames; xruns \(stats.xruns); buffer peak \((Double(peak) / rate).formatted(places: 2)) s\n",
                to: reportDescriptor)
        }
        if let timer = host.callbackTimer {
            let period = host.session.map { Int(($0.ioBufferDuration * 1_000_000).rounded()) } ?? 0
            write("\(timer.summary) period_us=\(period)\n", to: STDERR_FILENO)
        }
        if stats.timelineGaps > 0 {
            printNote(
                "the server's clock skipped this client \(stats.timelineGaps) time(s), \(stats.timelineGapFrames) frames in all (frame time jumped); audio a device captured then never reached jackhost"
            )
        }
        if stats.xruns > 0 || dropped > 0 {
            // Each consumer's own count: two instances of one plugin are told apart by position.
            let perConsumer = stats.consumers.filter { $0.droppedFrames > 0 }
                .map { "\($0.name) #\($0.index + 1) \($0.droppedFrames)" }.joined(separator: ", ")
            printNote("xruns: \(stats.xruns), dropped frames: \(perConsumer.isEmpty ? "0" : perConsumer)")
        }
        return status
    }

    private func write(_ text: String, to descriptor: Int32) {
        writeAll(text, to: descriptor)
    }
}
