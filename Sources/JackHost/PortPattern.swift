import Glibc

/// Checks a port pattern before libjack matches port names with it.
///
/// JACK matches patterns as POSIX extended regular expressions (jack2's `jack_get_ports`
/// compiles them with `regcomp(REG_EXTENDED | REG_NOSUB)`). glibc's matcher is polynomial
/// for every pattern except two kinds, which can burn seconds to minutes of CPU or gigabytes
/// of memory inside libjack, where no signal can stop them:
/// - **back-references** (`\1` … `\9`) make glibc backtrack: `(a*)*\1c` against a long port
///   name runs for tens of seconds;
/// - **nested counted repetition** is expanded when compiled: `((a{255}){255}){255}` takes
///   3.4 GB and seconds to compile.
///
/// So a pattern is refused when it has a back-reference, when its counted repetitions would
/// expand it past ``maximumExpandedSize`` atoms, when it is longer than ``maximumBytes``, or
/// when `regcomp` rejects its syntax (with `regerror`'s reason), instead of JACK silently
/// matching nothing.
public enum PortPattern {
    /// The longest pattern accepted, in UTF-8 bytes.
    public static let maximumBytes = 1024
    /// The most atoms a pattern may expand to once counted repetitions (`{m,n}`) are unrolled.
    public static let maximumExpandedSize = 10_000

    /// Throws ``JackError/invalidPattern(pattern:reason:)`` when `pattern` is unsafe or malformed.
    public static func check(_ pattern: String) throws(JackError) {
        let bytes = Array(pattern.utf8)
        if bytes.isEmpty { throw .invalidPattern(pattern: pattern, reason: "it is empty") }
        if bytes.count > maximumBytes {
            throw .invalidPattern(pattern: pattern, reason: "longer than \(maximumBytes) bytes")
        }
        var scanner = Scanner(bytes: bytes)
        let size = scanner.patternSize()
        if scanner.hasBackReference {
            throw .invalidPattern(pattern: pattern, reason: "back-references such as \\1 are not supported")
        }
        if size > maximumExpandedSize {
            throw .invalidPattern(pattern: pattern, reason: "its {m,n} repetitions expand past \(maximumExpandedSize) atoms")
        }
        var regex = regex_t()
        let code = regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB)
        defer { if code == 0 { regfree(&regex) } }
        guard code == 0 else {
            var message = [CChar](repeating: 0, count: 128)
            regerror(code, &regex, &message, message.count)
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .invalidPattern(pattern: pattern, reason: reason.lowercased())
        }
    }

    /// Estimates the size a pattern expands to, tolerating malformed input (regcomp judges
    /// the syntax afterwards; this only has to run first and never under-count nesting).
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var hasBackReference = false

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The whole pattern; a stray ')' ends nothing here, so everything after it is scanned too.
        mutating func patternSize() -> Int {
            var size = sequenceSize()
            while index < bytes.count {
                index += 1
                size = min(size &+ sequenceSize(), Int.max / 4)
            }
            return size
        }

        /// The size of alternatives up to a closing parenthesis or the end: the largest branch.
        mutating func sequenceSize() -> Int {
            var largest = 0
            var branch = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ")") { break }
                if byte == UInt8(ascii: "|") {
                    largest = max(largest, branch)
                    branch = 0
                    index += 1
                    continue
                }
                let atom = atomSize()
                branch = min(branch &+ atom &* repetitionFactor(), Int.max / 4)
            }
            return max(largest, branch)
        }

        /// One atom: a group, a bracket expression, an escape or a single character.
        mutating func atomSize() -> Int {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "("):
                let inner = sequenceSize()
                if index < bytes.count { index += 1 }  // the ')'
                return max(inner, 1)
            case UInt8(ascii: "["):
                skipBracketExpression()
                return 1
            case UInt8(ascii: "\\"):
                if index < bytes.count {
                    if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) { hasBackReference = true }
                    index += 1
                }
                return 1
            default:
                return 1
            }
        }

        /// The factor a following `{m}`, `{m,}` or `{m,n}` multiplies by (1 for `*`, `+`, `?`:
        /// they loop, they do not copy). Several in a row multiply.
        mutating func repetitionFactor() -> Int {
            var factor = 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "*") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "?") {
                    index += 1
                    continue
                }
                guard byte == UInt8(ascii: "{") else { break }
                index += 1
                var numbers: [Int] = [0]
                var sawComma = false
                while index < bytes.count && bytes[index] != UInt8(ascii: "}") {
                    let digit = bytes[index]
                    if digit == UInt8(ascii: ",") {
                        sawComma = true
                        numbers.append(0)
                    } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
                        numbers[numbers.count - 1] = min(numbers[numbers.count - 1] &* 10 &+ Int(digit - UInt8(ascii: "0")), 1 << 20)
                    }
                    index += 1
                }
                if index < bytes.count { index += 1 }  // the '}'
                // {m,} unrolls m copies and a loop.
                let bound = sawComma && numbers.count == 2 && numbers[1] == 0 ? numbers[0] + 1 : numbers.max() ?? 1
                factor = min(factor &* max(bound, 1), 1 << 30)
            }
            return factor
        }

        /// Skips `[...]`, where a leading `]` is literal and `[:class:]`, `[.x.]`, `[=x=]` nest.
        mutating func skipBracketExpression() {
            if index < bytes.count && bytes[index] == UInt8(ascii: "^") { index += 1 }
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1 }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "]") { return }
                if byte == UInt8(ascii: "["), index < bytes.count,
                    [UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "=")].contains(bytes[index])
                {
                    let delimiter = bytes[index]
                    index += 1
                    while index + 1 < bytes.count && !(bytes[index] == delimiter && bytes[index + 1] == UInt8(ascii: "]")) {
                        index += 1
                    }
                    index += 2
                }
            }
        }
    }
}
