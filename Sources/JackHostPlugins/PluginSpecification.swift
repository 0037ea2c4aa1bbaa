/// What `--plugin PATH[:key=value,...]` asks for: a shared object and its option values.
///
/// The path ends at the first `:`; options are `key=value` pairs separated by `,`; a value
/// may contain `=`. A backslash makes the next character literal, so paths and values can
/// hold `:`, `,` or `\` (`out\,1.txt`). Option keys and values are checked against the
/// plugin's declarations when it is loaded, not here.
///
/// ```swift
/// let spec = try PluginSpecification(parsing: "./libFrequencyEstimator.so:output=/tmp/f.txt,max-frequency=5000")
/// spec.path      // "./libFrequencyEstimator.so"
/// spec.options   // [("output", "/tmp/f.txt"), ("max-frequency", "5000")]
/// ```
public struct PluginSpecification: Sendable {
    /// The shared object's path, as given.
    public let path: String
    /// The option values in the order given.
    public let options: [(key: String, value: String)]

    /// Creates a specification from parts.
    public init(path: String, options: [(key: String, value: String)] = []) {
        self.path = path
        self.options = options
    }

    /// Parses `PATH[:key=value,...]`.
    public init(parsing text: String) throws(PluginError) {
        func malformed(_ reason: String) -> PluginError { .malformedSpecification(text: text, reason: reason) }
        let (pathPart, optionPart) = try Self.split(text, atFirst: ":", malformed: malformed)
        guard !pathPart.isEmpty else { throw malformed("the path is empty") }
        var options: [(key: String, value: String)] = []
        if let optionPart {
            guard !optionPart.isEmpty else { throw malformed("nothing follows ':'") }
            for pair in try Self.splitAll(optionPart, at: ",", malformed: malformed) {
                let (key, value) = try Self.split(pair, atFirst: "=", malformed: malformed)
                let trimmedKey = key.trimmingSpaces
                guard let value else { throw malformed("\"\(Self.unescaped(pair))\" has no '=value'") }
                guard !trimmedKey.isEmpty else { throw malformed("an option has no key before '='") }
                options.append((Self.unescaped(trimmedKey), Self.unescaped(value)))
            }
        }
        self.init(path: Self.unescaped(pathPart), options: options)
    }

    /// The text form, escaped so that ``init(parsing:)`` reads it back.
    public var text: String {
        func escape(_ part: String, _ specials: Set<Character>) -> String {
            String(part.flatMap { specials.contains($0) ? ["\\", $0] : [$0] })
        }
        let head = escape(path, [":", "\\"])
        guard !options.isEmpty else { return head }
        let pairs = options.map { escape($0.key, [",", "=", "\\"]) + "=" + escape($0.value, [",", "\\"]) }
        return head + ":" + pairs.joined(separator: ",")
    }

    // Splitting works on the escaped text, so escapes survive until the parts are final.

    /// Splits at the first unescaped `separator`; the second part is nil if there is none.
    private static func split(
        _ text: String, atFirst separator: Character,
        malformed: (String) -> PluginError
    ) throws(PluginError) -> (String, String?) {
        var escaped = false
        for index in text.indices {
            let character = text[index]
            if escaped {
                escaped = false
                continue
            }
            if character == "\\" {
                escaped = true
                continue
            }
            if character == separator {
                return (String(text[..<index]), String(text[text.index(after: index)...]))
            }
        }
        if escaped { throw malformed("it ends with a lone '\\'") }
        return (text, nil)
    }

    /// Splits at every unescaped `separator`.
    private static func splitAll(
        _ text: String, at separator: Character,
        malformed: (String) -> PluginError
    ) throws(PluginError) -> [String] {
        var parts: [String] = []
        var rest = text
        while true {
            let (head, tail) = try split(rest, atFirst: separator, malformed: malformed)
            parts.append(head)
            guard let tail else { return parts }
            rest = tail
        }
    }

    /// Removes escaping backslashes.
    private static func unescaped(_ text: String) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if escaped || character != "\\" {
                result.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces (Foundation-free).
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
