import JackHostPlugins
import XCTest

final class PluginSpecificationTests: XCTestCase {
    private func pairs(_ spec: PluginSpecification) -> [String] { spec.options.map { "\($0.key)=\($0.value)" } }

    func testPathAlone() throws {
        let spec = try PluginSpecification(parsing: "/opt/plugins/libPeak.so")
        XCTAssertEqual(spec.path, "/opt/plugins/libPeak.so")
        XCTAssertTrue(spec.options.isEmpty)
    }

    func testOptionsInOrderWithValuesHoldingSlashesAndEquals() throws {
        let spec = try PluginSpecification(parsing: "./libF.so:output=/tmp/a=b.txt,max-frequency=5000, label=x")
        XCTAssertEqual(spec.path, "./libF.so")
        XCTAssertEqual(pairs(spec), ["output=/tmp/a=b.txt", "max-frequency=5000", "label=x"])
    }

    func testEmptyValueIsAllowed() throws {
        XCTAssertEqual(pairs(try PluginSpecification(parsing: "p.so:label=")), ["label="])
    }

    func testBackslashEscapesColonCommaAndBackslash() throws {
        let spec = try PluginSpecification(parsing: #"dir\:x/p.so:output=a\,b.txt,label=c\\d"#)
        XCTAssertEqual(spec.path, "dir:x/p.so")
        XCTAssertEqual(pairs(spec), ["output=a,b.txt", #"label=c\d"#])
    }

    func testTextRoundTrips() throws {
        let original = PluginSpecification(path: "odd:dir/p.so", options: [("output", "x,y=z"), ("label", #"a\b"#)])
        let parsed = try PluginSpecification(parsing: original.text)
        XCTAssertEqual(parsed.path, original.path)
        XCTAssertEqual(pairs(parsed), pairs(original))
    }

    func testMalformedSpecificationsNameTheText() {
        let cases: [(String, String)] = [
            ("", "path is empty"),
            (":a=1", "path is empty"),
            ("p.so:", "nothing follows"),
            ("p.so:verbose", "has no '=value'"),
            ("p.so:a=1,,b=2", "has no '=value'"),
            ("p.so:=1", "no key"),
            (#"p.so:a=1\"#, "lone"),
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try PluginSpecification(parsing: text), text) { error in
                guard case .malformedSpecification(let reported, let why) = error as? PluginError else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertEqual(reported, text)
                XCTAssertTrue(why.contains(reason), "\(text): \(why)")
                XCTAssertTrue((error as! PluginError).isUsageError)
                XCTAssertTrue(String(describing: error).contains("PATH[:key=value,...]"))
            }
        }
    }
}
