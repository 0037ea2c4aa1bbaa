// LevelParsing.swift
//
// Levels in dBFS and durations with a unit, as the alarm and level-trigger options take them.

import JackHostConsumers

extension ValueParsing {
    /// `-50dBFS`, `-50dB` or `-50`: -120 to 0 dBFS; the refusal names `option` and shows `example`.
    static func level(_ text: String, option: String, example: String = "-50dBFS") throws(UsageError) -> Double {
        var number = Substring(text)
        for suffix in ["dBFS", "dbfs", "dB", "db"] where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            break
        }
        let negative = number.hasPrefix("-")
        let magnitude = negative ? String(number.dropFirst()) : String(number)
        guard let value = ValueParsing.decimal(magnitude).map({ negative ? -$0 : $0 }), TakeTrigger.thresholdRange.contains(value) else {
            throw UsageError("--\(option) \(ValueParsing.shown(text)) is not a level from -120 to 0 dBFS; write it like \(example)")
        }
        return value
    }

    /// `30s`, `500ms`, `2m`, `1h` or plain seconds, within `range` seconds.
    static func duration(_ text: String, option: String, range: ClosedRange<Double>) throws(UsageError) -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        let unit = units.first { text.hasSuffix($0.0) } ?? ("", 1)
        guard let number = ValueParsing.decimal(String(text.dropLast(unit.0.count))).map({ $0 * unit.1 }), range.contains(number) else {
            throw UsageError(
                "--\(option) \(ValueParsing.shown(text)) is not a duration from \(range.lowerBound)s to \(Int(range.upperBound))s; write it like 30s or 2m"
            )
        }
        return number
    }
}
