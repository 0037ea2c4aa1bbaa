import JackHost
import JackHostConsumers

/// Every number and name on the command line is read here, with one set of rules:
///
/// - numbers are plain decimals (`90`, `2.5`, `-1` is read and then refused by its range): no
///   hexadecimal, no exponent, no `inf` or `nan`, no spaces;
/// - every value has a range, checked at parse time, and a refusal names the accepted range;
/// - server, client and port names are checked against JACK's own limits before libjack
///   sees them (a long server name smashes libjack's stack).
enum ValueParsing {
    /// The longest duration any option accepts: one year.
    static let maximumSeconds = 31_536_000.0

    /// Reads a plain decimal number: optional '-', digits, optional '.' and digits.
    static func decimal(_ text: String) -> Double? {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        var digits = 0
        var points = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                points += 1
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0, points <= 1, text.utf8.count <= 40 else { return nil }
        return Double(text)
    }

    /// A decimal within `range`, for option `--name`; `unit` words the message ("seconds").
    static func number(_ text: String, option: String, unit: String, range: ClosedRange<Double>) throws(UsageError) -> Double {
        let accepted = "use \(format(range.lowerBound)) to \(format(range.upperBound)) \(unit)"
        guard let value = decimal(text) else {
            throw UsageError("--\(option) \(shown(text)) is not a decimal number; \(accepted), e.g. 90 or 2.5")
        }
        guard range.contains(value) else { throw UsageError("--\(option) \(shown(text)) is out of range; \(accepted)") }
        return value
    }

    /// A whole decimal number within `range`.
    static func wholeNumber(_ text: String, option: String, range: ClosedRange<Int>) throws(UsageError) -> Int {
        let accepted = "use a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let value = decimal(text), !text.contains(".") else {
            throw UsageError("--\(option) \(shown(text)) is not a whole number; \(accepted)")
        }
        guard value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
            throw UsageError("--\(option) \(shown(text)) is out of range; \(accepted)")
        }
        return Int(value)
    }

    /// Seconds for `--duration` and the like: 1 ms to one year.
    static func seconds(_ text: String, option: String) throws(UsageError) -> Double {
        try number(text, option: option, unit: "seconds", range: 0.001...maximumSeconds)
    }

    /// `--split`: see ``SplitLimit/init(parsing:)``.
    static func split(_ text: String) throws(UsageError) -> SplitLimit {
        guard let limit = SplitLimit(parsing: text) else {
            throw UsageError("--split \(shown(text)) is neither a size (500M, 2G) nor a duration (30s, 10m, 1h); \(SplitLimit.acceptedRanges)")
        }
        guard limit.isInRange else { throw UsageError(splitRefusal(shown(text), limit)) }
        return limit
    }

    /// Why a well-formed `--split` value outside the ranges is refused: too short a duration,
    /// too small a size (each with the least accepted value and the other kind as a hint), or
    /// too large.
    static func splitRefusal(_ shown: String, _ limit: SplitLimit) -> String {
        switch limit {
        case .seconds(let seconds) where seconds < SplitLimit.secondRange.lowerBound:
            return "--split \(shown) is too short; use at least 1s (or a size such as 2G)"
        case .bytes(let bytes) where bytes < SplitLimit.byteRange.lowerBound:
            return "--split \(shown) is too small; use at least 64K (or a duration such as 30m)"
        default:
            return "--split \(shown) is out of range; \(SplitLimit.acceptedRanges)"
        }
    }

    /// `--max-buffer`: a size (`512M`, `2G`) or a duration (`90s`, `10m`), in the grammar of
    /// `--split`: 1 MiB to 64 GiB, or 1 s to a year.
    static func maxBuffer(_ text: String) throws(UsageError) -> BufferBound {
        let ranges = "use 1M to 64G, or 1s to 8760h"
        switch SplitLimit(parsing: text) {
        case .bytes(let bytes)? where (1 << 20)...(1 << 36) ~= bytes: return .bytes(bytes)
        case .seconds(let seconds)? where (1.0...maximumSeconds).contains(seconds): return .seconds(seconds)
        case .some: throw UsageError("--max-buffer \(shown(text)) is out of range; \(ranges)")
        case nil: throw UsageError("--max-buffer \(shown(text)) is neither a size (512M, 2G) nor a duration (90s, 10m); \(ranges)")
        }
    }

    /// `--server`, or `$JACK_DEFAULT_SERVER` when it is not given; nil for libjack's "default".
    static func server(_ parsed: ParsedArguments) throws(UsageError) -> String? {
        if let name = parsed.value("server") {
            do { try JackError.checkServerName(name) } catch { throw UsageError("--server: \(error.description)") }
            return name
        }
        if let name = JackClient.defaultServerFromEnvironment {
            do { try JackError.checkServerName(name) } catch { throw UsageError("JACK_DEFAULT_SERVER: \(error.description)") }
        }
        return nil
    }

    /// `--name`, checked against JACK's client-name limit.
    static func clientName(_ parsed: ParsedArguments, default fallback: String) throws(UsageError) -> String {
        let name = parsed.value("name") ?? fallback
        do { try JackError.checkClientName(name) } catch { throw UsageError("--name: \(error.description)") }
        return name
    }

    /// `--connect` patterns, each checked by ``PortPattern`` (no back-references, no runaway
    /// repetition, valid syntax) so that matching can neither hang nor silently match nothing.
    static func patterns(_ parsed: ParsedArguments) throws(UsageError) -> [String] {
        let patterns = parsed.values["connect"] ?? []
        for pattern in patterns {
            do { try PortPattern.check(pattern) } catch { throw UsageError(error.description) }
        }
        return patterns
    }

    /// `--connect-stream` names: JACK client names (1-63 bytes without ':'), matched exactly.
    static func streamNames(_ parsed: ParsedArguments) throws(UsageError) -> [String] {
        let names = parsed.values["connect-stream"] ?? []
        for name in names {
            do { try JackError.checkClientName(name) } catch { throw UsageError("--connect-stream: \(error.description)") }
        }
        return names
    }

    /// A path as a message shows it: whole, so the user can tell which file is meant, with line
    /// breaks as spaces and cut only past `PATH_MAX` (4096) characters, which no real path reaches.
    static func shownPath(_ path: String) -> String {
        let flat = path.replacingNewlines()
        return flat.count <= 4096 ? flat : String(flat.prefix(4093)) + "..."
    }

    /// A value as a message shows it: cut to 40 characters, so a hostile value still gives one line.
    static func shown(_ text: String) -> String {
        let flat = text.replacingNewlines()
        return flat.count <= 40 ? flat : String(flat.prefix(37)) + "..."
    }

    /// A range bound without a pointless ".0".
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

extension String {
    /// The text with line breaks shown as spaces, so that a message stays one line.
    func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
