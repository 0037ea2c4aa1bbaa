import CLo
import Glibc
import XCTest

@testable import JackHostCLI
@testable import JackHostConsumers

/// `--osc` and `--osc-allow` parsing, the message table, and the codec, without JACK. The
/// messages are built with liblo's own calls here, not with jackhost's encoder.
final class OSCTests: XCTestCase {
    func testAddressesDefaultToLoopbackAndNonLoopbackNeedsAnAllowList() throws {
        XCTAssertEqual(try OSCSettings.parse(address: "7770", allowed: []), .init(address: "127.0.0.1", port: 7770, allowed: []))
        XCTAssertEqual(try OSCSettings.parse(address: ":0", allowed: []).port, 0)
        XCTAssertEqual(try OSCSettings.parse(address: "localhost:9000", allowed: []).address, "127.0.0.1")
        XCTAssertEqual(try OSCSettings.parse(address: "127.1.2.3:9000", allowed: []).address, "127.1.2.3")
        XCTAssertThrowsError(try OSCSettings.parse(address: "192.168.1.2:9000", allowed: [])) { error in
            let message = (error as? UsageError)?.message ?? ""
            XCTAssertTrue(message.contains("no authentication") && message.contains("--osc-allow"), message)
        }
        let lan = try IPv4Network(parsing: "192.168.1.0/24")
        XCTAssertEqual(try OSCSettings.parse(address: "0.0.0.0:9000", allowed: [lan]).address, "0.0.0.0")
        for bad in ["", "x", "notaport", "65536", "-1", "+80", "host.example:80", "1.2.3:80", "127.0.0.1:", "[::1]:80", "::1:80"] {
            XCTAssertThrowsError(try OSCSettings.parse(address: bad, allowed: []), bad) { error in
                XCTAssertTrue((error as? UsageError)?.message.hasPrefix("--osc ") == true, "\(error)")
            }
        }
    }

    func testNetworksContainTheirAddressesAndLoopbackIsAlwaysHeard() throws {
        let lan = try IPv4Network(parsing: "192.168.1.77/24")
        XCTAssertEqual(lan.description, "192.168.1.0/24", "host bits are ignored")
        XCTAssertTrue(lan.contains(IPv4Network.address("192.168.1.200")!))
        XCTAssertFalse(lan.contains(IPv4Network.address("192.168.2.1")!))
        let one = try IPv4Network(parsing: "10.0.0.5")
        XCTAssertEqual(one.prefixLength, 32)
        XCTAssertTrue(one.contains(IPv4Network.address("10.0.0.5")!))
        XCTAssertFalse(one.contains(IPv4Network.address("10.0.0.6")!))
        XCTAssertTrue(try IPv4Network(parsing: "0.0.0.0/0").contains(IPv4Network.address("8.8.8.8")!))
        for bad in ["", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0/8", "host/8", "::1/128"] {
            XCTAssertThrowsError(try IPv4Network(parsing: bad), bad)
        }
        let settings = try OSCSettings.parse(address: "0.0.0.0:9000", allowed: [lan])
        XCTAssertTrue(settings.permits(IPv4Network.address("127.0.0.1")!))
        XCTAssertTrue(settings.permits(IPv4Network.address("127.9.9.9")!))
        XCTAssertTrue(settings.permits(IPv4Network.address("192.168.1.3")!))
        XCTAssertFalse(settings.permits(IPv4Network.address("192.168.3.1")!))
    }

    func testOptionsAreReadFromTheCommandLineAsARepeatableCommaList() throws {
        func settings(_ arguments: [String]) throws -> OSCSettings? {
            try OSCSettings.parse(parseArguments(arguments, options: CommandTables.record, command: "record"))
        }
        XCTAssertNil(try settings([]))
        let both = try XCTUnwrap(
            settings(["--osc", "0.0.0.0:9000", "--osc-allow", "10.0.0.0/8,192.168.1.5", "--osc-allow", "172.16.0.0/12"]))
        XCTAssertEqual(both.allowed.map(\.description), ["10.0.0.0/8", "192.168.1.5/32", "172.16.0.0/12"])
        XCTAssertThrowsError(try settings(["--osc-allow", "10.0.0.0/8"])) { error in
            XCTAssertTrue((error as? UsageError)?.message.contains("needs --osc") == true, "\(error)")
        }
        XCTAssertThrowsError(try settings(["--osc", "9000", "--osc-allow", "10.0.0.0/8,"]))
    }

    /// Every path with its types gives its command; wrong types and unknown paths are refused.
    func testTheTableTurnsPathsAndTypesIntoCommands() throws {
        func request(_ path: String, _ arguments: [OSCMessage.Argument] = []) -> Result<OSCCommandTable.Request, OSCCommandTable.Refusal> {
            OSCCommandTable.request(for: OSCMessage(path: path, arguments: arguments))
        }
        XCTAssertEqual(request("/jack_capture/tm/start"), .success(.command(.start(origin: "OSC /jack_capture/tm/start"))))
        XCTAssertEqual(request("/jack_capture/tm/stop"), .success(.command(.stop(origin: "OSC /jack_capture/tm/stop"))))
        XCTAssertEqual(request("/jackhost/start"), .success(.command(.start(origin: "OSC /jackhost/start"))))
        XCTAssertEqual(request("/jackhost/stop"), .success(.command(.stop(origin: "OSC /jackhost/stop"))))
        XCTAssertEqual(request("/jack_capture/rotate"), .success(.command(.rotate(origin: "OSC /jack_capture/rotate"))))
        XCTAssertEqual(request("/jackhost/rotate"), .success(.command(.rotate(origin: "OSC /jackhost/rotate"))))
        XCTAssertEqual(request("/jackhost/marker"), .success(.command(.marker(label: "", origin: "OSC"))))
        XCTAssertEqual(request("/jackhost/marker", [.string("cough")]), .success(.command(.marker(label: "cough", origin: "OSC"))))
        XCTAssertEqual(request("/jackhost/status"), .success(.status(replyPort: nil)))
        XCTAssertEqual(request("/jackhost/status", [.int32(9001)]), .success(.status(replyPort: 9001)))
        for path in ["/jack_capture/stop", "/jackhost/quit"] {
            guard case .success(.command(.quit(let reason))) = request(path) else { return XCTFail(path) }
            XCTAssertEqual(reason.kind, .remote("OSC \(path)"))
            XCTAssertEqual(reason.status, .success)
        }
        guard case .failure(let wrong) = request("/jackhost/marker", [.int32(3)]) else { return XCTFail("an int label") }
        XCTAssertEqual(wrong.message, "/jackhost/marker takes no arguments or \"s\", not \"i\"")
        guard case .failure(let extra) = request("/jackhost/rotate", [.string("x")]) else { return XCTFail("an argument to rotate") }
        XCTAssertEqual(extra.message, "/jackhost/rotate takes no arguments, not \"s\"")
        for label in ["a\nb", "\u{1B}[2J", String(repeating: "x", count: 201)] {
            guard case .failure(let refusal) = request("/jackhost/marker", [.string(label)]) else { return XCTFail(label) }
            XCTAssertTrue(refusal.message.contains("at most 200 bytes"), refusal.message)
        }
        XCTAssertEqual(
            request("/jackhost/marker", [.string("verse 2 – ü")]), .success(.command(.marker(label: "verse 2 – ü", origin: "OSC"))))
        guard case .failure(let unknown) = request("/jackhost/explode") else { return XCTFail("an unknown path") }
        XCTAssertTrue(unknown.message.hasPrefix("unknown path \"/jackhost/explode\""), unknown.message)
        guard case .failure(let long) = request("/" + String(repeating: "\u{1B}", count: 100)) else { return XCTFail("long") }
        XCTAssertFalse(long.message.contains("\u{1B}"), "control characters are not echoed")
    }

    /// The controller keeps its rules for OSC's commands: start and stop act only on request,
    /// a rotate with no take open is refused by name, and a remote quit ends the run with 0.
    func testTheControllerTreatsOSCCommandsAsItsOwn() throws {
        func command(_ path: String) throws -> TakeController.Command {
            guard case .success(.command(let command)) = OSCCommandTable.request(for: OSCMessage(path: path)) else {
                throw XCTSkip("no command for \(path)")
            }
            return command
        }
        var continuous = TakeController(mode: .continuous)
        _ = continuous.handle(.connected)
        XCTAssertEqual(continuous.handle(try command("/jackhost/start")), [.reportProgress])
        XCTAssertEqual(
            continuous.handle(try command("/jack_capture/tm/stop")),
            [.refused("OSC /jack_capture/tm/stop ignored: it ends a take only with record --signal-trigger")])
        var requested = TakeController(mode: .onRequest)
        _ = requested.handle(.connected)
        XCTAssertEqual(requested.handle(try command("/jackhost/rotate")), [.refused("OSC /jackhost/rotate ignored: no take is open to rotate")])
        XCTAssertEqual(requested.handle(try command("/jack_capture/tm/start")), [.startTake])
        XCTAssertEqual(requested.handle(try command("/jack_capture/rotate")), [.rotateFile])
        XCTAssertEqual(requested.handle(try command("/jackhost/stop")), [.stopTake])
        XCTAssertEqual(requested.handle(try command("/jack_capture/stop")), [])
        XCTAssertEqual(requested.state, .stopping(.init(.remote("OSC /jack_capture/stop"))))
    }

    /// Datagrams built by liblo decode into jackhost's messages, and jackhost's reply decodes
    /// with liblo into the same types and values.
    func testLibloMessagesDecodeAndRepliesEncode() throws {
        let marker = try XCTUnwrap(decode(libloDatagram("/jackhost/marker") { lo_message_add_string($0, "cough") }))
        XCTAssertEqual(marker, OSCMessage(path: "/jackhost/marker", arguments: [.string("cough")]))
        XCTAssertEqual(marker.types, "s")
        let bare = try XCTUnwrap(decode(libloDatagram("/jack_capture/tm/start") { _ in 0 }))
        XCTAssertEqual(bare, OSCMessage(path: "/jack_capture/tm/start"))
        let typed = try XCTUnwrap(
            decode(
                libloDatagram("/x") {
                    lo_message_add_int32($0, -7) | lo_message_add_int64($0, 1 << 40) | lo_message_add_float($0, 0.5)
                        | lo_message_add_double($0, 2)
                }))
        XCTAssertEqual(typed.arguments, [.int32(-7), .int64(1 << 40), .float(0.5), .other("d")])
        XCTAssertEqual(
            OSCCommandTable.request(for: typed).map { _ in 0 },
            .failure(.init("unknown path \"/x\"; jackhost answers /jackhost/... and jack_capture's paths")))

        for junk: [UInt8] in [[], [0xFF, 0, 0, 0], Array("/jackhost/status".utf8), Array("#bundle\0".utf8) + [UInt8](repeating: 0, count: 8)] {
            XCTAssertNil(decode(junk), "\(junk)")
        }

        let reply = OSCMessage(
            path: "/jackhost/status",
            arguments: [.string("recording"), .string("take.wav"), .int64(96000), .int32(2), .int64(0), .int64(0), .float(-1)])
        var bytes = reply.encoded()
        XCTAssertEqual(bytes.count % 4, 0)
        var result: Int32 = 0
        let message = try XCTUnwrap(lo_message_deserialise(&bytes, bytes.count, &result))
        defer { lo_message_free(message) }
        XCTAssertEqual(String(cString: lo_message_get_types(message)), "sshihhf")
        XCTAssertEqual(String(cString: lo_get_path(&bytes, bytes.count)), "/jackhost/status")
        XCTAssertEqual(decode(bytes), reply)
    }

    /// A status reply carries the state the source was last told and the readings.
    func testAStatusReplyNamesTheStateAndTheReadings() throws {
        let socket = try OSCSocket(settings: .init(address: "127.0.0.1", port: 0, allowed: []))
        XCTAssertNotEqual(socket.port, 0)
        let source = OSCSource(socket: socket, meter: nil, quiet: true) {
            .init(takePath: "take.wav", framesWritten: 48000, xruns: 1, droppedFrames: 2, skippedFrames: 3, diskSecondsLeft: nil)
        }
        source.takeStateChanged(to: .recording)
        XCTAssertEqual(
            source.statusReply().arguments,
            [.string("recording"), .string("take.wav"), .int64(48000), .int32(1), .int64(2), .int64(3), .float(-1)])
        XCTAssertThrowsError(try OSCSocket(settings: .init(address: "127.0.0.1", port: socket.port, allowed: []))) { error in
            XCTAssertTrue("\(error)".contains("in use"), "\(error)")
        }
    }

    private func decode(_ bytes: [UInt8]) -> OSCMessage? {
        bytes.withUnsafeBytes { OSCMessage(datagram: $0) }
    }

    /// A message serialised by liblo, with arguments added by `add` (which returns liblo's status).
    private func libloDatagram(_ path: String, _ add: (lo_message) -> Int32) -> [UInt8] {
        let message = lo_message_new()!
        defer { lo_message_free(message) }
        XCTAssertEqual(add(message), 0)
        var size = lo_message_length(message, path)
        var bytes = [UInt8](repeating: 0, count: size)
        XCTAssertNotNil(bytes.withUnsafeMutableBytes { lo_message_serialise(message, path, $0.baseAddress, &size) })
        return bytes
    }

    func testSubscribeAndUnsubscribeReadTheirArguments() {
        func request(_ path: String, _ arguments: [OSCMessage.Argument]) -> OSCCommandTable.Request? {
            try? OSCCommandTable.request(for: OSCMessage(path: path, arguments: arguments)).get()
        }
        XCTAssertEqual(request("/jackhost/subscribe", []), .subscribe(rate: nil, replyPort: nil))
        XCTAssertEqual(request("/jackhost/subscribe", [.float(12.5)]), .subscribe(rate: 12.5, replyPort: nil))
        XCTAssertEqual(request("/jackhost/subscribe", [.int32(10)]), .subscribe(rate: 10, replyPort: nil))
        XCTAssertEqual(request("/jackhost/subscribe", [.float(10), .int32(9000)]), .subscribe(rate: 10, replyPort: 9000))
        XCTAssertNil(request("/jackhost/subscribe", [.string("fast")]), "a rate is a number")
        XCTAssertEqual(request("/jackhost/unsubscribe", [.int32(9000)]), .unsubscribe(replyPort: 9000))
        XCTAssertEqual(request("/jackhost/unsubscribe", []), .unsubscribe(replyPort: nil))
    }

    private func sender(_ port: UInt16) -> OSCSocket.Sender {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return OSCSocket.Sender(address: address)
    }

    func testSubscriptionsKeepTheirRateAndEndWhenQuiet() {
        var subscriptions = OSCMeterSubscriptions()
        XCTAssertNil(subscriptions.subscribe(sender(5000), rate: 10, replyPort: nil, now: 0))
        // 3 s of 20 ms ticks: 30 meters at 10 Hz, whatever the tick.
        var sent = 0
        for tick in 0..<150 { sent += subscriptions.due(now: Double(tick) * 0.02).count }
        XCTAssertEqual(sent, 30)
        // A rate over 30 is capped; a reply port sends elsewhere on the same host.
        var fast = OSCMeterSubscriptions()
        XCTAssertNil(fast.subscribe(sender(5000), rate: 1000, replyPort: 9000, now: 0))
        XCTAssertEqual(fast.subscriptions.first?.rate, OSCMeterSubscriptions.fastestRate)
        XCTAssertEqual(fast.due(now: 0).first?.port, 9000)
        // Quiet for 10 s: dropped; a renewal keeps it.
        XCTAssertEqual(subscriptions.due(now: 9.9).count, 1)
        XCTAssertNil(subscriptions.subscribe(sender(5000), rate: 10, replyPort: nil, now: 9.9))
        XCTAssertEqual(subscriptions.due(now: 15).count, 1, "renewed at 9.9 s, so alive at 15 s")
        XCTAssertEqual(subscriptions.due(now: 20).count, 0, "quiet since 9.9 s")
        XCTAssertTrue(subscriptions.subscriptions.isEmpty)
        // Refusals: a rate of 0, a bad port, the ninth subscriber.
        XCTAssertNotNil(subscriptions.subscribe(sender(5000), rate: 0, replyPort: nil, now: 0))
        XCTAssertNotNil(subscriptions.subscribe(sender(5000), rate: .nan, replyPort: nil, now: 0))
        XCTAssertNotNil(subscriptions.subscribe(sender(5000), rate: 10, replyPort: 70000, now: 0))
        for port in 1...OSCMeterSubscriptions.limit {
            XCTAssertNil(subscriptions.subscribe(sender(UInt16(6000 + port)), rate: 1, replyPort: nil, now: 0))
        }
        XCTAssertNotNil(subscriptions.subscribe(sender(7000), rate: 1, replyPort: nil, now: 0))
        XCTAssertTrue(subscriptions.unsubscribe(sender(6001), replyPort: nil))
        XCTAssertFalse(subscriptions.unsubscribe(sender(6001), replyPort: nil))
    }

    func testAMeterMessageCarriesPeakAndRMSPerInputInDBFS() {
        let levels = [
            ChannelLevels(peak: 0.5, rms: 0.5 / 2.0.squareRoot().float, overallPeak: 0, overallRMS: 0, clips: 0),
            ChannelLevels(peak: 0, rms: 0, overallPeak: 0, overallRMS: 0, clips: 0),
        ]
        let message = OSCMeterSubscriptions.message(levels)
        XCTAssertEqual(message.path, "/jackhost/meter")
        XCTAssertEqual(message.types, "iffff")
        guard case .int32(2) = message.arguments[0], case .float(let peak) = message.arguments[1], case .float(let rms) = message.arguments[2],
            case .float(let silentPeak) = message.arguments[3]
        else { return XCTFail("\(message.arguments)") }
        XCTAssertEqual(peak, -6.0206, accuracy: 0.001)
        XCTAssertEqual(rms, -9.0309, accuracy: 0.001)
        XCTAssertEqual(silentPeak, OSCMeterSubscriptions.silenceDB, "silence is finite")
    }
}

extension Double {
    fileprivate var float: Float { Float(self) }
}
