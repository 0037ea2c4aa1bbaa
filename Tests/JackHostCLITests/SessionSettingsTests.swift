import XCTest

@testable import JackHostCLI

/// `jackhost.conf`: the settings a session stores, read line by line into `jackhost run`'s
/// arguments, with one clear line for each way a file can be wrong.
final class SessionSettingsTests: XCTestCase {
    let options = CommandCatalog.run.options

    func testTheDefaultFileReadsAsARequestTriggeredWAVTakeInTheTakesFolder() throws {
        let settings = try SessionSettings(text: SessionSettings.defaultText, runOptions: options)
        XCTAssertFalse(settings.recordOnLoad)
        XCTAssertEqual(settings.options, [])
        XCTAssertEqual(
            settings.runArguments(folder: "/s/jackhost.nX", displayName: "Gig 3/4 100%", clientID: "jackhost.nX"),
            ["--record=/s/jackhost.nX/takes/Gig 3-4 100%%-%Y%m%d-%H%M%S.wav", "--name=jackhost.nX", "--signal-trigger", "--reconnect"])
        // And `run` itself accepts them, once the folder is there.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/takes", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = settings.runArguments(folder: folder, displayName: "Gig", clientID: "jackhost.nX")
        let plan = try CapturePlan(command: "run", parsed: try parseArguments(arguments, options: options, command: "run"))
        XCTAssertEqual(plan.clientName, "jackhost.nX")
        XCTAssertEqual(plan.takeOptions.trigger, .request)
        XCTAssertTrue(plan.reconnect)
        XCTAssertFalse(plan.stream)
    }

    func testOptionsSwitchesRepeatsAndTheFormatsExtension() throws {
        let text = """
            # a comment
            jackhost-settings = 1
              record-on-load = yes
            takes = /var/takes
            format = flac
            connect = system:capture_1
            connect = system:capture_2
            sidecar = yes
            mark-xruns = no
            transport = yes
            no-reconnect = yes
            plugin = plugins/peak.so
            take-name = %s %%s %Y
            """
        let settings = try SessionSettings(text: text, runOptions: options)
        XCTAssertTrue(settings.recordOnLoad)
        XCTAssertEqual(
            settings.runArguments(folder: "/s/c", displayName: "Live", clientID: "jackhost.nA"),
            [
                "--record=/var/takes/Live %%s %Y.flac", "--name=jackhost.nA", "--format=flac", "--connect=system:capture_1",
                "--connect=system:capture_2", "--sidecar", "--transport", "--no-reconnect", "--plugin=plugins/peak.so",
            ], "a trigger setting replaces the default --signal-trigger, and no-reconnect the default --reconnect")
    }

    func testEachWayAFileCanBeWrongIsOneLineThatNamesTheLine() {
        let cases: [(String, String)] = [
            ("", "has no settings; its first one is jackhost-settings = 1"),
            ("format = wav\n", "line 1: the first setting must be jackhost-settings = 1, not \"format\""),
            ("jackhost-settings = 2\n", "line 1: settings format \"2\" is not one this jackhost reads (1)"),
            ("jackhost-settings = 1\nformat wav\n", "line 2: \"format wav\" is not NAME = VALUE"),
            ("jackhost-settings = 1\nbogus = 1\n", "line 2: \"bogus\" cannot be set here: no `jackhost run` option has that name"),
            ("jackhost-settings = 1\nrecord = x.wav\n", "line 2: \"record\" cannot be set here: the session manager decides it"),
            ("jackhost-settings = 1\nname = other\n", "line 2: \"name\" cannot be set here: the session manager decides it"),
            ("jackhost-settings = 1\nsidecar = maybe\n", "line 2: sidecar takes yes or no, not \"maybe\""),
            ("jackhost-settings = 1\nformat =\n", "line 2: format needs a value (CONTAINER)"),
            ("jackhost-settings = 1\nformat = wav\nformat = flac\n", "line 3: format is given twice"),
            ("jackhost-settings = 1\nrecord-on-load = yes\nrecord-on-load = no\n", "line 3: record-on-load is given twice"),
            ("jackhost-settings = 1\ntake-name = a/b\n", "line 2: take-name is a file name without folders"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try SessionSettings(text: text, runOptions: options), text) { error in
                let message = (error as? UsageError)?.message ?? ""
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
                XCTAssertFalse(message.contains("\n"), message)
            }
        }
    }

    /// A value `run` refuses is `run`'s own line, found before JACK is touched.
    func testAValueRecordRefusesIsRefusedWithRecordsLine() throws {
        let settings = try SessionSettings(text: "jackhost-settings = 1\nformat = nope\n", runOptions: options)
        let arguments = settings.runArguments(folder: "/s", displayName: "x", clientID: "jackhost.n1")
        XCTAssertThrowsError(try CapturePlan(command: "run", parsed: try parseArguments(arguments, options: options, command: "run"))) {
            XCTAssertTrue(($0 as? UsageError)?.message.contains("unknown container \"nope\"") == true, "\($0)")
        }
    }

    func testNSMURLsAreParsedOrRefusedWithALine() throws {
        let url = try NSMURL("osc.udp://127.0.0.1:12345/")
        XCTAssertEqual(UInt16(bigEndian: url.address.sin_port), 12345)
        XCTAssertEqual(UInt32(bigEndian: url.address.sin_addr.s_addr), 0x7F00_0001)
        for bad in ["http://x:1/", "osc.udp://127.0.0.1/", "osc.udp://127.0.0.1:0/", "osc.udp://no-such-host.invalid:9/"] {
            XCTAssertThrowsError(try NSMURL(bad), bad)
        }
    }
}
