// AlarmArguments.swift
//
// `--silence LEVEL`, `--after DURATION`, `--clear-after DURATION`, `--clip COUNT` and
// `--on-alarm CMD` on the command line: the options' table entries and their parsing into
// AlarmSettings. Checked before JACK is touched, so a mistake is a usage error (status 2).

import JackHostConsumers

/// The alarms asked for, and the hook they run.
struct AlarmSettings: Equatable {
    var rules: AlarmRules
    /// `--on-alarm`, when given.
    var hook: HookCommand?

    /// The options every capture command's table adds.
    static let table: [OptionSpec] = [
        OptionSpec(
            "silence", value: "LEVEL",
            help:
                "dead-air alarm: raised when every channel of a programme (each --programme, else each input) stays below LEVEL (e.g. -50dBFS) for --after"
        ),
        OptionSpec("after", value: "DURATION", help: "with --silence: how long the silence lasts before the alarm, 1s to 24h (default: 30s)"),
        OptionSpec("clear-after", value: "DURATION", help: "with --silence: how long sound lasts before the alarm clears, 0.1s to 1h (default: 2s)"),
        OptionSpec(
            "clip", value: "COUNT",
            help: "clip alarm: raised when true peak goes over -1 dBTP in COUNT 100 ms windows within a minute (1-600); clears after a clean minute"
        ),
        OptionSpec(
            "on-alarm", value: "CMD",
            help: "run CMD (no shell) with ALARM STATE SOURCE TAKE FRAME each time an alarm is raised or cleared (dead-air|clip, raised|cleared)"),
    ]

    /// Reads the options; nil without `--silence` and `--clip`.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> AlarmSettings? {
        var rules = AlarmRules()
        if let text = parsed.value("silence") {
            rules.silence = AlarmRules.Silence(
                levelDBFS: try ValueParsing.level(text, option: "silence"),
                after: try ValueParsing.duration(parsed.value("after") ?? "30s", option: "after", range: 1...86400),
                clearAfter: try ValueParsing.duration(parsed.value("clear-after") ?? "2s", option: "clear-after", range: 0.1...3600))
        } else {
            for option in ["after", "clear-after"] where parsed.value(option) != nil {
                throw UsageError("--\(option) applies to --silence LEVEL; add --silence or leave it out")
            }
        }
        if let text = parsed.value("clip") {
            rules.clipCount = try ValueParsing.wholeNumber(text, option: "clip", range: 1...600)
        }
        guard rules.silence != nil || rules.clipCount != nil else {
            if parsed.value("on-alarm") != nil { throw UsageError("--on-alarm runs on an alarm; add --silence LEVEL or --clip COUNT") }
            return nil
        }
        let hook = try parsed.value("on-alarm").map { text throws(UsageError) in try HookCommand(kind: .alarm, parsing: text) }
        return AlarmSettings(rules: rules, hook: hook)
    }
}
