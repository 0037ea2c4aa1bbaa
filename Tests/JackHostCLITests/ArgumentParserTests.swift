@testable import JackHostCLI
import XCTest

final class ArgumentParserTests: XCTestCase {
    let table = [
        OptionSpec("server", short: "s", value: "NAME", help: "server"),
        OptionSpec("connect", value: "PATTERN", repeatable: true, help: "connect"),
        OptionSpec("json", help: "json"),
        OptionSpec("channels", short: "c", value: "N", help: "channels"),
    ]

    func testLongShortInlineAndPositionals() throws {
        let parsed = try parseArguments(["take.wav", "--server", "a", "-c", "4", "--connect=x:.*", "--connect", "y", "--json"],
                                        options: table, command: "record")
        XCTAssertEqual(parsed.value("server"), "a")
        XCTAssertEqual(parsed.value("channels"), "4")
        XCTAssertEqual(parsed.values["connect"], ["x:.*", "y"])
        XCTAssertTrue(parsed.has("json"))
        XCTAssertEqual(parsed.positionals, ["take.wav"])
    }

    func testDoubleDashEndsOptionsAndNegativeNumbersAreValues() throws {
        let parsed = try parseArguments(["--channels", "-3", "--", "--json"], options: table, command: "record")
        XCTAssertEqual(parsed.value("channels"), "-3")
        XCTAssertFalse(parsed.has("json"))
        XCTAssertEqual(parsed.positionals, ["--json"])
    }

    func testMistakesNameTheOptionAndTheRemedy() {
        func message(_ arguments: [String]) -> String? {
            do { _ = try parseArguments(arguments, options: table, command: "record"); return nil } catch { return error.message }
        }
        XCTAssertEqual(message(["--bogus"]), "unknown option --bogus for `jackhost record`; see `jackhost record --help`")
        XCTAssertEqual(message(["-x"]), "unknown option -x for `jackhost record`; see `jackhost record --help`")
        XCTAssertEqual(message(["--server"]), "--server needs a value (NAME)")
        XCTAssertEqual(message(["-s"]), "-s needs a value (NAME)")
        XCTAssertEqual(message(["--json=yes"]), "--json takes no value")
        XCTAssertEqual(message(["--server", "a", "--server", "b"]), "--server given twice; give it once (see `jackhost record --help`)")
    }

    func testHelpTextListsEveryOption() {
        let text = helpText(for: table)
        for option in table { XCTAssertTrue(text.contains("--\(option.long)"), option.long) }
        XCTAssertTrue(text.contains("-s, --server NAME"))
    }

    func testCommandDispatchReturnsDocumentedStatuses() {
        XCTAssertEqual(JackHostCommand.run([]), .usage)
        XCTAssertEqual(JackHostCommand.run(["nope"]), .usage)
        XCTAssertEqual(JackHostCommand.run(["--version"]), .success)
        XCTAssertEqual(JackHostCommand.run(["record", "--help"]), .success)
        XCTAssertEqual(JackHostCommand.run(["record"]), .usage)
        XCTAssertEqual(JackHostCommand.run(["run", "--embedded-server", "-s", "x", "--meter"]), .usage)
        XCTAssertEqual(JackHostCommand.run(["run"]), .usage)
        XCTAssertEqual(ExitStatus.serverLost.rawValue, 3)
    }

    func testCapturePlanValidatesBeforeTouchingJACK() throws {
        func plan(_ command: String, _ arguments: [String]) throws -> CapturePlan {
            try CapturePlan(command: command, parsed: parseArguments(arguments, options: command == "run" ? CommandTables.run : CommandTables.record, command: command))
        }
        let record = try plan("record", [NSTemporaryDirectory() + "/plan.flac", "--split", "30s"])
        XCTAssertEqual(record.container, nil, "inferred from the path when recording")
        XCTAssertEqual(record.recordSampleFormat, .int24, "FLAC defaults to 24-bit")
        XCTAssertEqual(record.split, .seconds(30))
        XCTAssertThrowsError(try plan("record", ["x.wav", "--connect", "a", "--no-auto-connect"]))
        let run = try plan("run", ["--meter", "--stream", "--sample-format", "8.24"])
        XCTAssertEqual(run.streamSampleFormat, .fixed8_24)
        XCTAssertTrue(run.meter && run.stream)
    }
}
