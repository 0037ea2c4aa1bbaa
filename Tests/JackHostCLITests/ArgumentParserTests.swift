import JackHost
import JackHostConsumers
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

    /// `--connect-stream NAME`, repeatable, becomes ``CaptureHost/Connections/streams(_:)`` in
    /// the order given; it excludes `--connect` and `--no-auto-connect`, and a name JACK can't
    /// have as a client name is refused before JACK is touched.
    func testConnectStreamIsRepeatableAndExcludesTheOtherWirings() throws {
        func message(_ arguments: [String]) -> String {
            do {
                let plan = try CapturePlan(
                    command: "record", parsed: parseArguments(["x.wav"] + arguments, options: CommandTables.record, command: "record"))
                return "\(plan.connections)"
            } catch { return (error as? UsageError)?.message ?? "\(error)" }
        }
        XCTAssertEqual(message(["--connect-stream", "Stage Left"]), "\(CaptureHost.Connections.streams(["Stage Left"]))")
        XCTAssertEqual(
            message(["--connect-stream", "Stage Left", "--connect-stream", "Stage Right"]),
            "\(CaptureHost.Connections.streams(["Stage Left", "Stage Right"]))")
        XCTAssertEqual(
            message(["--connect-stream", "Stage Left", "--connect", "system:.*"]), "--connect-stream and --connect exclude each other; give one")
        XCTAssertEqual(
            message(["--connect-stream", "Stage Left", "--no-auto-connect"]),
            "--connect-stream and --no-auto-connect exclude each other; give one")
        XCTAssertEqual(message(["--connect-stream", "a:b"]), "--connect-stream: client name \"a:b\" is not usable; use 1-63 bytes without ':'")
        XCTAssertEqual(message(["--connect-stream", ""]), "--connect-stream: client name \"\" is not usable; use 1-63 bytes without ':'")
        XCTAssertEqual(message(["--connect", "system:.*"]), "\(CaptureHost.Connections.patterns(["system:.*"]))", "--connect as before")
    }

    /// `info --json` keeps the session's keys and adds `streams`; the text gives one line per stream.
    func testInfoReportAddsStreamsBesideTheSessionKeys() throws {
        let session = AudioSessionInfo(
            sampleRate: 48000, bufferSize: 1024, inputNumberOfChannels: 2, capturePorts: ["Stage Left:capture_FL", "Stage Left:capture_FR"])
        let streams = [
            JackStream(name: "Stage Left", ports: ["Stage Left:capture_FL", "Stage Left:capture_FR"], isPhysical: true),
            JackStream(name: "player", ports: ["player:out_1"]),
        ]
        let report = InfoReport(session: session, streams: streams)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let sessionObject = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(session)) as? [String: Any])
        XCTAssertEqual(Set(object.keys), Set(sessionObject.keys).union(["streams"]))
        let listed = try XCTUnwrap(object["streams"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["name"] as? String }, ["Stage Left", "player"])
        XCTAssertEqual(listed.map { $0["channels"] as? Int }, [2, 1])
        XCTAssertEqual(listed.map { $0["physical"] as? Bool }, [true, false])
        XCTAssertTrue(report.text.contains("streams:           Stage Left: FL FR (2 channels, physical)\n"), report.text)
        XCTAssertTrue(report.text.hasSuffix("\n                   player: 1 (1 channel)"), report.text)
        XCTAssertTrue(InfoReport(session: session, streams: []).text.hasSuffix("streams:           (none)"))
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

    /// A `--split` below its range says which way it is wrong and what to use instead, not that it is malformed.
    func testSplitBelowItsRangeIsTooShortOrTooSmall() {
        func message(_ text: String) -> String {
            do { return "accepted \(try ValueParsing.split(text))" } catch { return error.message }
        }
        XCTAssertEqual(message("0s"), "--split 0s is too short; use at least 1s (or a size such as 2G)")
        XCTAssertEqual(message("0.5s"), "--split 0.5s is too short; use at least 1s (or a size such as 2G)")
        XCTAssertEqual(message("0m"), "--split 0m is too short; use at least 1s (or a size such as 2G)")
        XCTAssertEqual(message("0M"), "--split 0M is too small; use at least 64K (or a duration such as 30m)")
        XCTAssertEqual(message("1K"), "--split 1K is too small; use at least 64K (or a duration such as 30m)")
        XCTAssertEqual(message("1s"), "accepted seconds(1.0)")
        XCTAssertEqual(message("64K"), "accepted bytes(65536)")
        XCTAssertTrue(message("soon").contains("is neither a size"), message("soon"))
        XCTAssertTrue(message("-1s").contains("is neither a size"), message("-1s"))
    }

    /// `--keep` accepts exactly what its message names, 1m to 520w, and says "out of range" for
    /// a well-formed age outside it.
    func testKeepAcceptsExactlyTheRangeItsMessageNames() throws {
        func keep(_ text: String) -> String {
            do {
                let arguments = [NSTemporaryDirectory() + "/log-%Y%m%d-%H%M%S.wav", "--split", "1h", "--keep", text]
                let plan = try CapturePlan(
                    command: "record", parsed: parseArguments(arguments, options: CommandTables.record, command: "record"))
                return "kept \(plan.takeOptions.keepSeconds.map { ValueParsing.format($0) } ?? "nil")"
            } catch { return (error as? UsageError)?.message ?? "\(error)" }
        }
        let accepted = "use a number with s, m, h, d or w, from 1m to 520w (for example 90m, 12h, 7d, 2w)"
        XCTAssertEqual(keep("1m"), "kept 60")
        XCTAssertEqual(keep("60s"), "kept 60")
        XCTAssertEqual(keep("520w"), "kept \(520 * 7 * 86400)")
        XCTAssertEqual(keep("3640d"), "kept \(3640 * 86400)")
        XCTAssertEqual(keep("521w"), "--keep 521w is out of range; \(accepted)")
        XCTAssertEqual(keep("3641d"), "--keep 3641d is out of range; \(accepted)")
        XCTAssertEqual(keep("30s"), "--keep 30s is out of range; \(accepted)")
        XCTAssertEqual(keep("59s"), "--keep 59s is out of range; \(accepted)")
        XCTAssertEqual(keep("0m"), "--keep 0m is out of range; \(accepted)")
        XCTAssertEqual(keep("7y"), "--keep 7y is not an age; \(accepted)")
        XCTAssertEqual(keep("-7d"), "--keep -7d is not an age; \(accepted)")
    }

    /// `--utc` (record and run) names and aligns in UTC, and reaches the recorder's settings and
    /// its retention; where it would change nothing (an exact name without `--align`) it is one
    /// line of refusal, as is a date-folder template whose level would leave its tree.
    func testUTCNamesAndAlignsALogAndIsRefusedWhereItChangesNothing() throws {
        let folder = NSTemporaryDirectory()
        func plan(_ command: String, _ arguments: [String]) throws -> CapturePlan {
            try CapturePlan(
                command: command,
                parsed: parseArguments(arguments, options: command == "run" ? CommandTables.run : CommandTables.record, command: command))
        }
        func message(_ command: String, _ arguments: [String]) -> String {
            do { return "accepted \(try plan(command, arguments).takeOptions.timeZone)" } catch {
                return (error as? UsageError)?.message ?? "\(error)"
            }
        }
        let template = folder + "/%Y/%m/%d/%H%M.wav"
        let logged = try plan("record", [template, "--split", "1h", "--align", "--utc", "--keep", "7d"])
        XCTAssertEqual(logged.takeOptions.timeZone, .utc)
        XCTAssertEqual(try plan("record", [template, "--split", "1h"]).takeOptions.timeZone, .local, "local time without --utc")
        XCTAssertEqual(message("run", ["--record", template, "--utc"]), "accepted utc")
        XCTAssertEqual(message("record", ["--utc"]), "accepted utc", "an automatic name is a time stamp too")
        XCTAssertEqual(message("record", [folder + "/take.wav", "--split", "1h", "--align", "--utc"]), "accepted utc")
        let settings = logged.takeOptions.settings(
            adding: Recorder.Settings(), host: CaptureHost(configuration: .init()), name: .template(template))
        XCTAssertEqual(settings.timeZone, .utc)
        XCTAssertEqual(settings.retention?.timeZone, .utc)
        XCTAssertEqual(
            message("record", [folder + "/take.wav", "--utc"]),
            "--utc names and aligns a log in UTC; give FILE as a template such as '%Y/%m/%d/%H%M%S.wav', leave FILE out, or add --split DURATION --align"
        )
        XCTAssertEqual(message("run", ["--meter", "--utc"]), "--utc applies to --record FILE; add --record or leave it out")
        XCTAssertEqual(
            message("record", [folder + "/%Y/../%m%d.wav"]),
            "cannot use the name template \(folder)/%Y/../%m%d.wav: a directory named .. after a field would leave the log's tree; name every level")
        XCTAssertTrue(CommandTables.record.contains { $0.long == "utc" } && CommandTables.run.contains { $0.long == "utc" })
    }

    /// An extension that names no format is quoted back as the user wrote it, case and all.
    func testAnUnknownExtensionIsQuotedWithItsCase() {
        func message(_ path: String) -> String {
            do { return "accepted \(try CapturePlan.container(path: path, formatName: nil))" } catch { return error.message }
        }
        XCTAssertEqual(
            message("log-%Y%m%d.%H"),
            "cannot tell the container of log-%Y%m%d.%H from its extension \".%H\"; use \(CapturePlan.writableList(dots: true)), or pass --format")
        XCTAssertTrue(message("take.BAK").contains("from its extension \".BAK\""), message("take.BAK"))
        XCTAssertEqual(message("take.WAV"), "accepted wav")
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
