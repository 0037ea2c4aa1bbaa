import CPosix
import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostLiveView
import JackHostPlugins
import JackHostSignals
import Synchronization

/// Wires a ``CapturePlan`` together: server, host, consumers, the wait, and the report.
final class CaptureSession {
    let plan: CapturePlan

    init(plan: CapturePlan) { self.plan = plan }

    func run() throws -> ExitStatus {
        csignals_install_stop_handlers()
        setenv("JACK_NO_START_SERVER", "1", 1)
        // Under systemd (Type=notify): read and unset NOTIFY_SOCKET before any thread or child starts.
        let notifier = SystemdNotifier.fromEnvironment()

        // Plugins load, check their options and create their instances before JACK is touched
        // (isolated ones do that in their own processes).
        let link = plan.supervisorDescriptor.map(SupervisorLink.init)
        if link != nil, let path = plan.plugins.first?.path {
            messagePrefix.withLock { $0 = "jackhost: plugin \(IsolatedPlugin.displayName(path: path)): " }
        }
        // A plugin's log lines (ABI 2) are jackhost's lines, naming the plugin (the child of an
        // isolated plugin already names it in every line).
        let isChild = link != nil
        LoadedPlugin.setLogHandler { plugin, level, message in
            printError(isChild ? "\(level.prefix)\(message)" : "plugin \(plugin): \(level.prefix)\(message)")
        }
        let resultsWriter = try plan.resultsPath.map { path throws(UsageError) in try PluginResultsWriter(path: path, overwrite: plan.overwrite) }
        var plugins: [LoadedPlugin] = []
        var shapes: [BlockShape] = []
        for specification in plan.pluginIsolation == .none ? plan.plugins : [] {
            do {
                // The host's own keys (block-frames, sample-rate, channels) come off first,
                // unless the plugin declares options of those names.
                let library = try PluginLibrary.open(path: specification.path)
                let (own, shape) = try PluginShaping.split(specification, declared: library.options.map(\.name))
                plugins.append(try LoadedPlugin(library: library, options: own.options))
                shapes.append(shape)
            } catch let error as UsageError {
                throw error
            } catch let error as PluginError {
                // A missing file or a bad option is the user's mistake (status 2); a broken plugin is a failure (1).
                if error.isUsageError { throw UsageError(error.description) }
                throw error
            }
        }

        // --http listens before JACK is touched, so a port in use fails first.
        let liveView = try plan.http.map { settings throws(LiveViewError) in try LiveViewServer(settings: settings) }
        defer { liveView?.stop() }

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
        if let notifier { host.add(realtime: notifier.meter) }
        // The live view's own meter (atomics, like the terminal's) and its spectrum (a worker thread).
        if let liveView {
            host.add(realtime: liveView.meter)
            host.add(deferred: liveView.spectrum)
        }
        // Hooks run on a thread of their own: the recorder's writer thread only queues its events.
        let hooks = plan.hooks.isEmpty ? nil : HookRunner(hooks: plan.hooks)
        let recorder = plan.recordName.map {
            let recorder = Recorder(
                name: $0, container: plan.container, sampleFormat: plan.recordSampleFormat, split: plan.split,
                overwrite: plan.overwrite)
            recorder.syncSeconds = plan.syncSeconds > 0 ? plan.syncSeconds : nil
            recorder.minimumFreeBytes = plan.minimumFreeBytes
            plan.takeOptions.apply(to: recorder, host: host, name: $0)
            if let hooks { recorder.onFileEvent = { hooks.handle($0) } }
            recorder.quality = plan.quality
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
        for (plugin, shape) in zip(plugins, shapes) { try PluginShaping.add(plugin, to: host, userShape: shape) }

        // Isolated plugins start first, as their own clients on the same sources, so they hear
        // what the take hears from its first frame.
        var isolated: [IsolatedPlugin] = []
        defer { for plugin in isolated { _ = plugin.stop() } }
        if plan.pluginIsolation == .process {
            var childArguments: [String] = serverName.map { ["--server", $0] } ?? []
            if case .patterns(let patterns) = connections { childArguments += patterns.flatMap { ["--connect", $0] } }
            if let channels = plan.channels { childArguments += ["--channels", String(channels)] }
            childArguments.append(configuration.reconnect ? "--reconnect" : "--no-reconnect")
            var names: Set<String> = []
            for (text, specification) in zip(plan.pluginTexts, plan.plugins) {
                let stem = IsolatedPlugin.displayName(path: specification.path)
                var name = String("\(plan.clientName)-\(stem)".utf8.prefix(56)) ?? plan.clientName
                if names.contains(name) { name += "-\(names.count + 1)" }
                names.insert(name)
                let plugin = IsolatedPlugin(
                    specification: text, path: specification.path, clientName: name, childArguments: childArguments,
                    standardOutput: reportDescriptor,
                    recordingFrames: { [host] in host.statistics.capturedFrames },
                    sampleRate: { [host] in host.session?.sampleRate ?? 48000 })
                if case .failed(let status) = plugin.start() {
                    return ExitStatus(rawValue: status) ?? .failure
                }
                isolated.append(plugin)
            }
        }

        // Every plugin's results, wherever it runs, in --plugin order.
        let resultSources =
            plugins.enumerated().map { index, plugin in
                PluginResultSource(plugin: plugin.name, instance: index + 1, latest: { plugin.latestResults() })
            }
            + isolated.enumerated().map { index, plugin in
                PluginResultSource(
                    plugin: plugin.displayName, instance: index + 1, latest: { plugin.latestResults() },
                    missedFrames: { plugin.resultsArePartial ? max(plugin.missedFrames, 1) : 0 })
            }

        if csignals_stop_requests() > 0 {
            printNote("stopped by \(Self.signalName(csignals_last_signal())) before the take started; nothing was recorded")
            return .success
        }
        do {
            try host.start()
        } catch CaptureHostError.consumerRejectedFormat(let consumer, let reason) where consumer == recorder?.consumerName {
            // Found before activation: the take's container cannot hold the channels or the
            // sample rate the server delivers (FLAC's 8 channels, Opus's rates), the user's choice to change.
            throw UsageError(reason)
        }
        if let recorder { try decideChannelFiles(of: recorder, host: host) }
        link?.sendReady(pluginName: plugins.first?.name ?? "")
        // Failures after this point (restores after a server restart or a source that did not
        // come back in time) are reported with the summary: nothing is lost silently.
        let failuresAtStart = host.connectionFailures.count
        for failure in host.connectionFailures { printError("warning: \(failure)") }
        for warning in CaptureReport.wiringWarnings(host.wiring, channels: plan.channels) { printError("warning: \(warning)") }
        if !plan.quiet, let session = host.session {
            printNote(
                "capturing \(host.inputPortNames.count) channels at \(Int(session.sampleRate)) Hz from server \(serverName.map { "\"\($0)\"" } ?? "(default)")"
            )
        }

        let quiet = plan.quiet
        let waitingForServer = AtomicFlag()
        let reconnecting = configuration.reconnect
        host.onEvent = { event in
            switch event {
            case .serverLost where reconnecting:
                waitingForServer.value.store(true, ordering: .relaxed)
                printNote("the JACK server went away; files are finalised; waiting for it to return (Ctrl-C to stop)")
            case .serverRestored:
                waitingForServer.value.store(false, ordering: .relaxed)
                if !quiet { printNote("reconnected to the JACK server; recording continues in a new segment") }
            case .routeChanged(let channels): if !quiet { printNote("the server now reports \(channels) capture channels") }
            default: break
            }
        }
        notifier?.readProgress = { [host] in
            let stats = host.statistics
            return .init(
                capturedFrames: stats.capturedFrames, recordedFrames: recorder?.framesWritten, sampleRate: host.session?.sampleRate ?? 48000,
                xruns: stats.xruns, droppedFrames: stats.consumers.map(\.droppedFrames).max() ?? 0,
                isWaitingForServer: waitingForServer.value.load(ordering: .relaxed))
        }
        notifier?.ready()
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
                recordingSecondsLeft: left.isFinite ? left : nil,
                resultLines: resultSources.compactMap(\.line))
        }
        display?.start()
        if let liveView {
            try liveView.start(
                sources: .init(
                    host: host, recorder: recorder, serverName: serverName,
                    secondsLeft: {
                        let left = Double(bitPattern: secondsLeft.load(ordering: .relaxed))
                        return left.isFinite ? left : nil
                    }, results: resultSources))
            if !plan.quiet { printNote("live view at \(liveView.url)") }
        }

        var status = ExitStatus.success
        var reportedFailure = false
        // Counted from the start of the process (main installs the handlers first), so a
        // SIGUSR1 or SIGUSR2 sent while jackhost was still connecting acts now.
        var statusRequests: Int32 = 0
        var takeStopRequests: Int32 = 0
        var spaceWatch = recorder.map { DiskSpaceWatch(recorder: $0, reserve: plan.minimumFreeBytes ?? 0) }
        var ticks = 0
        var bypassReported = Set<Int>()
        // --duration is wall-clock-true: if cycles arrive late (an overrunning plugin in this
        // process), the take still ends on time, and the frames it never got are counted.
        var connectedSeconds = 0.0
        var lastTick = monotonicSeconds()
        while true {
            if csignals_stop_requests() > 0 { break }
            if let link {
                if link.isClosed { break }
                if ticks % 10 == 0 {
                    let stats = host.statistics
                    link.sendProgress(stats.consumers.map(\.deliveredFrames).min() ?? stats.capturedFrames)
                    for plugin in plugins { link.sendResults(plugin.latestResults()) }
                }
            }
            for (index, plugin) in plugins.enumerated() where !bypassReported.contains(index) {
                if let watchdog = plugin.watchdog, watchdog.isBypassed.load(ordering: .acquiring) {
                    bypassReported.insert(index)
                    // In an isolated plugin's process, every line already names the plugin.
                    printError(link == nil ? "plugin \(plugin.name) \(watchdog.bypassDescription)" : watchdog.bypassDescription)
                }
            }
            let now = monotonicSeconds()
            if !waitingForServer.value.load(ordering: .relaxed) { connectedSeconds += now - lastTick }
            lastTick = now
            if let duration = plan.duration, connectedSeconds > duration + Self.durationGrace, !host.isComplete {
                let rate = host.session?.sampleRate ?? 48000
                let short = max(0, Int((duration * rate).rounded()) - host.statistics.capturedFrames)
                printError(
                    "the take ended by the clock: --duration \(duration.formatted(places: 3)) s passed, but cycles arrived late and \(short) frames never did (counted as skipped)"
                )
                status = .failure
                break
            }
            // Once a second: how long the disk lasts at this rate; warn below 10 minutes.
            if ticks % 50 == 0, let format = host.format, spaceWatch != nil {
                if let warning = spaceWatch?.check(format: format) { printError("warning: \(warning)") }
                secondsLeft.store((spaceWatch?.lastSecondsLeft ?? .infinity).bitPattern, ordering: .relaxed)
            }
            ticks &+= 1
            if let resultsWriter, ticks % 50 == 0 {
                resultsWriter.write(
                    resultSources, seconds: Double(host.statistics.capturedFrames) / (host.session?.sampleRate ?? 48000), summary: false)
            }
            if csignals_status_requests() != statusRequests {
                statusRequests = csignals_status_requests()
                if let recorder, plan.takeOptions.trigger == .request {
                    recorder.requestTakeStart()
                } else {
                    printNote(CaptureReport.progress(host: host, recorder: recorder))
                }
            }
            if csignals_take_stop_requests() != takeStopRequests {
                takeStopRequests = csignals_take_stop_requests()
                if let recorder, plan.takeOptions.trigger == .request {
                    recorder.requestTakeStop()
                } else {
                    printNote("SIGUSR2 ignored: it ends a take only with record --signal-trigger")
                }
            }
            if let recorder, ticks % 50 == 0 {
                for note in recorder.takeNotes() { printError("warning: \(note)") }
                for line in recorder.takeRemovals() { printNote(line) }
            }
            if host.isComplete { break }
            if host.isServerLost {
                printError(JackError.serverLost(reason: "the server shut down").description)
                status = .serverLost
                break
            }
            if let stream, stream.readerClosed {
                printError("the stream's reader went away (a closed pipe); the stream ended after \(stream.framesWritten) frames")
                status = .failure
                break
            }
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
            notifier?.tick()
            usleep(20_000)
        }
        notifier?.stopping()
        if let name = Self.unusualStopSignal(csignals_last_signal()), !quiet {
            printNote("\(name) received: the take is finalised and jackhost stops, as for SIGTERM")
        }

        display?.stop()
        liveView?.stop()
        // Drain what the consumers still have queued, but within limits: 5 s after a normal end,
        // half a second after a stop signal (every command ends within a second of one), and
        // no longer once another signal arrives.
        let stopsSoFar = csignals_stop_requests()
        host.stop(drainLimit: stopsSoFar > 0 ? 0.5 : nil, abandonWhen: { csignals_stop_requests() > stopsSoFar })
        let stats = host.statistics
        // The plugins' fates: isolated ones end normally now (they drain and finish), and any
        // that crashed, hung or were bypassed make the status 4 once the take itself is fine.
        var pluginFailures: [String] = []
        for plugin in isolated {
            let fate = plugin.stop(signalled: stopsSoFar > 0, takeFrames: stats.capturedFrames)
            if fate.failed { pluginFailures.append(CaptureReport.isolatedPluginFailure(plugin.displayName, fate, takeFrames: stats.capturedFrames)) }
        }
        isolated = []
        // The hooks of the files just finalised: a bounded wait, cut short by another signal;
        // a hook still running is left running.
        let hookCounts = hooks?.finish(
            timeout: HookRunner.exitWait, abandonWhen: { csignals_stop_requests() > stopsSoFar },
            waiting: { if !quiet { printNote("waiting up to \(Int(HookRunner.exitWait)) s for hooks to finish (Ctrl-C leaves them running)") } })
        for plugin in plugins {
            if let watchdog = plugin.watchdog, watchdog.isBypassed.load(ordering: .acquiring) {
                // Said when it happened; the child of an isolated plugin only sets its status.
                if link != nil {
                    status = status == .success ? .pluginFailed : status
                    continue
                }
                pluginFailures.append("plugin \(plugin.name) was bypassed: \(watchdog.bypassDescription)")
            }
        }
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
        if let recorder {
            for note in recorder.takeNotes() { printError("warning: \(note)") }
            for line in recorder.takeRemovals() { printNote(line) }
        }
        if let recorder, !plan.quiet {
            let rate = host.session?.sampleRate ?? 48000
            let seconds = (Double(recorder.framesWritten) / rate).formatted(places: 3)
            let nothing = recorder.trigger == nil ? "no file (nothing was captured)" : "no file (no take was triggered)"
            let files = recorder.files.isEmpty ? nothing : recorder.files.joined(separator: ", ")
            let takes = recorder.trigger == nil ? "" : " in \(recorder.takesStarted) triggered take(s)"
            let peak = stats.consumers.map(\.peakBufferedFrames).max() ?? 0
            let removed = recorder.retention == nil ? "" : "; --keep removed \(recorder.filesRemovedByRetention) old file(s)"
            write(
                "recorded \(recorder.framesWritten) frames (\(seconds) s)\(takes) to \(files); silence inserted for \(recorder.silenceFramesInserted) dropped frames; xruns \(stats.xruns); buffer peak \((Double(peak) / rate).formatted(places: 2)) s\(removed)\n",
                to: reportDescriptor)
        }
        if let line = hookCounts.flatMap(HookRunner.summary), !plan.quiet { write(line + "\n", to: reportDescriptor) }
        if let timer = host.callbackTimer {
            let period = host.session.map { Int(($0.ioBufferDuration * 1_000_000).rounded()) } ?? 0
            write("\(timer.summary) period_us=\(period)\n", to: STDERR_FILENO)
        }
        if stats.timelineGaps > 0 && link == nil {
            printNote(
                "the server's clock skipped this client \(stats.timelineGaps) time(s), \(stats.timelineGapFrames) frames in all (frame time jumped); audio a device captured then never reached jackhost"
            )
        }
        for line in pluginFailures { printError(line) }
        for failure in host.connectionFailures.dropFirst(failuresAtStart) {
            printError("warning: a connection was not restored: \(failure)")
        }
        if link == nil && !plan.quiet {
            for line in resultSources.compactMap(\.line) { write("results \(line)\n", to: reportDescriptor) }
        }
        resultsWriter?.write(resultSources, seconds: Double(stats.capturedFrames) / (host.session?.sampleRate ?? 48000), summary: true)
        if let recorder, recorder.retention != nil {
            resultsWriter?.writeRetention(
                removed: recorder.filesRemovedByRetention, seconds: Double(stats.capturedFrames) / (host.session?.sampleRate ?? 48000))
        }
        if !pluginFailures.isEmpty && status == .success { status = .pluginFailed }
        if let link {
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

    /// With `--channel-files`: decides every file's name once the inputs are wired, prints them
    /// with the rule that named each, and checks exactly those names for overwrites before the
    /// recorder creates any file (a collision is status 2, and no file is made).
    private func decideChannelFiles(of recorder: Recorder, host: CaptureHost) throws {
        guard let channelPlan = recorder.channelPlan else { return }
        let choices = ChannelFileNaming.decide(host: host, given: channelPlan.given)
        let names = choices.map(\.name)
        do {
            if let given = channelPlan.given, given.count != names.count {
                throw UsageError("--channel-names gives \(given.count) names for \(names.count) inputs; give one name per input")
            }
            do { try recorder.validateChannelFiles(names) } catch { throw UsageError(error.description) }
        } catch {
            channelPlan.refuse()
            host.stop(drainLimit: 0)
            throw error
        }
        channelPlan.settle(names)
        guard !plan.quiet else { return }
        let files = TakeFiles.channelFileNames(names)
        for (index, choice) in choices.enumerated() {
            printNote("channel file \(index + 1): \(TakeFiles.channelPath(recorder.path, channel: files[index])) (\(choice.rule))")
        }
    }

    /// `SIGTERM` for 15: the name every line about a signal uses.
    static func signalName(_ number: Int32) -> String {
        guard number > 0, let abbreviation = cposix_signal_abbreviation(number) else { return "signal \(number)" }
        return "SIG" + String(cString: abbreviation)
    }

    /// The name of a stop signal that people do not send to end a program (anything but
    /// SIGINT, SIGTERM and SIGHUP), so that the take's end is explained; nil for those three.
    static func unusualStopSignal(_ number: Int32) -> String? {
        guard number > 0, ![SIGINT, SIGTERM, SIGHUP].contains(number) else { return nil }
        return signalName(number)
    }

    /// How long past `--duration` (in connected wall-clock time) a take may run before it is
    /// ended by the clock: room for startup and a few late cycles, not for a stalled one.
    static let durationGrace = 2.0

    private func write(_ text: String, to descriptor: Int32) {
        writeAll(text, to: descriptor)
    }
}

/// A flag shared with a callback.
private final class AtomicFlag: Sendable {
    let value = Atomic<Bool>(false)
}
