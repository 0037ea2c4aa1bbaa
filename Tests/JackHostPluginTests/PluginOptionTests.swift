import JackHostPluginSDK
import JackHostPlugins
import XCTest

/// The option value rules exist twice, once per side of the ABI; these tests hold both to one table.
final class PluginOptionRuleTests: XCTestCase {
    static let table: [(type: PluginOptionType, kind: PluginOption.Kind, value: String, valid: Bool)] = [
        (.int, .int, "480", true), (.int, .int, "-3", true), (.int, .int, "+7", true),
        (.int, .int, "9223372036854775807", true), (.int, .int, "9223372036854775808", false),
        (.int, .int, "1.5", false), (.int, .int, "", false), (.int, .int, " 4", false), (.int, .int, "many", false),
        (.double, .double, "0.5", true), (.double, .double, "-3", true), (.double, .double, "1e-3", true),
        (.double, .double, "2E4", true), (.double, .double, "nan", false), (.double, .double, "inf", false),
        (.double, .double, "-infinity", false), (.double, .double, "0x1p3", false), (.double, .double, "1e999", false),
        (.double, .double, "", false), (.double, .double, "fast", false),
        (.bool, .bool, "true", true), (.bool, .bool, "FALSE", true), (.bool, .bool, "Yes", true), (.bool, .bool, "no", true),
        (.bool, .bool, "on", true), (.bool, .bool, "off", true), (.bool, .bool, "1", true), (.bool, .bool, "0", true),
        (.bool, .bool, "2", false), (.bool, .bool, "y", false), (.bool, .bool, "", false),
        (.string, .string, "", true), (.string, .string, "any, text: at all", true),
    ]

    func testHostAndSDKApplyTheSameRules() {
        for row in Self.table {
            XCTAssertEqual(row.type.accepts(row.value), row.valid, "host \(row.type) \"\(row.value)\"")
            XCTAssertEqual(row.kind.accepts(row.value), row.valid, "SDK \(row.kind) \"\(row.value)\"")
        }
    }
}

final class PluginOptionsTests: XCTestCase {
    let declared: [PluginOption] = [
        .string("output", help: "a path"),
        .double("max-frequency", default: 20000, help: "Hz"),
        .int("channels", default: 2, help: "count"),
        .bool("verbose", default: false, help: "say more"),
    ]

    func testDefaultsFillInAndTypedAccessorsParse() throws {
        let options = try PluginOptions(["channels": "8", "verbose": "YES"], declaredBy: declared)
        XCTAssertNil(options.string("output"), "no default, not given: absent")
        XCTAssertEqual(options.double("max-frequency"), 20000)
        XCTAssertEqual(options.int("channels"), 8)
        XCTAssertEqual(options.bool("verbose"), true)
        XCTAssertEqual(options.values, ["max-frequency": "20000.0", "channels": "8", "verbose": "YES"])
    }

    func testUnknownKeyAndWrongKindAreRefused() {
        XCTAssertThrowsError(try PluginOptions(["ouput": "x"], declaredBy: declared)) { error in
            XCTAssertEqual(
                error as? PluginOptionError,
                .unknownOption(key: "ouput", known: ["output", "max-frequency", "channels", "verbose"]))
        }
        XCTAssertThrowsError(try PluginOptions(["channels": "two"], declaredBy: declared)) { error in
            XCTAssertEqual(error as? PluginOptionError, .invalidValue(key: "channels", value: "two", expected: .int))
            XCTAssertEqual(String(describing: error), "option channels=two is not a valid int")
        }
    }

    func testBadDeclarationsAreCaughtBeforeTheHostSeesThem() {
        let cases: [[PluginOption]] = [
            [.int("n", help: ""), .int("n", help: "")],
            [PluginOption(name: "n", kind: .int, defaultValue: "three", help: "")],
            [.string("has space", help: "")],
            [.string("", help: "")],
        ]
        for options in cases {
            XCTAssertThrowsError(try PluginOptions([:], declaredBy: options)) { error in
                guard case .invalidDeclaration = error as? PluginOptionError else { return XCTFail("\(error)") }
            }
        }
    }
}
