import Foundation
import XCTest

@testable import JackHostCLI

/// jackhost(1) and the bash, zsh and fish completions against the command tables: every
/// option of every command appears, under that command, and nothing else does.
final class GeneratedDocsTests: XCTestCase {
    /// What the tables say: command name to its visible options' spellings ("--server", "-s").
    private var expected: [String: Set<String>] {
        Dictionary(
            uniqueKeysWithValues: CommandCatalog.all.map { entry in
                (entry.name, Set(entry.visibleOptions.flatMap { ["--\($0.long)"] + ($0.short.map { ["-\($0)"] } ?? []) }))
            })
    }

    private func matches(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
        }
    }

    func testTheCatalogIsWhatTheCommandsParse() {
        XCTAssertEqual(CommandCatalog.info.options, CommandTables.info)
        XCTAssertEqual(CommandCatalog.record.options, CommandTables.record)
        XCTAssertEqual(CommandCatalog.meter.options, CommandTables.meter)
        XCTAssertEqual(CommandCatalog.stream.options, CommandTables.stream)
        XCTAssertEqual(CommandCatalog.run.options, CommandTables.run)
        XCTAssertEqual(CommandCatalog.signal.options, SignalCommand.options)
        XCTAssertEqual(CommandCatalog.pluginInspect.options, PluginCommand.inspectOptions)
        XCTAssertEqual(CommandCatalog.pluginNew.options, PluginCommand.newOptions)
        XCTAssertTrue(CommandTables.record.contains { $0.hidden == false && $0.long == "keep" }, "TakeOptions.table is part of record")
        for entry in CommandCatalog.all {
            for option in entry.visibleOptions {
                XCTAssertTrue(entry.usage.contains("--\(option.long)"), "\(entry.name) --help lists --\(option.long)")
            }
        }
        // Every top-level command is in `jackhost --help`'s list, and dispatches (its --help succeeds).
        for name in CommandCatalog.topLevelNames {
            XCTAssertTrue(CommandTables.overview.contains("\n  \(name) "), "the overview lists \(name)")
        }
        for entry in CommandCatalog.all {
            XCTAssertEqual(JackHostCommand.run(entry.name.split(separator: " ").map(String.init) + ["--help"]), .success, entry.name)
        }
    }

    func testTheManPageListsEveryOptionOfEveryCommandAndNothingElse() {
        let page = ManPage.render()
        var seen: [String: Set<String>] = [:]
        var current: String?
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, line) in lines.enumerated() {
            if line.hasPrefix(".SS \"jackhost ") {
                let title = line.dropFirst(".SS \"jackhost ".count).replacing("\\-", with: "-")
                current = CommandCatalog.all.map(\.name).filter { title.hasPrefix($0 + " ") }.max { $0.count < $1.count }
                XCTAssertNotNil(current, "a section for a command the tables do not have: \(line)")
                if let current { seen[current] = [] }
            } else if line.hasPrefix(".SH") {
                current = nil
            } else if line == ".TP", let command = current, index + 1 < lines.count {
                let tag = lines[index + 1].replacing("\\-", with: "-")
                for match in matches(#"\\fB(-{1,2}[A-Za-z0-9-]+)\\fR"#, in: tag) { seen[command]!.insert(match[1]) }
            }
        }
        XCTAssertEqual(seen, expected)
        for status in CommandCatalog.exitStatuses {
            XCTAssertTrue(page.contains(".TP\n.B \(status.rawValue)\n"), "exit status \(status.rawValue)")
        }
        XCTAssertEqual(CommandCatalog.exitStatuses.map(\.rawValue), [0, 1, 2, 3, 4, 5])
        for paragraph in ManPage.sessionProse { XCTAssertTrue(page.contains(ManPage.escaped(paragraph)), paragraph) }
        for variable in CommandCatalog.environment { XCTAssertTrue(page.contains(".B \(variable.name)\n"), variable.name) }
        for paragraph in ManPage.overviewProse { XCTAssertTrue(page.contains(ManPage.escaped(paragraph)), paragraph) }
    }

    /// README.md, read from this checkout.
    private func readme() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The fenced block under "## The command line", without its fences.
    private func readmeCommandLineBlock() throws -> String {
        let text = try readme()
        let section = try XCTUnwrap(text.range(of: "\n## The command line\n"), "README.md has no \"## The command line\"")
        let rest = text[section.upperBound...]
        let open = try XCTUnwrap(rest.range(of: "```\n"), "no fenced block under \"## The command line\"")
        let close = try XCTUnwrap(rest[open.upperBound...].range(of: "\n```\n"), "the block under \"## The command line\" is not closed")
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// Command name to the long options a synopsis shows under it, CAPTURE OPTIONS expanded.
    private func optionsShown(inSynopsis synopsis: String) -> [String: Set<String>] {
        var shown: [String: Set<String>] = [:]
        var current: String?
        var shared: Set<String> = []
        var sharing: Set<String> = []
        let names = CommandCatalog.all.map(\.name)
        for line in synopsis.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("jackhost ") {
                let head = line.dropFirst("jackhost ".count)
                current = names.filter { head.hasPrefix($0 + " ") || head == $0 }.max { $0.count < $1.count }
                XCTAssertNotNil(current, "a synopsis line for a command the tables do not have: \(line)")
            } else if line.hasPrefix(CommandSynopsis.captureLabel) {
                current = CommandSynopsis.captureLabel
            } else if !line.hasPrefix(" ") {
                current = nil
            }
            guard let current else { continue }
            if line.contains("[\(CommandSynopsis.captureLabel)]") { sharing.insert(current) }
            let options = matches(#"\[(--[a-z0-9-]+)[\] ]"#, in: line).map { $0[1] }
            if current == CommandSynopsis.captureLabel {
                shared.formUnion(options)
            } else {
                shown[current, default: []].formUnion(options)
            }
        }
        for command in sharing { shown[command]!.formUnion(shared) }
        return shown
    }

    /// What the tables say each command takes, long options only, `--help` left out.
    private var expectedLongOptions: [String: Set<String>] {
        expected.mapValues { Set($0.filter { $0.hasPrefix("--") && $0 != "--help" }) }
    }

    /// Fails with the options `place` leaves out and those it names that the tables lack, by command.
    private func assertShowsExactlyTheTables(_ shown: [String: Set<String>], _ place: String, file: StaticString = #filePath, line: UInt = #line) {
        for (command, options) in expectedLongOptions.sorted(by: { $0.key < $1.key }) {
            let seen = shown[command] ?? []
            XCTAssertEqual(options.subtracting(seen).sorted(), [], "\(place) leaves out of `\(command)`", file: file, line: line)
            XCTAssertEqual(seen.subtracting(options).sorted(), [], "\(place) names for `\(command)`, unknown to the tables", file: file, line: line)
        }
        let unknown = Set(shown.keys).subtracting(expectedLongOptions.keys).sorted()
        XCTAssertEqual(unknown, [], "\(place) has commands the tables lack", file: file, line: line)
    }

    func testTheSynopsisListsEveryOptionOfEveryCommandAndNothingElse() {
        assertShowsExactlyTheTables(optionsShown(inSynopsis: CommandSynopsis.render()), "jackhost help --synopsis")
        XCTAssertEqual(JackHostCommand.run(["help", "--synopsis"]), .success)
    }

    /// The README's command-line block is `jackhost help --synopsis`, byte for byte; and, so that
    /// the failure says what drifted, every option each command takes is in it and no other.
    func testTheREADMECommandLineBlockIsTheGeneratedSynopsis() throws {
        let block = try readmeCommandLineBlock()
        assertShowsExactlyTheTables(optionsShown(inSynopsis: block), "README.md's command line")
        XCTAssertEqual(block, CommandSynopsis.render(), "README.md's command-line block is out of date: run scripts/sync-readme-synopsis")
    }

    /// The paragraph that spells out CAPTURE OPTIONS names exactly those options.
    func testTheREADMEDescribesEveryCaptureOptionAndNoOther() throws {
        let text = try readme()
        let start = try XCTUnwrap(text.range(of: "CAPTURE OPTIONS, which "), "README.md describes no CAPTURE OPTIONS")
        let end = try XCTUnwrap(text[start.upperBound...].range(of: "\n\n"))
        let paragraph = String(text[start.upperBound..<end.lowerBound]).replacing("\n", with: " ")
        let named = Set(matches(#"`(--[a-z0-9-]+)"#, in: paragraph).map { $0[1] }).subtracting(["--help", "--version"])
        let capture = Set(CommandSynopsis.captureOptions.map { "--" + $0.long })
        XCTAssertEqual(capture.subtracting(named).sorted(), [], "README.md's CAPTURE OPTIONS paragraph leaves out")
        XCTAssertEqual(named.subtracting(capture).sorted(), [], "README.md's CAPTURE OPTIONS paragraph names, not capture options")
    }

    /// The modules a markdown table names in its first column, from `heading` to the next `## `.
    private func modulesInTable(of file: String, under heading: String) throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "\n\(heading)\n"), "\(file) has no \(heading)")
        let section = text[start.upperBound...].split(separator: "\n## ", maxSplits: 1).first ?? ""
        var named: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = String(line.split(separator: "|").first ?? "")
            for match in matches(#"`(?:Sources/)?([A-Za-z][A-Za-z0-9]*)`"#, in: cell) { named.insert(match[1]) }
        }
        return named
    }

    /// README's Design map and ARCHITECTURE.md's module table each name every module in Sources, and no other.
    func testTheModuleMapsNameEveryModule() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let modules = Set(try FileManager.default.contentsOfDirectory(atPath: sources.path))
        for (file, heading) in [("README.md", "## Design"), ("docs/ARCHITECTURE.md", "## Modules")] {
            let named = try modulesInTable(of: file, under: heading)
            XCTAssertEqual(modules.subtracting(named).sorted(), [], "\(file) leaves out of its module table")
            XCTAssertEqual(named.subtracting(modules).sorted(), [], "\(file) names modules Sources does not have")
        }
    }

    /// Every variable the sources read with getenv (or hand to hooks) is documented.
    func testEveryEnvironmentVariableTheSourcesReadIsDocumented() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var read: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let file as URL in files where ["swift", "c", "h"].contains(file.pathExtension) {
            // The test support library reads its own variables (JACKHOST_TEST_*); it is not installed.
            guard !file.path.contains("/JackHostTesting/") else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in matches(#"getenv\("([A-Z_]+)"\)"#, in: text) { read.insert(match[1]) }
            // SystemdNotifier reads a list: `let names = ["NOTIFY_SOCKET", ...]` then `names.map { getenv($0) ... }`.
            for match in matches(#"let names = \[("[A-Z_]+"(?:, "[A-Z_]+")*)\]"#, in: text) where text.contains("getenv($0)") {
                for name in matches(#""([A-Z_]+)""#, in: match[1]) { read.insert(name[1]) }
            }
            for match in matches(#""(JACKHOST_[A-Z]+)="#, in: text) { read.insert(match[1]) }
        }
        XCTAssertTrue(
            read.isSuperset(of: ["JACK_DEFAULT_SERVER", "JACKHOST_DEBUG_LIBJACK", "JACKHOST_SIMD", "NOTIFY_SOCKET", "WATCHDOG_USEC"]), "\(read)")
        let documented = Set(CommandCatalog.environment.map(\.name))
        XCTAssertEqual(read.subtracting(documented), [], "read by the sources but not in the man page")
    }

    func testBashCompletionOffersEveryOptionOfEveryCommandAndNothingElse() {
        let script = CompletionScript.render(.bash)
        var seen: [String: Set<String>] = [:]
        for match in matches(#"^\s*'([a-z ]+)'\)\n\s*options='([^']*)'"#, in: script) {
            seen[match[1]] = Set(match[2].split(separator: " ").map(String.init))
        }
        XCTAssertEqual(seen, expected)
        XCTAssertTrue(script.contains("compgen -W '\(CommandCatalog.topLevelNames.joined(separator: " ")) --help -h --version -V'"))
        XCTAssertTrue(script.contains("--connect) values='outputs'"), "--connect completes the server's output ports")
        XCTAssertTrue(script.contains("--format|-f) values='formats'"))
        XCTAssertTrue(script.contains("jackhost complete ports --$kind"))
    }

    func testZshCompletionOffersEveryOptionOfEveryCommandAndNothingElse() {
        let script = CompletionScript.render(.zsh)
        var seen: [String: Set<String>] = [:]
        var command: String?
        var group = ""
        for line in script.split(separator: "\n").map(String.init) {
            let trimmed = line.drop { $0 == " " }
            if let match = matches(#"^ *([a-z]+)\)$"#, in: line).first {
                let word = match[1]
                if word == "plugin" {
                    group = "plugin "
                    command = nil
                } else {
                    command = CommandCatalog.entry(group + word) != nil ? group + word : nil
                    if command == nil { group = "" }
                    if let command { seen[command] = [] }
                }
            } else if let command, trimmed.hasPrefix("'") || trimmed.hasPrefix("{") || trimmed.hasPrefix("'*'{") {
                for match in matches(#"\{(-[A-Za-z]),(--[a-z0-9-]+)\}"#, in: String(trimmed)) { seen[command]!.formUnion([match[1], match[2]]) }
                for match in matches(#"^'\*?(--[a-z0-9-]+)\["#, in: String(trimmed)) { seen[command]!.insert(match[1]) }
            }
        }
        XCTAssertEqual(seen, expected)
        XCTAssertTrue(script.contains("_jackhost_ports outputs"))
        XCTAssertTrue(script.hasPrefix("#compdef jackhost\n"))
    }

    func testFishCompletionOffersEveryOptionOfEveryCommandAndNothingElse() {
        let script = CompletionScript.render(.fish)
        var seen: [String: Set<String>] = Dictionary(uniqueKeysWithValues: CommandCatalog.all.map { ($0.name, []) })
        for match in matches(#"^complete -c jackhost -n '__jackhost_is ([a-z ]+)'((?: -s [A-Za-z])?)((?: -l [a-z0-9-]+)?)"#, in: script) {
            if !match[2].isEmpty { seen[match[1], default: []].insert("-" + match[2].dropFirst(4)) }
            if !match[3].isEmpty { seen[match[1], default: []].insert("--" + match[3].dropFirst(4)) }
        }
        // "plugin" itself offers its subcommands, not options.
        seen["plugin"] = nil
        XCTAssertEqual(seen, expected)
        XCTAssertTrue(script.contains("-l connect -x -a '(__jackhost_ports outputs)'"))
        XCTAssertTrue(script.contains("-l format -x -a '(jackhost complete formats 2>/dev/null)'"))
    }
}
