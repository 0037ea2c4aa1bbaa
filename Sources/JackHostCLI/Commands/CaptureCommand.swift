import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostLiveView
import JackHostPlugins

/// `jackhost record | meter | stream | run`: one capture session with a set of consumers.
enum CaptureCommand {
    static func run(command: String, arguments: [String]) throws -> ExitStatus {
        // The entry holds the options table and the --help text (see CommandCatalog).
        let entry = CommandCatalog.entry(command) ?? CommandCatalog.run
        let table = entry.options
        let parsed = try parseArguments(arguments, options: table, command: command)
        if parsed.has("help") {
            print(entry.usage)
            return .success
        }
        let plan = try CapturePlan(command: command, parsed: parsed)
        return try CaptureSession(plan: plan).run()
    }
}

/// Everything a capture session needs, validated before JACK is touched.
struct CapturePlan {
    var server: String?
    var embedded: Bool
    var clientName: String
    var channels: Int?
    var connections: CaptureHost.Connections
    var duration: Double?
    var quiet: Bool
    var reconnect: Bool
    var stopOnXrun: Bool
    var callbackTime: Bool
    var overwrite: Bool
    /// What a stalled disk or reader may fill in memory before frames drop (`--max-buffer`).
    var maxBuffer: BufferBound = CapturePlan.defaultMaxBuffer
    /// Seconds of audio between fdatasync calls; 0 leaves syncing to the kernel.
    var syncSeconds = 2.0
    /// Free space the take leaves on its disk (`--min-free`).
    var minimumFreeBytes: Int?
    /// The take's name: exact, `-` for stdout, or automatic (`record` without FILE).
    var recordName: TakeFiles.TakeName?
    var container: AudioContainer = .wav
    var recordSampleFormat: SampleFormat = .float32
    /// `--quality`: the lossy encoders' quality, 0 (smallest) to 1 (best); nil keeps libsndfile's.
    var quality: Double?
    var split: SplitLimit?
    /// Channel files, time stamps, aligned and retained segments, triggered takes.
    var takeOptions = TakeOptions()
    /// `--on-file-open`, `--on-file-close`, `--on-rotate`, each checked (the program exists).
    var hooks: [HookCommand] = []
    var meter: Bool
    var meterInterval: Double = 1
    var stream: Bool
    var plugins: [PluginSpecification] = []
    /// The `--plugin` values as given, for the isolated plugins' own processes.
    var pluginTexts: [String] = []
    /// Where plugins run.
    var pluginIsolation = PluginIsolation.none
    /// Set in the child process of an isolated plugin: its link to the supervising jackhost.
    var supervisorDescriptor: Int32?
    /// `--results FILE`: the plugins' published results as JSON lines.
    var resultsPath: String?
    var streamPath: String?
    var streamSampleFormat: SampleFormat = .float32
    var interleaved = false
    /// `--http` and `--http-token`: the live view, when asked for.
    var http: LiveViewSettings?
    /// `--osc` and `--osc-allow`: remote control over OSC, when asked for.
    var osc: OSCSettings?
    /// `--midi-control`, `--mmc-id`, `--midi-marker`: MIDI Machine Control, when asked for.
    var midiControl: MIDIControlSettings?
    /// `--loudness` and `--programme`: EBU R128 loudness, when asked for.
    var loudness: LoudnessSettings?
    /// `--silence`, `--clip` and `--on-alarm`: alarms, when asked for.
    var alarms: AlarmSettings?

    /// The default elastic buffer: 512 MiB holds 23 minutes of stereo float at 48 kHz (jack_capture
    /// grows to 40 s at most) and 43 s at 64 channels, while bounding memory on a small machine.
    static let defaultMaxBuffer = BufferBound.bytes(512 << 20)

    /// Whether audio goes to standard output, so that everything for people goes to stderr.
    var audioOnStandardOutput: Bool {
        (stream && streamPath == nil) || recordName == .exact("-")
    }

    init(command: String, parsed: ParsedArguments) throws {
        server = try ValueParsing.server(parsed)
        embedded = parsed.has("embedded-server")
        if embedded && parsed.value("server") != nil { throw UsageError("--embedded-server and --server exclude each other; give one") }
        clientName = try ValueParsing.clientName(parsed, default: "jackhost")
        if let text = parsed.value("channels") {
            channels = try ValueParsing.wholeNumber(text, option: "channels", range: 1...JackError.maximumChannelCount)
        }
        connections = try Self.connections(parsed)
        if let text = parsed.value("duration") { duration = try ValueParsing.seconds(text, option: "duration") }
        quiet = parsed.has("quiet")
        reconnect = try Self.reconnect(parsed, command: command)
        stopOnXrun = parsed.has("stop-on-xrun")
        callbackTime = parsed.has("callback-time")
        http = try LiveViewSettings.parse(parsed)
        osc = try OSCSettings.parse(parsed)
        midiControl = try MIDIControlSettings.parse(parsed)
        loudness = try LoudnessSettings.parse(parsed)
        alarms = try AlarmSettings.parse(parsed)
        overwrite = parsed.has("overwrite")
        // Each command's own options (below) decide which consumers run.
        meter = false
        stream = false
        try readBufferAndDiskOptions(parsed)
        switch command {
        case "record": try readRecordCommand(parsed)
        case "meter": try readMeterCommand(parsed)
        case "stream": try readStreamCommand(parsed)
        default: try readRunCommand(parsed)
        }
        if let recordName { try readRecording(recordName, command: command, parsed: parsed) }
        if stream { try readStream(parsed) }
        try checkDestinationsDiffer()
        if let hook = alarms?.hook { hooks.append(hook) }
    }

    /// `--connect` patterns, `--connect-stream` names, `--no-auto-connect`, or the physical
    /// capture ports by default.
    private static func connections(_ parsed: ParsedArguments) throws -> CaptureHost.Connections {
        let patterns = try ValueParsing.patterns(parsed)
        let streams = try ValueParsing.streamNames(parsed)
        if parsed.has("no-auto-connect") && !patterns.isEmpty {
            throw UsageError("--connect and --no-auto-connect exclude each other; give one")
        }
        if !streams.isEmpty {
            if !patterns.isEmpty { throw UsageError("--connect-stream and --connect exclude each other; give one") }
            if parsed.has("no-auto-connect") { throw UsageError("--connect-stream and --no-auto-connect exclude each other; give one") }
            return .streams(streams)
        }
        return parsed.has("no-auto-connect") ? .none : patterns.isEmpty ? .physicalCapture : .patterns(patterns)
    }

    /// Whether to reconnect after the server returns: asked for, or by default for `record` and `meter`.
    private static func reconnect(_ parsed: ParsedArguments, command: String) throws -> Bool {
        if parsed.has("reconnect") && parsed.has("no-reconnect") {
            throw UsageError("--reconnect and --no-reconnect exclude each other; give one")
        }
        return parsed.has("reconnect") || (!parsed.has("no-reconnect") && (command == "record" || command == "meter"))
    }

    /// `--max-buffer`, `--sync-interval` and `--min-free`.
    private mutating func readBufferAndDiskOptions(_ parsed: ParsedArguments) throws {
        if let text = parsed.value("max-buffer") { maxBuffer = try ValueParsing.maxBuffer(text) }
        if let text = parsed.value("sync-interval") {
            syncSeconds = try ValueParsing.number(text, option: "sync-interval", unit: "seconds", range: 0...3600)
        }
        if let text = parsed.value("min-free") {
            guard case .bytes(let bytes)? = SplitLimit(parsing: text), (1 << 20)...(1 << 50) ~= bytes else {
                throw UsageError("--min-free \(ValueParsing.shown(text)) is not a size from 1M to 1024T (e.g. 500M, 2G)")
            }
            minimumFreeBytes = bytes
        }
    }

    /// `jackhost record [FILE]`: the take's name, and the meter when standard output is a terminal.
    private mutating func readRecordCommand(_ parsed: ParsedArguments) throws {
        let positionals = parsed.positionals
        if positionals.count > 1 { throw UsageError("unexpected argument \"\(ValueParsing.shown(positionals[1]))\"; record takes one FILE") }
        let formatName = parsed.value("format")
        if let path = positionals.first {
            if path.isEmpty {
                throw UsageError("record was given an empty FILE name; name the take, e.g. take.wav, or leave FILE out for an automatic name")
            }
            recordName = TakeFiles.isTemplate(path) ? .template(path) : .exact(path)
        } else {
            // jack_capture's habit: no name, a new time-stamped one that never collides.
            let container = try Self.container(path: nil, formatName: formatName)
            recordName = .automatic(directory: ".", prefix: "jackhost", fileExtension: container.fileExtension)
        }
        meter = parsed.has("meter") || (!parsed.has("no-meter") && isatty(STDOUT_FILENO) == 1 && recordName != .exact("-"))
        stream = false
    }

    /// `jackhost meter`: the meter alone, at its `--interval`.
    private mutating func readMeterCommand(_ parsed: ParsedArguments) throws {
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument \"\(ValueParsing.shown(extra))\" for `jackhost meter`") }
        meter = true
        stream = false
        if let text = parsed.value("interval") {
            meterInterval = try ValueParsing.number(text, option: "interval", unit: "seconds", range: 0.05...3600)
        }
    }

    /// `jackhost stream`: the stream alone.
    private mutating func readStreamCommand(_ parsed: ParsedArguments) throws {
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument \"\(ValueParsing.shown(extra))\" for `jackhost stream`") }
        meter = false
        stream = true
    }

    /// `jackhost run`: any set of consumers (`--record`, `--meter`, `--stream`, `--plugin`), at least one.
    private mutating func readRunCommand(_ parsed: ParsedArguments) throws {
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument \"\(ValueParsing.shown(extra))\" for `jackhost run`") }
        if let path = parsed.value("record") {
            if path.isEmpty { throw UsageError("--record was given an empty FILE name; name the take, e.g. take.wav") }
            recordName = TakeFiles.isTemplate(path) ? .template(path) : .exact(path)
        }
        meter = parsed.has("meter")
        stream = parsed.has("stream")
        try readPlugins(parsed)
        if let path = parsed.value("results") {
            if plugins.isEmpty && recordName == nil {
                throw UsageError("--results applies to plugins and to a recording's markers; add --plugin PATH or --record FILE, or leave it out")
            }
            if path.isEmpty { throw UsageError("--results was given an empty FILE name; name it, e.g. results.jsonl") }
            resultsPath = path
        }
        if let text = parsed.value("supervisor-fd") {
            supervisorDescriptor = Int32(try ValueParsing.wholeNumber(text, option: "supervisor-fd", range: 3...1023))
        }
        if !meter && !stream && recordName == nil && plugins.isEmpty {
            throw UsageError("run needs at least one consumer: --record FILE, --meter, --stream or --plugin PATH")
        }
        try refuseOptionsWithoutTheirConsumer(parsed)
    }

    /// `--plugin` (each parsed, and kept as given) and where the plugins run (`--plugin-isolation`).
    private mutating func readPlugins(_ parsed: ParsedArguments) throws {
        for text in parsed.values["plugin"] ?? [] {
            do { plugins.append(try PluginSpecification(parsing: text)) } catch { throw UsageError(error.description) }
            pluginTexts.append(text)
        }
        // A plugin is someone else's code: beside a recording it runs in its own process by
        // default, where a crash or a hang cannot touch the take.
        let noConnections = parsed.has("no-auto-connect")
        if let text = parsed.value("plugin-isolation") {
            guard let mode = PluginIsolation(rawValue: text) else {
                throw UsageError("unknown --plugin-isolation \"\(ValueParsing.shown(text))\"; use process or none")
            }
            if mode == .process && noConnections {
                throw UsageError(
                    "--plugin-isolation process needs connections to follow; drop --no-auto-connect, or use --plugin-isolation none")
            }
            pluginIsolation = mode
        } else {
            pluginIsolation = parsed.values["record"] != nil && !noConnections ? .process : .none
        }
        if plugins.isEmpty { pluginIsolation = .none }
    }

    /// `run`'s stream options need `--stream`, and its recording options need `--record FILE`.
    private func refuseOptionsWithoutTheirConsumer(_ parsed: ParsedArguments) throws {
        if !stream {
            for option in ["output", "sample-format", "interleaved"] where parsed.values[option] != nil || parsed.has(option) {
                throw UsageError("--\(option) applies to --stream; add --stream or leave it out")
            }
        }
        if recordName == nil {
            let recordOnly =
                ["format", "record-sample-format", "quality", "split", "sync-interval", "min-free"] + HookCommand.Kind.fileKinds.map(\.option)
                + TakeOptions.names
            for option in recordOnly where parsed.values[option] != nil || parsed.has(option) {
                throw UsageError("--\(option) applies to --record FILE; add --record or leave it out")
            }
        }
    }

    /// The recording's container, sample format, split, quality, take options and hooks, and a
    /// recorder that accepts them.
    private mutating func readRecording(_ recordName: TakeFiles.TakeName, command: String, parsed: ParsedArguments) throws {
        let path: String? =
            switch recordName {
            case .exact(let exact), .template(let exact): exact
            case .automatic: nil
            }
        container = try Self.container(path: path, formatName: parsed.value("format"))
        let sampleName = command == "run" ? parsed.value("record-sample-format") : parsed.value("sample-format")
        if let sampleName {
            guard let format = SampleFormat(name: sampleName), format != .fixed8_24 else {
                throw UsageError("unknown sample format \"\(ValueParsing.shown(sampleName))\" for recording; use f32, s32, s24 or s16")
            }
            recordSampleFormat = format
        } else if container == .flac {
            recordSampleFormat = .int24
        }
        try readSplit(parsed, recordName: recordName)
        try readQuality(parsed)
        takeOptions = try TakeOptions(parsed: parsed, name: recordName, split: split)
        hooks = try Self.hooks(parsed, recordName: recordName, split: split)
        try validateRecorder(recordName)
    }

    /// `--split`: a file's, and by duration for a lossy container.
    private mutating func readSplit(_ parsed: ParsedArguments, recordName: TakeFiles.TakeName) throws {
        guard let text = parsed.value("split") else { return }
        if recordName == .exact("-") { throw UsageError("--split needs a file; standard output cannot be split") }
        split = try ValueParsing.split(text)
        if container.isLossy, case .bytes? = split {
            throw UsageError(
                "--split \(ValueParsing.shown(text)) counts uncompressed bytes; split \(container.rawValue) takes by duration (e.g. 30m, 1h)")
        }
    }

    /// `--quality`, for a lossy container only.
    private mutating func readQuality(_ parsed: ParsedArguments) throws {
        guard let text = parsed.value("quality") else { return }
        guard container.isLossy else {
            throw UsageError("--quality applies to ogg, opus and mp3; \(container.rawValue) keeps every sample, so leave it out")
        }
        guard let value = ValueParsing.decimal(text), (0...1).contains(value) else {
            throw UsageError("--quality \(ValueParsing.shown(text)) is not a number from 0 (smallest file) to 1 (best sound), e.g. 0.6")
        }
        quality = value
    }

    /// Asks a recorder of this shape whether it can record the take, before JACK is touched.
    private func validateRecorder(_ recordName: TakeFiles.TakeName) throws {
        do {
            let recorder = Recorder(
                name: recordName,
                settings: Recorder.Settings(
                    container: container, sampleFormat: recordSampleFormat, split: split, overwrite: overwrite,
                    channelFiles: takeOptions.channelFiles,
                    channelPlan: takeOptions.channelFiles ? ChannelFilePlan(given: takeOptions.channelNames) : nil))
            try recorder.validate(channels: takeOptions.channelNames?.count ?? channels ?? 2)
        } catch {
            throw UsageError(error.description)
        }
    }

    /// The stream's destination, sample format and layout.
    private mutating func readStream(_ parsed: ParsedArguments) throws {
        streamPath = parsed.value("output")
        interleaved = parsed.has("interleaved")
        if let sampleName = parsed.value("sample-format") {
            guard let format = SampleFormat(name: sampleName) else {
                throw UsageError("unknown sample format \"\(ValueParsing.shown(sampleName))\"; use f32, s32, s24, s16 or 8.24")
            }
            streamSampleFormat = format
        }
        if let streamPath {
            if streamPath.isEmpty { throw UsageError("--output was given an empty path; name a FIFO or file, or leave it out for stdout") }
            do { try StreamWriter.validate(path: streamPath, overwrite: overwrite) } catch { throw UsageError(error.description) }
        }
    }

    /// The hooks asked for; each needs a file (not standard output), and `--on-rotate` needs `--split`.
    static func hooks(_ parsed: ParsedArguments, recordName: TakeFiles.TakeName, split: SplitLimit?) throws(UsageError) -> [HookCommand] {
        var hooks: [HookCommand] = []
        for kind in HookCommand.Kind.fileKinds {
            guard let text = parsed.value(kind.option) else { continue }
            if recordName == .exact("-") { throw UsageError("--\(kind.option) needs a file; standard output has none") }
            if kind == .rotate && split == nil { throw UsageError("--on-rotate applies to --split; add --split or leave it out") }
            hooks.append(try HookCommand(kind: kind, parsing: text))
        }
        return hooks
    }

    /// The container: `--format`, else the file's extension. An extension that contradicts
    /// `--format`, or that names a format jackhost does not write, is refused rather than
    /// silently given WAV data.
    static func container(path: String?, formatName: String?) throws(UsageError) -> AudioContainer {
        let meaning = path.map { AudioContainer.meaning(ofExtensionIn: $0) } ?? .none
        let shownPath = path.map { ValueParsing.shown($0) } ?? ""
        if let formatName {
            guard let container = AudioContainer(name: formatName) else {
                throw UsageError("unknown container \"\(ValueParsing.shown(formatName))\"; use \(Self.writableList(dots: false))")
            }
            let mismatch = UsageError(
                "\(shownPath) does not match --format \(container.rawValue); name the file .\(container.fileExtension), or drop --format")
            switch meaning {
            case .container(let named) where !container.isCompatible(withExtensionOf: named): throw mismatch
            case .unsupportedAudio: throw mismatch
            default: return container
            }
        }
        switch meaning {
        case .none:
            if let path, path != "-" {
                throw UsageError(
                    "\(shownPath) has no extension to tell the container by; name it \(shownPath).wav (or \(Self.writableList(dots: true, from: 1))), or pass --format"
                )
            }
            return .wav
        case .container(let container):
            return container
        case .unsupportedAudio(let name):
            throw UsageError("jackhost does not write \(name) files (\(shownPath)); use \(Self.writableList(dots: true))")
        case .unknown(let ext):
            throw UsageError(
                "cannot tell the container of \(shownPath) from its extension \".\(ValueParsing.shown(ext))\"; use \(Self.writableList(dots: true)), or pass --format"
            )
        }
    }

    /// The containers this machine's libsndfile writes, as "wav, rf64, … or mp3" (or ".wav, …"),
    /// from the `from`-th on.
    static func writableList(dots: Bool, from start: Int = 0) -> String {
        let names = AudioContainer.writableOnThisMachine().dropFirst(start).map { (dots ? "." : "") + $0.rawValue }
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + (start > 0 ? ", " : " or ") + names.last!
    }

    /// One destination, one writer: a recording and a stream must not share a file, compared
    /// by device and inode (or by directory and name, for a file still to be created), so
    /// `take.wav`, `./take.wav` and a link to it are all the same.
    private func checkDestinationsDiffer() throws(UsageError) {
        guard stream, case .exact(let recordPath)? = recordName else { return }
        let streamTarget = streamPath ?? "-"
        let record = OutputIdentity(path: recordPath)
        let output = OutputIdentity(path: streamTarget)
        if record == output {
            let shown = streamPath == nil ? "standard output" : streamTarget
            throw UsageError(RecorderError.sameDestination(path: recordPath == "-" ? "standard output" : recordPath, other: shown).description)
        }
    }
}

/// Where `--plugin` consumers run (`--plugin-isolation`).
enum PluginIsolation: String {
    /// Each plugin in its own process, as its own JACK client on the same sources.
    case process
    /// In jackhost's own process, on its real-time thread or a worker.
    case none
}

/// Where an output lands, as the kernel sees it.
struct OutputIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    /// For a file that does not exist yet: its name inside the directory identified above.
    var name: String?

    init(path: String) {
        var status = stat()
        if path == "-" {
            fstat(STDOUT_FILENO, &status)
            (device, inode, name) = (UInt64(status.st_dev), UInt64(status.st_ino), nil)
        } else if stat(path, &status) == 0 {
            (device, inode, name) = (UInt64(status.st_dev), UInt64(status.st_ino), nil)
        } else {
            let directory = path.deletingLastPathComponent
            stat(directory.isEmpty ? "." : directory, &status)
            let file = path.split(separator: "/").last.map(String.init) ?? path
            (device, inode, name) = (UInt64(status.st_dev), UInt64(status.st_ino), file)
        }
    }
}
