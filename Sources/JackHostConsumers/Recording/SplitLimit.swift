/// When the recorder starts a new file.
public enum SplitLimit: Sendable, Equatable {
    /// After this many bytes of sample data.
    case bytes(Int)
    /// After this many seconds of audio.
    case seconds(Double)

    /// The smallest and largest sizes: 64 KiB to 1 PiB.
    public static let byteRange = (1 << 16)...(1 << 50)
    /// The shortest and longest durations: a second to a year.
    public static let secondRange = 1.0...31_536_000.0
    /// The accepted ranges in words, for messages.
    public static let acceptedRanges = "use 64K to 1024T, or 1s to 8760h"

    /// Parses a size with a unit of powers of 1024 (`64K`, `500M`, `2G`, `1T`) or a duration
    /// (`90s`, `10m` minutes, `1h`). Upper-case `M` is mebibytes, lower-case `m` minutes.
    /// The number is a plain decimal (no sign, exponent or hexadecimal). Zero parses (`0s`), so
    /// that ``isInRange`` refuses it as too short rather than as malformed; values too large for
    /// the counters are kept just past the range, so ``isInRange`` refuses them instead of trapping.
    public init?(parsing text: String) {
        guard let unit = text.last, let number = Self.plainDecimal(text.dropLast()) else { return nil }
        let multiplier: Double
        switch unit {
        case "k", "K": multiplier = 1024
        case "M": multiplier = 1024 * 1024
        case "g", "G": multiplier = 1024 * 1024 * 1024
        case "t", "T": multiplier = 1024 * 1024 * 1024 * 1024
        case "s":
            self = .seconds(number)
            return
        case "m":
            self = .seconds(number * 60)
            return
        case "h":
            self = .seconds(number * 3600)
            return
        default: return nil
        }
        let bytes = number * multiplier
        self = .bytes(bytes > Double(Self.byteRange.upperBound) ? Self.byteRange.upperBound + 1 : Int(bytes))
    }

    /// Whether the limit is within ``byteRange`` or ``secondRange``.
    public var isInRange: Bool {
        switch self {
        case .bytes(let bytes): return Self.byteRange.contains(bytes)
        case .seconds(let seconds): return Self.secondRange.contains(seconds)
        }
    }

    static func plainDecimal(_ text: Substring) -> Double? {
        let points = text.filter { $0 == "." }.count
        guard !text.isEmpty, text.count <= 40, points <= 1, text.contains(where: \.isASCIIDigit),
            text.allSatisfy({ $0 == "." || $0.isASCIIDigit })
        else { return nil }
        return Double(text)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
