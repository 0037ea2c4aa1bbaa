/// The README's "The command line" block, generated from ``CommandCatalog``: one entry per
/// command with every option its `--help` shows (but `--help` itself), and the options every
/// capture command shares listed once, as CAPTURE OPTIONS. `jackhost help --synopsis` prints it,
/// and a test holds README.md to it byte for byte, so the README cannot name an option jackhost
/// lacks or leave one out.
enum CommandSynopsis {
    /// The widest line the block wraps to.
    static let width = 110

    /// The options record, meter, stream and run share, shown once.
    static let captureOptions = CommandTables.host

    /// The label the commands that take ``captureOptions`` show in their place.
    static let captureLabel = "CAPTURE OPTIONS"

    /// The whole block, without the fence.
    static func render() -> String {
        let column = "jackhost ".count + (CommandCatalog.all.map(\.name.count).max() ?? 0) + 2
        var lines: [String] = []
        for entry in CommandCatalog.all {
            var words = operands(of: entry)
            var options = entry.visibleOptions.filter { $0.long != CommandTables.help.long }
            if options.starts(with: captureOptions) {
                words.append("[\(captureLabel)]")
                options.removeFirst(captureOptions.count)
            }
            words += options.map { word(for: $0, in: entry.name) }
            lines += wrapped(words, after: "jackhost " + entry.name, column: column)
        }
        lines.append("")
        lines += wrapped(captureOptions.map { word(for: $0, in: "record") }, after: captureLabel, column: column)
        return lines.joined(separator: "\n")
    }

    /// What the synopsis names before its options: "[FILE]", "PATH", "bash|zsh|fish".
    static func operands(of entry: CommandEntry) -> [String] {
        Array(entry.synopsis.split(separator: " ").map(String.init).prefix { !$0.hasPrefix("[-") && $0 != "[OPTIONS]" })
    }

    /// `[--connect PATTERN]...`: the option, its value (the choices, where there are a few), and
    /// the dots when it may be repeated.
    static func word(for option: OptionSpec, in command: String) -> String {
        var text = "--" + option.long
        if case .choices(let choices) = CommandCatalog.completion(of: option, in: command) {
            text += " " + choices.joined(separator: "|")
        } else if let value = option.valueName {
            text += " " + value
        }
        return "[\(text)]" + (option.repeatable ? "..." : "")
    }

    /// `label` padded to `column`, then the words, wrapped at ``width`` with continuation lines
    /// indented to `column`.
    private static func wrapped(_ words: [String], after label: String, column: Int) -> [String] {
        let indent = String(repeating: " ", count: column)
        var lines: [String] = []
        var line = label + String(repeating: " ", count: max(1, column - label.count))
        var lineHasWords = false
        for word in words {
            if lineHasWords && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                lineHasWords = false
            }
            line += (lineHasWords ? " " : "") + word
            lineHasWords = true
        }
        lines.append(line)
        return lines
    }
}
