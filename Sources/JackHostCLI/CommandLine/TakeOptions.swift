import JackHost
import JackHostConsumers

/// The options that shape a recording's takes: channel files, time stamps, aligned and
/// retained log segments, and triggered takes with pre-roll. Parsed and checked before JACK is
/// touched; ``settings(adding:host:name:)`` adds them to the recorder's settings.
struct TakeOptions {
    var channelFiles = false
    /// `--channel-names`: the channel files' names as the user gave them, one per input.
    var channelNames: [String]?
    var sidecar = false
    /// `--mark-xruns`: xruns and dropped frames become markers.
    var markXruns = false
    var broadcastWave = true
    var alignSplits = false
    /// `--utc`: names, aligned splits and retention in UTC instead of local time.
    var timeZone = TakeTimeZone.local
    var keepSeconds: Double?
    var trigger: TakeTrigger?
    var preRollSeconds = 0.0
    /// `--release`, `--min-take`, `--max-take`: a level trigger's hysteresis and take lengths.
    var levelShape = LevelShape()

    /// The longest pre-roll: the buffer is memory, allocated once.
    static let preRollRange = 0.0...600.0

    /// The options' table, shared by `record` and `run`.
    static let table: [OptionSpec] = [
        OptionSpec(
            "channel-files",
            help:
                "one mono file per input, NAME_SOURCE.wav, named after the source it connects to (its pretty-name under PipeWire), else NAME_in_N.wav; the names are printed and checked before the run"
        ),
        OptionSpec(
            "channel-names", value: "NAME,NAME,...", help: "with --channel-files: the files' names, one per input, in order (NAME_kick.wav, ...)"),
        OptionSpec("sidecar", help: "write NAME.json beside each file: the first sample's wall-clock and JACK frame time, the ports, the losses"),
        OptionSpec(
            "mark-xruns",
            help: "place a marker (cue point and sidecar) at every xrun and every run of dropped frames in a take, as Ardour's xrun markers"),
        OptionSpec("no-bext", help: "leave out the Broadcast Wave bext chunk (time reference) that WAV, RF64 and W64 files carry"),
        OptionSpec("align", help: "with --split DURATION: start files on wall-clock multiples of it (14:00:00, 15:00:00 for 1h)"),
        OptionSpec(
            "utc",
            help:
                "expand name templates and automatic names in UTC, and --align on UTC multiples, so a log never jumps at daylight saving (bext stays local)"
        ),
        OptionSpec(
            "keep", value: "AGE",
            help: "remove this logger's own segments older than AGE (90m, 12h, 7d, 2w), and the empty date folders it made; needs a dated name"),
        OptionSpec("pre-roll", value: "SECONDS", help: "start each triggered take this long before its trigger, 0 to 600 (default: 0)"),
        OptionSpec("transport", help: "record a take while JACK transport rolls"),
        OptionSpec("freewheel", help: "record a take while the server freewheels"),
        OptionSpec("trigger", value: "LEVEL", help: "record a take from the first frame any input reaches LEVEL (e.g. -40dBFS)"),
        OptionSpec("hold", value: "DURATION", help: "with --trigger: stop after DURATION below LEVEL (e.g. 2s, 500ms; default: 2s)"),
        OptionSpec(
            "release", value: "LEVEL",
            help: "with --trigger: stop after --hold below this lower LEVEL instead (hysteresis: start above one level, stop below another)"),
        OptionSpec(
            "min-take", value: "DURATION",
            help: "with --trigger: open a take only once it has lasted DURATION (a shorter burst, such as a cough, leaves no file); 0 to 10m"),
        OptionSpec(
            "max-take", value: "DURATION", help: "with --trigger: end a take after DURATION even while loud; the next starts with the next frame"),
        OptionSpec("signal-trigger", help: "SIGUSR1 starts a take, SIGUSR2 stops it"),
    ]

    /// The option names, for "applies to --record" checks.
    static var names: [String] { table.map(\.long) }

    init() {}

    /// Reads the options for a recording named `name` with `split`.
    init(parsed: ParsedArguments, name: TakeFiles.TakeName, split: SplitLimit?) throws(UsageError) {
        channelFiles = parsed.has("channel-files")
        sidecar = parsed.has("sidecar")
        markXruns = parsed.has("mark-xruns")
        broadcastWave = !parsed.has("no-bext")
        let toStandardOutput = name == .exact("-")
        if toStandardOutput {
            for option in ["channel-files", "sidecar", "keep", "mark-xruns"] where parsed.has(option) || parsed.value(option) != nil {
                throw UsageError("--\(option) needs files; it does not apply to standard output")
            }
        }
        if let text = parsed.value("channel-names") {
            guard channelFiles else { throw UsageError("--channel-names names the files of --channel-files; add --channel-files or leave it out") }
            let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if let empty = names.firstIndex(where: \.isEmpty) {
                throw UsageError(
                    "--channel-names \(ValueParsing.shown(text)): name \(empty + 1) is empty; give one name per input, separated by commas")
            }
            guard names.count <= 1024 else { throw UsageError("--channel-names gives \(names.count) names; at most 1024 inputs") }
            channelNames = names
        }
        try readLogOptions(parsed, name: name, split: split)
        var triggers: [TakeTrigger] = []
        if parsed.has("transport") { triggers.append(.transport) }
        if parsed.has("freewheel") { triggers.append(.freewheel) }
        if parsed.has("signal-trigger") { triggers.append(.request) }
        if let text = parsed.value("trigger") {
            let hold = try parsed.value("hold").map { text throws(UsageError) in try Self.hold(text) } ?? 2
            let start = try Self.level(text)
            triggers.append(.level(thresholdDBFS: start, holdSeconds: hold))
            levelShape = try Self.levelShape(parsed, start: start)
        } else {
            for option in ["hold", "release", "min-take", "max-take"] where parsed.value(option) != nil {
                throw UsageError("--\(option) applies to --trigger LEVEL; add --trigger or leave it out")
            }
        }
        if triggers.count > 1 {
            throw UsageError("give one of --transport, --freewheel, --trigger LEVEL and --signal-trigger; a take has one trigger")
        }
        trigger = triggers.first
        if let text = parsed.value("pre-roll") {
            guard trigger != nil else {
                throw UsageError("--pre-roll applies to triggered takes; add --transport, --freewheel, --trigger LEVEL or --signal-trigger")
            }
            preRollSeconds = try ValueParsing.number(text, option: "pre-roll", unit: "seconds", range: Self.preRollRange)
        }
        if trigger != nil && toStandardOutput {
            throw UsageError("triggered takes are files, one per take; record to a FILE, not standard output")
        }
    }

    /// `--release`, `--min-take` and `--max-take` for a level trigger that starts at `start` dBFS.
    static func levelShape(_ parsed: ParsedArguments, start: Double) throws(UsageError) -> LevelShape {
        var shape = LevelShape()
        if let text = parsed.value("release") {
            let release = try ValueParsing.level(text, option: "release")
            guard release <= start else {
                throw UsageError(
                    "--release \(ValueParsing.shown(text)) is above --trigger \(start) dBFS; a take stops below a level at or under the one it starts at"
                )
            }
            shape.releaseDBFS = release
        }
        if let text = parsed.value("min-take") { shape.minTakeSeconds = try ValueParsing.duration(text, option: "min-take", range: 0...600) }
        if let text = parsed.value("max-take") {
            let maximum = try ValueParsing.duration(text, option: "max-take", range: 1...31_536_000)
            guard maximum > shape.minTakeSeconds else {
                throw UsageError("--max-take \(ValueParsing.shown(text)) is not longer than --min-take; give a longer maximum")
            }
            shape.maxTakeSeconds = maximum
        }
        return shape
    }

    /// `--align`, `--utc` and `--keep`: the options of a log in aligned, dated and retained segments.
    private mutating func readLogOptions(_ parsed: ParsedArguments, name: TakeFiles.TakeName, split: SplitLimit?) throws(UsageError) {
        if parsed.has("align") {
            guard case .seconds(let seconds)? = split else {
                throw UsageError("--align needs --split DURATION (for example --split 1h --align)")
            }
            guard seconds >= 1, seconds == seconds.rounded(), 86_400.0.truncatingRemainder(dividingBy: seconds) == 0 else {
                throw UsageError("--align needs a --split duration that divides a day into whole seconds (1s, 15m, 1h, 6h, 24h, ...)")
            }
            alignSplits = true
        }
        if parsed.has("utc") {
            if case .exact = name, !alignSplits {
                throw UsageError(
                    "--utc names and aligns a log in UTC; give FILE as a template such as '%Y/%m/%d/%H%M%S.wav', leave FILE out, or add --split DURATION --align"
                )
            }
            timeZone = .utc
        }
        if let text = parsed.value("keep") {
            guard let seconds = SegmentRetention.parseKeep(text) else {
                let problem = Self.isAgeShaped(text) ? "is out of range" : "is not an age"
                throw UsageError("--keep \(ValueParsing.shown(text)) \(problem); \(SegmentRetention.acceptedKeep)")
            }
            guard case .template(let template) = name else {
                // Without FILE the takes go to the current directory, where earlier runs' takes
                // (and anything named like them) live: retention there would put them at risk.
                throw UsageError(
                    "--keep removes a logger's own dated segments; give FILE as a date template such as 'log-%Y%m%d-%H%M%S.wav' (in a folder of its own)"
                )
            }
            do { try SegmentRetention.validate(template: template) } catch { throw UsageError(error.description) }
            if let reason = SegmentRetention.checkMarks(template: template) { throw UsageError(reason) }
            keepSeconds = seconds
        }
    }

    /// Whether `text` is written as a `--keep` age (an unsigned plain decimal and one of the
    /// units s, m, h, d or w), so that a refusal can say "out of range" rather than "not an age".
    static func isAgeShaped(_ text: String) -> Bool {
        guard let unit = text.last, "smhdw".contains(unit), !text.hasPrefix("-") else { return false }
        return ValueParsing.decimal(String(text.dropLast())) != nil
    }

    /// `-40dBFS`, `-40dB` or `-40`: a level from -120 to 0 dBFS.
    static func level(_ text: String) throws(UsageError) -> Double { try ValueParsing.level(text, option: "trigger", example: "-40dBFS") }

    /// `2s`, `500ms`, `1m` or plain seconds, 0 to an hour.
    static func hold(_ text: String) throws(UsageError) -> Double {
        var number = Substring(text)
        var scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
            scale = 0.001
        } else if number.hasSuffix("s") {
            number = number.dropLast()
        } else if number.hasSuffix("m") {
            number = number.dropLast()
            scale = 60
        }
        guard let value = ValueParsing.decimal(String(number)).map({ $0 * scale }), TakeTrigger.holdRange.contains(value) else {
            throw UsageError("--hold \(ValueParsing.shown(text)) is not a duration from 0 to 1h; write it like 2s or 500ms")
        }
        return value
    }

    /// The recorder's settings: `base` (the container, format, split and disk settings) with
    /// these options added. `host` describes the inputs for the sidecar; `name` is the take's.
    func settings(adding base: Recorder.Settings, host: CaptureHost, name: TakeFiles.TakeName) -> Recorder.Settings {
        var settings = base
        settings.channelFiles = channelFiles
        settings.sidecar = sidecar
        settings.markXruns = markXruns
        settings.broadcastWave = broadcastWave
        settings.alignSplits = alignSplits
        settings.timeZone = timeZone
        settings.trigger = trigger
        settings.preRollSeconds = preRollSeconds
        settings.levelShape = levelShape
        if let keepSeconds, let template = name.retentionTemplate {
            settings.retention = SegmentRetention(template: template, keepSeconds: keepSeconds, timeZone: timeZone)
        }
        // The channel files' names are decided once the inputs are wired (CaptureSession), or now.
        if channelFiles { settings.channelPlan = ChannelFilePlan(given: channelNames) }
        // Runs on the recorder's thread when a segment opens, which can be before start() has
        // connected every input: wait for the wiring (milliseconds; the ring holds the audio).
        settings.describeInputs = { [weak host] in
            guard let host else { return [] }
            host.waitForInitialWiring(timeout: Self.wiringWait)
            return host.inputPortNames.map { port in
                RecorderInput(port: port, prettyName: host.prettyName(ofPort: port), connections: host.connections(ofInput: port))
            }
        }
        return settings
    }

    /// How long a segment that opens during start-up waits for the initial connections.
    static let wiringWait = 2.0
}
