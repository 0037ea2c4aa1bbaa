import FoundationEssentials
import Glibc

/// A small, table-driven GNU-style argument parser.
///
/// Supports `--long VALUE`, `--long=VALUE`, `-s VALUE`, flags, repeatable options,
/// positionals and `--` to end options. No outside package is available on the
/// machines this builds on, so this is deliberately small and fully unit-tested.
public struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes, e.g. "server".
    public var long: String
    /// An optional one-letter short name.
    public var short: Character?
    /// The placeholder shown in help, e.g. "NAME"; nil for a flag.
    public var valueName: String?
    /// Whether the option may be given more than once.
    public var repeatable: Bool
    /// One line of help.
    public var help: String
    /// Left out of `--help`: for jackhost's own use (the child process of an isolated plugin).
    public var hidden: Bool

    /// Describes an option.
    public init(
        _ long: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false, hidden: Bool = false, help: String
    ) {
        self.long = long
        self.short = short
        self.valueName = value
        self.repeatable = repeatable
        self.hidden = hidden
        self.help = help
    }

    /// Whether the option takes a value.
    public var takesValue: Bool { valueName != nil }
}

/// The result of parsing: option values by long name, flags, and positionals.
public struct ParsedArguments: Sendable, Equatable {
    /// Values by long option name, in the order given.
    public var values: [String: [String]] = [:]
    /// Flags that were present, by long name.
    public var flags: Set<String> = []
    /// Arguments that are not options.
    public var positionals: [String] = []

    /// The last value of an option, or nil.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Whether a flag was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }
}

/// A command-line mistake; the CLI prints it as one line and exits with status 2.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The one-line message.
    public var message: String
    /// Creates an error with a message.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// Parses arguments against a table of options.
public func parseArguments(_ arguments: [String], options: [OptionSpec], command: String) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments()
    var index = 0
    func spec(long: String) -> OptionSpec? { options.first { $0.long == long } }
    func spec(short: Character) -> OptionSpec? { options.first { $0.short == short } }
    func record(_ option: OptionSpec, value: String?, spelled: String) throws(UsageError) {
        if !option.repeatable && (result.values[option.long] != nil || result.flags.contains(option.long)) {
            throw UsageError("\(spelled) given twice; give it once (see `jackhost \(command) --help`)")
        }
        if let value { result.values[option.long, default: []].append(value) } else { result.flags.insert(option.long) }
    }
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if argument == "--" {
            result.positionals.append(contentsOf: arguments[index...])
            break
        }
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let option = spec(long: name) else {
                throw UsageError("unknown option --\(name) for `jackhost \(command)`; see `jackhost \(command) --help`")
            }
            if option.takesValue {
                if let inline {
                    try record(option, value: inline, spelled: "--\(name)")
                } else {
                    guard index < arguments.count else {
                        throw UsageError("--\(name) needs a value (\(option.valueName!))")
                    }
                    try record(option, value: arguments[index], spelled: "--\(name)")
                    index += 1
                }
            } else {
                if inline != nil { throw UsageError("--\(name) takes no value") }
                try record(option, value: nil, spelled: "--\(name)")
            }
        } else if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
            let letters = Array(argument.dropFirst())
            guard letters.count == 1, let option = spec(short: letters[0]) else {
                throw UsageError("unknown option \(argument) for `jackhost \(command)`; see `jackhost \(command) --help`")
            }
            if option.takesValue {
                guard index < arguments.count else { throw UsageError("\(argument) needs a value (\(option.valueName!))") }
                try record(option, value: arguments[index], spelled: argument)
                index += 1
            } else {
                try record(option, value: nil, spelled: argument)
            }
        } else {
            result.positionals.append(argument)
        }
    }
    return result
}

/// Formats an options table for `--help`.
public func helpText(for options: [OptionSpec]) -> String {
    let rows = options.filter { !$0.hidden }.map { option -> (String, String) in
        var left = option.short.map { "-\($0), " } ?? "    "
        left += "--\(option.long)"
        if let value = option.valueName { left += " \(value)" }
        return (left, option.help)
    }
    let width = (rows.map { $0.0.count }.max() ?? 0) + 2
    return rows.map { "  " + $0.0.padded(to: width) + $0.1 }.joined(separator: "\n")
}
