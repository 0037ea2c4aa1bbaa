// LoudnessArguments.swift
//
// `--loudness` and `--programme FIRST-LAST[:LAYOUT]` on the command line: the options' table
// entries and their parsing. Checked before JACK is touched, so a mistake is a usage error.

import JackHostConsumers

/// What `--loudness` measures: every input, and the programmes given.
struct LoudnessSettings: Equatable {
    var programmes: [LoudnessProgramme]

    /// The options every capture command's table adds.
    static let table: [OptionSpec] = [
        OptionSpec(
            "loudness",
            help:
                "measure EBU R128 loudness and true peak of every input with libebur128 on a worker thread (momentary, short-term, integrated, loudness range, max true peak); the summary and --results report them"
        ),
        OptionSpec(
            "programme", value: "FIRST-LAST[:LAYOUT]", repeatable: true,
            help:
                "also measure inputs FIRST to LAST as one programme with BS.1770 weights: stereo (2 inputs), 5.1 (6: L R C LFE Ls Rs) or mono; implies --loudness"
        ),
    ]

    /// Reads the options; nil without either.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> LoudnessSettings? {
        let texts = parsed.values["programme"] ?? []
        guard parsed.has("loudness") || !texts.isEmpty else { return nil }
        var programmes: [LoudnessProgramme] = []
        for text in texts {
            do {
                programmes.append(try LoudnessProgramme(parsing: text))
            } catch {
                throw UsageError(error.description)
            }
        }
        return LoudnessSettings(programmes: programmes)
    }
}
