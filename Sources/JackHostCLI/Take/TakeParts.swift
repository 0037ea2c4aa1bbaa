import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostLiveView
import JackHostPlugins
import JackHostSignals

/// Everything a run is made of, assembled from a ``CapturePlan`` before JACK is touched, in
/// the order failures should surface: plugins and their options, the results file, the OSC
/// and live view's ports, a private server if asked for, then the host and its consumers.
///
/// Built and torn down on the main thread; ``RunningTake`` takes it over once the host runs.
final class TakeParts {
    let plan: CapturePlan
    let host: CaptureHost
    let configuration: CaptureHost.Configuration
    /// The server jackhost uses: the private one with `--embedded-server`, else the plan's.
    let serverName: String?
    /// When audio goes to stdout, everything for people goes to stderr.
    let reportDescriptor: Int32
    let notifier: SystemdNotifier?
    let meter: LevelMeter?
    /// `--loudness`: EBU R128 per input and programme, on a worker thread.
    let loudness: LoudnessMeter?
    /// `--silence`, `--clip`: dead-air and clip alarms, on a worker thread.
    let alarmWatch: AlarmWatch?
    let recorder: Recorder?
    let hooks: HookRunner?
    let plugins: [LoadedPlugin]
    let resultsWriter: PluginResultsWriter?
    let liveView: LiveViewServer?
    /// The `--osc` socket, bound during assembly.
    let osc: OSCSocket?
    /// The meter `/jackhost/subscribe` reads (with `--osc`): its own, so that its windows are not
    /// the terminal meter's.
    let oscMeter: LevelMeter?
    private let embedded: EmbeddedServer?
    private(set) var stream: StreamWriter?
    private(set) var isolated: [IsolatedPlugin] = []
    private let shapes: [BlockShape]

    init(plan: CapturePlan, notifier: SystemdNotifier?) throws {
        self.plan = plan
        self.notifier = notifier
        resultsWriter = try plan.resultsPath.map { path throws(UsageError) in try PluginResultsWriter(path: path, overwrite: plan.overwrite) }
        (plugins, shapes) = try Self.loadPlugins(plan)
        // --osc and --http listen before JACK is touched, so a port in use fails first.
        osc = try plan.osc.map { settings throws(OSCError) in try OSCSocket(settings: settings) }
        // Paused until someone subscribes (OSCSource): unused, it costs a load a cycle.
        oscMeter = osc == nil ? nil : LevelMeter(paused: true)
        liveView = try plan.http.map { settings throws(LiveViewError) in try LiveViewServer(settings: settings) }
        // Audio is real or jackhost fails: a private server with test tones runs only when
        // asked for (--embedded-server, as scripts/demo does), never as a fallback.
        let embedded: EmbeddedServer?
        do { embedded = try EmbeddedServer.startIfRequested(plan.embedded, channels: plan.channels ?? 4) } catch {
            liveView?.stop()
            throw error
        }
        self.embedded = embedded
        serverName = embedded?.server.name ?? plan.server
        reportDescriptor = plan.audioOnStandardOutput ? STDERR_FILENO : STDOUT_FILENO
        var connections = plan.connections
        if let embedded {
            // The tones play before the host starts, so its very first cycle already carries them.
            let tone = try embedded.startTones(channels: plan.channels ?? embedded.server.captureChannels)
            if connections == .physicalCapture { connections = .patterns(tone.outputPortNames) }
        }
        configuration = Self.configuration(plan, serverName: serverName, connections: connections, embedded: embedded != nil)
        host = CaptureHost(configuration: configuration)
        meter = plan.meter ? LevelMeter() : nil
        loudness = plan.loudness.map { LoudnessMeter(programmes: $0.programmes) }
        alarmWatch = plan.alarms.map { AlarmWatch(rules: $0.rules, programmes: plan.loudness?.programmes ?? []) }
        // Hooks run on a thread of their own: the recorder's writer thread only queues its events.
        hooks = plan.hooks.isEmpty ? nil : HookRunner(hooks: plan.hooks)
        recorder = plan.recordName.map { [host, hooks] in TakeParts.recorder(plan, name: $0, host: host, hooks: hooks) }
    }

    /// Stops what outlives a failed start or a finished run: isolated plugins, the live view,
    /// the private server. Safe to call twice.
    func tearDown() {
        for plugin in isolated { _ = plugin.stop() }
        isolated = []
        liveView?.stop()
        embedded?.stop()
    }

    /// The host's settings; it turns `--duration` into frames at the rate it finds.
    private static func configuration(
        _ plan: CapturePlan, serverName: String?, connections: CaptureHost.Connections, embedded: Bool
    ) -> CaptureHost.Configuration {
        var configuration = CaptureHost.Configuration(
            clientName: plan.clientName, serverName: serverName,
            channelCount: plan.channels, connections: connections,
            reconnect: plan.reconnect && !embedded,
            measureCallbackTime: plan.callbackTime)
        configuration.durationLimit = plan.duration
        // Transport is read only for a take it starts, and for plugins, which may look at it.
        configuration.readsTransport = plan.takeOptions.trigger == .transport || !plan.plugins.isEmpty
        configuration.controlInput = plan.midiControl != nil
        return configuration
    }

    /// In-process plugins load, check their options and create their instances now; isolated
    /// ones do that in their own processes (``startIsolatedPlugins()``).
    private static func loadPlugins(_ plan: CapturePlan) throws -> ([LoadedPlugin], [BlockShape]) {
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
            } catch let error as PluginError {
                // A missing file or a bad option is the user's mistake (status 2); a broken plugin is a failure (1).
                if error.isUsageError { throw UsageError(error.description) }
                throw error
            }
        }
        return (plugins, shapes)
    }

    private static func recorder(_ plan: CapturePlan, name: TakeFiles.TakeName, host: CaptureHost, hooks: HookRunner?) -> Recorder {
        var settings = Recorder.Settings(
            container: plan.container, sampleFormat: plan.recordSampleFormat, split: plan.split, overwrite: plan.overwrite,
            syncSeconds: plan.syncSeconds > 0 ? plan.syncSeconds : nil, minimumFreeBytes: plan.minimumFreeBytes,
            quality: plan.quality)
        if let hooks { settings.onFileEvent = { hooks.handle($0) } }
        // With --loudness, each sidecar carries its segment's loudness and the take's so far.
        settings.loudness = plan.loudness?.programmes
        return Recorder(name: name, settings: plan.takeOptions.settings(adding: settings, host: host, name: name))
    }

    /// Opens the stream (a FIFO waits for its reader here; a stop signal ends the wait) and
    /// adds every consumer to the host. Nil when the run goes on; else the status to end with.
    func addConsumers() throws -> ExitStatus? {
        if let meter { host.add(realtime: meter) }
        if let loudness { host.add(deferred: loudness) }
        if let alarmWatch { host.add(deferred: alarmWatch) }
        if let notifier { host.add(realtime: notifier.meter) }
        if let oscMeter { host.add(realtime: oscMeter) }
        // The live view's own meter (atomics, like the terminal's) and its spectrum (a worker thread).
        if let liveView {
            host.add(realtime: liveView.meter)
            host.add(deferred: liveView.spectrum)
        }
        if plan.stream {
            guard let stream = try openStream() else { return .success }
            self.stream = stream
        }
        // Files and streams get an elastic buffer: a 0.5 s real-time ring that a transfer thread
        // empties into memory that grows up to --max-buffer, so a disk or reader that stalls
        // for seconds or minutes loses nothing (jack_capture's buffer grows to 40 s at most).
        // With --midi-control the recorder runs MIDISource.holdBackSeconds behind capture, so
        // commands land at their events' frames; a stream is not held back, so it converts alone.
        let holdBack = plan.midiControl == nil ? 0 : MIDISource.holdBackSeconds
        if let recorder, let stream, recorder.encoding == stream.encoding, holdBack == 0 {
            // Same samples wanted twice: convert once per cycle and share.
            host.add(deferred: SharedConverter([recorder, stream]), maximumBuffer: plan.maxBuffer)
        } else {
            if let recorder { host.add(deferred: recorder, maximumBuffer: plan.maxBuffer, holdBackSeconds: holdBack) }
            if let stream { host.add(deferred: stream, maximumBuffer: plan.maxBuffer) }
        }
        for (plugin, shape) in zip(plugins, shapes) { try PluginShaping.add(plugin, to: host, userShape: shape) }
        return nil
    }

    /// The stream's writer; nil when a stop signal ended the wait for a FIFO's reader.
    private func openStream() throws -> StreamWriter? {
        guard let path = plan.streamPath else {
            return StreamWriter(descriptor: STDOUT_FILENO, sampleFormat: plan.streamSampleFormat, interleaved: plan.interleaved)
        }
        do {
            return try StreamWriter(
                path: path, sampleFormat: plan.streamSampleFormat, interleaved: plan.interleaved,
                overwrite: plan.overwrite, keepWaiting: { csignals_stop_requests() == 0 })
        } catch let error as StreamWriterError {
            printNote(error.description)
            return nil
        } catch let error as RecorderError {
            throw UsageError(error.description)
        }
    }

    /// Isolated plugins start first, as their own clients on the same sources, so they hear
    /// what the take hears from its first frame. Nil when all started; else the status to end with.
    func startIsolatedPlugins() -> ExitStatus? {
        guard plan.pluginIsolation == .process else { return nil }
        var childArguments: [String] = serverName.map { ["--server", $0] } ?? []
        if case .patterns(let patterns) = configuration.connections { childArguments += patterns.flatMap { ["--connect", $0] } }
        if case .streams(let names) = configuration.connections { childArguments += names.flatMap { ["--connect-stream", $0] } }
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
                sampleRate: { [host] in host.sampleRateOrDefault })
            if case .failed(let status) = plugin.start() { return ExitStatus(rawValue: status) ?? .failure }
            isolated.append(plugin)
        }
        return nil
    }

    /// Every plugin's results, wherever it runs, in `--plugin` order.
    func resultSources() -> [PluginResultSource] {
        plugins.enumerated().map { index, plugin in
            PluginResultSource(plugin: plugin.name, instance: index + 1, latest: { plugin.latestResults() })
        }
            + isolated.enumerated().map { index, plugin in
                PluginResultSource(
                    plugin: plugin.displayName, instance: index + 1, latest: { plugin.latestResults() },
                    missedFrames: { plugin.resultsArePartial ? max(plugin.missedFrames, 1) : 0 })
            }
    }

    /// Hands the isolated plugins to the caller, which stops them (``tearDown()`` then has none).
    func takeIsolatedPlugins() -> [IsolatedPlugin] {
        defer { isolated = [] }
        return isolated
    }
}

extension CaptureHost {
    /// The session's sample rate, or 48 kHz before there is a session: the one place the
    /// application layer reads it from.
    var sampleRateOrDefault: Double { session?.sampleRate ?? 48000 }

    /// The period in microseconds, or 0 before there is a session; read here only, beside the rate.
    var periodMicroseconds: Int { session.map { Int(($0.ioBufferDuration * 1_000_000).rounded()) } ?? 0 }
}
