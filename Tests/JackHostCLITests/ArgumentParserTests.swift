import XCTest

@testable import JackHostCLI

final class ArgumentParserTests: XCTestCase {
    let table = [
        OptionSpec("server", short: "s", value: "NAME", help: "server"),
        OptionSpec("connect", value: "PATTERN", repeatable: true, help: "connect"),
        OptionSpec("json", help: "json"),
        OptionSpec("channels", short: "c", value: "N", help: "channels"),
    ]

    func testLongShortInlineAndPositionals() throws {
        let parsed = try parseArguments(
            ["take.wav", "--server", "a", "-c", "4", "--connect=x:.*", "--connect", "y", "--json"],
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
            do {
                _ = try parseArguments(arguments, options: table, command: "record")
                return nil
            } catch { return error.message }
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
        XCTAssertEqual(JackHostCommand.run(["record", "a.wav", "b.wav"]), .usage)
        XCTAssertEqual(JackHostCommand.run(["run", "--embedded-server", "-s", "x", "--meter"]), .usage)
        XCTAssertEqual(JackHostCommand.run(["run"]), .usage)
        XCTAssertEqual(ExitStatus.serverLost.rawValue, 3)
    }

    func testCapturePlanValidatesBeforeTouchingJACK() throws {
        func plan(_ command: String, _ arguments: [String]) throws -> CapturePlan {
            try CapturePlan(
                command: command,
                parsed: parseArguments(arguments, options: command == "run" ? CommandTables.run : CommandTables.record, command: command))
        }
        let record = try plan("record", [NSTemporaryDirectory() + "/plan.flac", "--split", "30s"])
        XCTAssertEqual(record.container, .flac, "inferred from the path when recording")
        XCTAssertEqual(record.recordSampleFormat, .int24, "FLAC defaults to 24-bit")
        XCTAssertEqual(record.split, .seconds(30))
        XCTAssertThrowsError(try plan("record", ["x.wav", "--connect", "a", "--no-auto-connect"]))
        let run = try plan("run", ["--meter", "--stream", "--sample-format", "8.24"])
        XCTAssertEqual(run.streamSampleFormat, .fixed8_24)
        XCTAssertTrue(run.meter && run.stream)
    }

    func testNumbersAreDecimalRangeCheckedAndNeverTrap() throws {
        XCTAssertEqual(ValueParsing.decimal("90"), 90)
        XCTAssertEqual(ValueParsing.decimal("2.5"), 2.5)
        XCTAssertEqual(ValueParsing.decimal("-1"), -1)
        for text in ["0x10", "1e15", "inf", "nan", " 2", "2 ", "+2", "", ".", "1.2.3", "١٢"] {
            XCTAssertNil(ValueParsing.decimal(text), text)
        }
        func message(_ body: () throws -> Any) -> String {
            do { return "accepted \(try body())" } catch { return String(describing: error) }
        }
        XCTAssertEqual(
            message { try ValueParsing.seconds("1e300", option: "duration") },
            "--duration 1e300 is not a decimal number; use 0.001 to 31536000 seconds, e.g. 90 or 2.5")
        XCTAssertEqual(
            message { try ValueParsing.seconds("100000000000", option: "duration") },
            "--duration 100000000000 is out of range; use 0.001 to 31536000 seconds")
        XCTAssertEqual(
            message { try ValueParsing.seconds("0x10", option: "duration") },
            "--duration 0x10 is not a decimal number; use 0.001 to 31536000 seconds, e.g. 90 or 2.5")
        XCTAssertEqual(
            message { try ValueParsing.wholeNumber("0x2", option: "channels", range: 1...1024) },
            "--channels 0x2 is not a whole number; use a whole number from 1 to 1024")
        XCTAssertEqual(
            message { try ValueParsing.wholeNumber("99999999999999999999999", option: "channels", range: 1...1024) },
            "--channels 99999999999999999999999 is out of range; use a whole number from 1 to 1024")
        XCTAssertEqual(
            message { try ValueParsing.wholeNumber("2.5", option: "channels", range: 1...1024) },
            "--channels 2.5 is not a whole number; use a whole number from 1 to 1024")
        XCTAssertEqual(message { try ValueParsing.split("9000000000G") }, "--split 9000000000G is out of range; use 64K to 1024T, or 1s to 8760h")
        XCTAssertEqual(message { try ValueParsing.split("2G") }, "accepted bytes(2147483648)")
        XCTAssertTrue(
            message { try ValueParsing.seconds(String(repeating: "9", count: 500), option: "duration") }.count < 140,
            "a hostile value is shortened in the message")
    }

    func testContainerComesFromTheExtensionAndMustAgreeWithFormat() throws {
        func container(_ path: String?, _ format: String? = nil) -> String {
            do { return try CapturePlan.container(path: path, formatName: format).rawValue } catch { return "refused: \(error)" }
        }
        XCTAssertEqual(container("take.flac"), "flac")
        XCTAssertEqual(container("take.WAV"), "wav")
        XCTAssertEqual(container("take.wav", "rf64"), "rf64", "RF64 files are commonly named .wav")
        XCTAssertEqual(container("-"), "wav")
        XCTAssertEqual(container(nil, "caf"), "caf")
        XCTAssertEqual(container("take.bak", "w64"), "w64", "an extension that names no audio format is left to --format")
        XCTAssertEqual(container("take.ogg"), "ogg")
        XCTAssertEqual(container("take.OGA"), "ogg", ".oga is Ogg audio")
        XCTAssertEqual(container("take.opus"), "opus")
        XCTAssertEqual(container("take.mp3"), "mp3")
        XCTAssertTrue(container("take.m4a").hasPrefix("refused: jackhost does not write M4A files"))
        XCTAssertTrue(container("take.aiff").hasPrefix("refused: jackhost does not write AIFF files"))
        XCTAssertTrue(container("take.flac", "wav").hasPrefix("refused: take.flac does not match --format wav"))
        XCTAssertTrue(container("take.mp3", "wav").hasPrefix("refused: take.mp3 does not match --format wav"))
        XCTAssertTrue(container("take.m4a", "wav").hasPrefix("refused: take.m4a does not match --format wav"))
        XCTAssertTrue(container("take").contains("has no extension"))
        XCTAssertTrue(container("dir.d/take").contains("has no extension"))
        XCTAssertTrue(container("take.bak").contains("from its extension \".bak\""))
    }
}
