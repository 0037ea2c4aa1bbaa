import Foundation
import XCTest

@testable import JackHost

/// Streams as `--connect-stream` and `jackhost info` see them, without a server: port lists as
/// PipeWire 0.3.65's JACK gives them for an RTP stream (`Stage Left:capture_FL`, ...).
final class JackStreamTests: XCTestCase {
    let graph = [
        "system:capture_1", "Stage Left:capture_FL", "system:capture_2", "Stage Left:capture_FR",
        "Stage Left 2:capture_AUX0", "stage left:capture_FL", "Firefox:output_FL",
    ]

    func testAStreamIsItsClientsPortsInTheServersOrder() {
        XCTAssertEqual(JackStream.ports(ofStream: "Stage Left", among: graph), ["Stage Left:capture_FL", "Stage Left:capture_FR"])
        XCTAssertEqual(JackStream.ports(ofStream: "stage left", among: graph), ["stage left:capture_FL"], "case counts")
        XCTAssertEqual(JackStream.ports(ofStream: "Stage", among: graph), [], "the whole client name, not a prefix")
        XCTAssertEqual(JackStream.ports(ofStream: "Stage Left:capture_FL", among: graph), [], "a port name is no stream name")
        XCTAssertEqual(JackStream.ports(ofStream: "Stage.*", among: graph), [], "no regular expression")
    }

    func testChannelAndInputNames() {
        XCTAssertEqual(JackStream.channelName(ofPort: "Stage Left:capture_FL"), "FL")
        XCTAssertEqual(JackStream.channelName(ofPort: "Stage Left 2:capture_AUX0"), "AUX0")
        XCTAssertEqual(JackStream.channelName(ofPort: "system:capture_12"), "12")
        XCTAssertEqual(JackStream.channelName(ofPort: "mixer:left"), "left", "no '_': the whole short name")
        XCTAssertEqual(JackStream.channelName(ofPort: "mixer:out_"), "out_", "nothing after '_': the whole short name")
        XCTAssertEqual(JackStream.channelName(ofPort: "a:b:monitor_FL"), "FL", "a ':' in the short name stays in it")
        XCTAssertEqual(JackStream.inputName(stream: "Stage Left", port: "Stage Left:capture_FR"), "Stage Left FR")
    }

    func testGroupingByClientKeepsFirstAppearanceOrderAndThePhysicalFlag() {
        let streams = JackStream.group(ports: graph, physical: ["system:capture_1", "Stage Left:capture_FR"])
        XCTAssertEqual(streams.map(\.name), ["system", "Stage Left", "Stage Left 2", "stage left", "Firefox"])
        XCTAssertEqual(streams.map(\.channels), [2, 2, 1, 1, 1])
        XCTAssertEqual(streams.map(\.isPhysical), [true, true, false, false, false])
        XCTAssertEqual(streams[1].channelNames, ["FL", "FR"])
        XCTAssertEqual(JackStream.group(ports: []), [])
    }

    func testJSONCarriesNamePortsChannelsAndPhysical() throws {
        let stream = JackStream(name: "Stage Left", ports: ["Stage Left:capture_FL", "Stage Left:capture_FR"], isPhysical: true)
        let data = try JSONEncoder().encode(stream)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["name", "ports", "channels", "physical"])
        XCTAssertEqual(object["channels"] as? Int, 2)
        XCTAssertEqual(object["physical"] as? Bool, true)
        XCTAssertEqual(try JSONDecoder().decode(JackStream.self, from: data), stream)
    }

    func testInputsArePrettyNamedAfterTheirStreamElseInputN() {
        let names = ["Stage Left FL", "Stage Left FR"]
        let pretty = (1...3).map { number in
            PortMetadataPublisher.properties(forInput: number, names: names).first { $0.key == JackClient.prettyNameKey }?.value
        }
        XCTAssertEqual(pretty, ["Stage Left FL", "Stage Left FR", "Input 3"])
        let order = PortMetadataPublisher.properties(forInput: 2, names: names).first { $0.key == JackClient.orderKey }?.value
        XCTAssertEqual(order, "2")
        XCTAssertEqual(PortMetadataPublisher.properties(forInput: 1).first?.value, "Input 1", "no names: as before")
    }

    func testAStreamThatMatchesNothingSaysSoInOneLine() {
        let message = JackError.streamMatchedNothing(name: "Stage Right").description
        XCTAssertEqual(
            message, "--connect-stream \"Stage Right\" is no JACK client with audio output ports; list the streams with `jackhost info`")
        XCTAssertFalse(message.contains("\n"))
    }
}
