import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostConsumers
import JackHostPlugins

/// `jackhost record | meter | stream | run`: one capture session with a set of consumers.
enum CaptureCommand {
    static func run(command: String, arguments: [String]) throws -> ExitStatus {
        let table: [OptionSpec]
        let synopsis: String
        let summary: String
        switch command {
        case "record":
            (table, synopsis, summary) = (CommandTables.record, "FILE [OPTIONS]",
                                          "Record every input to FILE. Meters show when stdout is a terminal.")
        case "meter":
            (table, synopsis, summary) = (CommandTables.meter, "[OPTIONS]",
                                          "Show peak/RMS meters per input and print a summary table at exit.")
        case "stream":
            (table, synopsis, summary) = (CommandTables.stream, "[OPTIONS]",
                                          "Write raw samples to stdout or a FIFO, e.g. piped into sox.")
        default:
            (table, synopsis, summary) = (CommandTables.run, "[--record FILE] [--meter] [--stream] [--plugin PATH[:key=value,...]]... [OPTIONS]",
                                          "Run several consumers at once on the same inputs.")
        }
        let parsed = try parseArguments(arguments, options: table, command: command)
        if parsed.has("help") {
            print(CommandTables.usage(command, synopsis: synopsis, summary: summary, options: table))
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
    var recordPath: String?
    var container: AudioContainer?
    var recordSampleFormat: SampleFormat = .float32
    var split: SplitLimit?
    var meter: Bool
    var meterInterval: Double = 1
    var stream: Bool
    var plugins: [PluginSpecification] = []
    var streamPath: String?
    var streamSampleFormat: SampleFormat = .float32
    var interleaved = false

    init(command: String, parsed: ParsedArguments) throws {
        server = parsed.value("server")
        embedded = parsed.has("embedded-server")
        if embedded && server != nil { throw UsageError("--embedded-server and --server exclude each other; give one") }
        clientName = parsed.value("name") ?? "jackhost"
        if clientName.isEmpty || clientName.utf8.count > 63 || clientName.contains(":") {
            throw UsageError("client name \"\(clientName)\" is not usable; use 1-63 characters without ':'")
        }
        if let text = parsed.value("channels") {
            guard let count = Int(text) else { throw UsageError("--channels \(text) is not a whole number; use 1 to 1024") }
            guard (1...JackError.maximumChannelCount).contains(count) else {
                throw UsageError("--channels \(count) is out of range; use 1 to \(JackError.maximumChannelCount)")
            }
            channels = count
        }
        let patterns = parsed.values["connect"] ?? []
        if parsed.has("no-auto-connect") && !patterns.isEmpty {
            throw UsageError("--connect and --no-auto-connect exclude each other; give one")
        }
        connections = parsed.has("no-auto-connect") ? .none : patterns.isEmpty ? .physicalCapture : .patterns(patterns)
        if let text = parsed.value("duration") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw UsageError("--duration \(text) is not a positive number of seconds")
            }
            duration = seconds
        }
        quiet = parsed.has("quiet")
        if parsed.has("reconnect") && parsed.has("no-reconnect") {
            throw UsageError("--reconnect and --no-reconnect exclude each other; give one")
        }
        reconnect = parsed.has("reconnect") || (!parsed.has("no-reconnect") && (command == "record" || command == "meter"))
        stopOnXrun = parsed.has("stop-on-xrun")
        callbackTime = parsed.has("callback-time")

        let positionals = parsed.positionals
        switch command {
        case "record":
            guard let path = positionals.first else { throw UsageError("record needs a FILE, e.g. `jackhost record take.wav`") }
            if positionals.count > 1 { throw UsageError("unexpected argument \"\(positionals[1])\"; record takes one FILE") }
            recordPath = path
            meter = parsed.has("meter") || (!parsed.has("no-meter") && isatty(STDOUT_FILENO) == 1)
            stream = false
        case "meter":
            if let extra = positionals.first { throw UsageError("unexpected argument \"\(extra)\" for `jackhost meter`") }
            meter = true
            stream = false
            if let text = parsed.value("interval") {
                guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                    throw UsageError("--interval \(text) is not a positive number of seconds")
                }
                meterInterval = seconds
            }
        case "stream":
            if let extra = positionals.first { throw UsageError("unexpected argument \"\(extra)\" for `jackhost stream`") }
            meter = false
            stream = true
        default:
            if let extra = positionals.first { throw UsageError("unexpected argument \"\(extra)\" for `jackhost run`") }
            recordPath = parsed.value("record")
            meter = parsed.has("meter")
            stream = parsed.has("stream")
            for text in parsed.values["plugin"] ?? [] {
                do { plugins.append(try PluginSpecification(parsing: text)) } catch { throw UsageError(error.description) }
            }
            if !meter && !stream && recordPath == nil && plugins.isEmpty {
                throw UsageError("run needs at least one consumer: --record FILE, --meter, --stream or --plugin PATH")
            }
        }

        if let path = recordPath {
            if let name = parsed.value("format") {
                guard let parsedContainer = AudioContainer(name: name) else {
                    throw UsageError("unknown container \"\(name)\"; use wav, rf64, w64, caf or flac")
                }
                container = parsedContainer
            }
            let resolved = container ?? AudioContainer(path: path) ?? .wav
            let sampleName = command == "run" ? parsed.value("record-sample-format") : parsed.value("sample-format")
            if let sampleName {
                guard let format = SampleFormat(name: sampleName), format != .fixed8_24 else {
                    throw UsageError("unknown sample format \"\(sampleName)\" for recording; use f32, s32, s24 or s16")
                }
                recordSampleFormat = format
            } else if resolved == .flac {
                recordSampleFormat = .int24
            }
            if let text = parsed.value("split") {
                guard let limit = SplitLimit(text) else {
                    throw UsageError("--split \(text) is neither a size (500M, 2G) nor a duration (30s, 10m, 1h)")
                }
                split = limit
            }
            do {
                try Recorder(path: path, container: resolved, sampleFormat: recordSampleFormat, split: split)
                    .validate(channels: channels ?? 2)
            } catch {
                throw UsageError(error.description)
            }
        }
        if stream {
            streamPath = parsed.value("output")
            interleaved = parsed.has("interleaved")
            let sampleName = command == "run" ? parsed.value("sample-format") : parsed.value("sample-format")
            if let sampleName {
                guard let format = SampleFormat(name: sampleName) else {
                    throw UsageError("unknown sample format \"\(sampleName)\"; use f32, s32, s24, s16 or 8.24")
                }
                streamSampleFormat = format
            }
        }
    }
}
