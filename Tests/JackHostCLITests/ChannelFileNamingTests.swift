import XCTest

@testable import JackHostCLI

/// Which rule names each channel file, in order: the user's names, a trusted pretty-name of the
/// input or of its one source, the source's port name, `in_N`.
final class ChannelFileNamingTests: XCTestCase {
    private func choose(
        _ index: Int, given: [String]? = nil, own: String? = nil, sources: [String], pretty: String? = nil
    )
        -> ChannelFileNaming.Choice
    {
        ChannelFileNaming.choose(index: index, given: given, ownPrettyName: own, sources: sources, sourcePrettyName: { _ in pretty })
    }

    func testEachRuleInOrder() {
        XCTAssertEqual(choose(0, given: ["kick"], own: "Mic", sources: ["a:b"], pretty: "P"), .init(name: "kick", rule: "--channel-names"))
        XCTAssertEqual(choose(0, own: "Mic", sources: ["a:b"], pretty: "P"), .init(name: "Mic", rule: "the input's pretty-name"))
        XCTAssertEqual(choose(0, own: "Input 1", sources: ["a:b"], pretty: "P").name, "P", "jackhost's own \"Input N\" names nothing")
        XCTAssertEqual(choose(1, sources: ["a:b"], pretty: "P"), .init(name: "P", rule: "the pretty-name of its source a:b"))
        XCTAssertEqual(choose(1, sources: ["system:capture_2"]), .init(name: "system:capture_2", rule: "its source's port name"))
        XCTAssertEqual(choose(2, sources: []), .init(name: "in_3", rule: "no source connected"))
        XCTAssertEqual(choose(2, sources: ["a:1", "a:2"]), .init(name: "in_3", rule: "2 sources connected"))
    }
}
