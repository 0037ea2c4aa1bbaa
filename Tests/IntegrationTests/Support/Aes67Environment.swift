import Foundation
import JackHost
import XCTest

/// An AES67-style link between two network namespaces joined by a veth pair: a sending
/// PipeWire whose `module-rtp-sink` puts a 2-channel L24/48 kHz stream on a multicast group and
/// announces it by SAP, and a receiving PipeWire whose `module-rtp-source` discovers it by SAP
/// and turns it into a node named after the SDP session. JACK clients run under `pw-jack` of
/// either PipeWire (its socket is a path, which network namespaces do not separate).
final class Aes67Environment {
    let senderNamespace: String
    let receiverNamespace: String
    /// The SDP session name (`s=`), which the receiver's node and JACK client are named after.
    let sessionName: String
    /// The stream's multicast group and port.
    let group = "239.69.77.1"
    let port = 5004
    /// The receiver's target latency (`sess.latency.msec`, PipeWire's default). Measured with a
    /// 1024-frame quantum: at 100 ms the receiver held the stream for 40 s without a gap (90.7 ms
    /// end to end); at 10 ms its rate control overshot and it ran dry every 9 to 13 s (20 ms of
    /// silence each time).
    static let latencyMilliseconds = 100
    let receiver: PipeWireEnvironment
    private(set) var sender: PipeWireEnvironment?
    private var generator: Daemon?
    private let veth: (String, String)
    private let ip = "/usr/sbin/ip"

    /// Makes the namespaces and both PipeWires; skips (or fails, where environments are
    /// required) when namespaces can't be made.
    init(sessionName: String) throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else {
            try skipEnvironment("AES67 suite: needs root and iproute2 for network namespaces")
        }
        self.sessionName = sessionName
        let suffix = "\(getpid() % 100000)"
        senderNamespace = "jhaes-tx\(suffix)"
        receiverNamespace = "jhaes-rx\(suffix)"
        veth = ("jhaea\(suffix)", "jhaeb\(suffix)")
        let (tx, rx) = (senderNamespace, receiverNamespace)
        let steps: [[String]] = [
            ["netns", "add", tx], ["netns", "add", rx],
            ["link", "add", veth.0, "type", "veth", "peer", "name", veth.1],
            ["link", "set", veth.0, "netns", tx], ["link", "set", veth.1, "netns", rx],
            ["-n", tx, "addr", "add", "10.78.0.1/24", "dev", veth.0], ["-n", rx, "addr", "add", "10.78.0.2/24", "dev", veth.1],
            ["-n", tx, "link", "set", veth.0, "up"], ["-n", rx, "link", "set", veth.1, "up"],
            ["-n", tx, "link", "set", "lo", "up"], ["-n", rx, "link", "set", "lo", "up"],
            // The multicast route: without it a sender has no interface for 239.x or SAP's 224.0.0.56.
            ["-n", tx, "route", "add", "224.0.0.0/4", "dev", veth.0], ["-n", rx, "route", "add", "224.0.0.0/4", "dev", veth.1],
        ]
        for step in steps {
            let result = try JACKFixture.run(ip, step)
            if result.status != 0 {
                Aes67Environment.removeNamespaces(tx, rx)
                try skipEnvironment("AES67 suite: `ip \(step.joined(separator: " "))` failed: \(result.stderr)")
            }
        }
        do {
            receiver = try PipeWireEnvironment(
                namespace: rx, configuration: Aes67Environment.receiverConfiguration(latencyMilliseconds: Aes67Environment.latencyMilliseconds))
        } catch {
            Aes67Environment.removeNamespaces(tx, rx)
            throw error
        }
    }

    deinit { stop() }

    /// The receiver: SAP discovery on the default group (224.0.0.56), each stream a node
    /// `Audio/Source` (so that it has ports without a session manager's link, as a device has).
    private static func receiverConfiguration(latencyMilliseconds: Int) -> String {
        """
        context.modules = [
          { name = libpipewire-module-rtp-source
            args = {
              sess.latency.msec = \(latencyMilliseconds)
              stream.props = { media.class = "Audio/Source" }
            }
          }
        ]
        """
    }

    /// The sender: L24 at 48 kHz, 2 channels, 1 ms packets (AES67's default packet time).
    private static func senderConfiguration(group: String, port: Int, sessionName: String) -> String {
        """
        context.modules = [
          { name = libpipewire-module-rtp-sink
            args = {
              destination.ip = "\(group)"
              destination.port = \(port)
              net.ttl = 1
              sess.name = "\(sessionName)"
              sess.min-ptime = 1
              sess.max-ptime = 1
              audio.format = "S24BE"
              audio.rate = 48000
              audio.channels = 2
              audio.position = [ AUX0 AUX1 ]
              stream.props = { media.class = "Audio/Sink" node.description = "jhaes-sender" }
            }
          }
        ]
        """
    }

    /// Starts the sending PipeWire and a generator (`jackhost signal -k KIND -c 2`) playing
    /// into the RTP sink, and waits until the generator is connected.
    func startSender(kind: String) throws {
        let sender = try PipeWireEnvironment(
            namespace: senderNamespace, configuration: Aes67Environment.senderConfiguration(group: group, port: port, sessionName: sessionName))
        self.sender = sender
        let sink = ".*:playback_AUX[01]"
        guard JACKFixture.waitUntil(timeout: 10, { ((try? sender.run("jack_lsp", []).stdout) ?? "").contains(":playback_AUX1") }) else {
            throw JackError.serverStartFailed(
                reason: "the RTP sink has no ports: \((try? sender.run("jack_lsp", []).stdout) ?? "")\n\(sender.diagnostics)")
        }
        generator = try sender.start("generator", JackhostBinary.path, ["signal", "-k", kind, "-c", "2", "-n", "jhaesgen", "--connect", sink])
        let connected = JACKFixture.waitUntil(timeout: 10) {
            ((try? sender.run("jack_lsp", ["-c", "jhaesgen:out_2"]).stdout) ?? "").contains("playback_AUX1")
        }
        guard connected else { throw JackError.serverStartFailed(reason: "generator never connected: \(generator?.log ?? "")") }
    }

    /// Stops the sender: its generator, then its PipeWire with SIGTERM (the RTP sink then sends
    /// a SAP deletion), or SIGKILL when `crash` (no deletion).
    func stopSender(crash: Bool = false) {
        generator?.stop()
        generator = nil
        if crash, let pid = sender?.pipewirePid { kill(pid, SIGKILL) }
        sender?.stop()
        sender = nil
    }

    /// The receiver's JACK ports whose client is the session (`NAME:capture_FL`, ...).
    func receiverPorts() -> [String] {
        let lines = (try? receiver.run("jack_lsp", []).stdout) ?? ""
        return lines.split(separator: "\n").map(String.init).filter { $0.hasPrefix("\(sessionName):") }
    }

    /// The receiving PipeWire's nodes as `pw-dump` (PipeWire's own tool, not libjack) lists
    /// them: each node's properties.
    func receiverNodes() throws -> [[String: Any]] {
        let dump = try JACKFixture.run("/usr/bin/pw-dump", [], environment: receiver.environment)
        let objects = (try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]]) ?? []
        return objects.compactMap { ($0["info"] as? [String: Any])?["props"] as? [String: Any] }
            .filter { $0["media.class"] as? String == "Audio/Source" }
    }

    /// Runs `Tests/Peers/rtp_listen.py` in the receiver's namespace for `seconds`: what was on
    /// the wire, read without PipeWire.
    func listenOnTheWire(seconds: Double) throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Peers/rtp_listen.py").path
        let result = try JACKFixture.run(
            ip, ["netns", "exec", receiverNamespace, "/usr/bin/python3", script, group, String(port), String(seconds)],
            timeout: seconds + 20)
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw JackError.serverStartFailed(reason: "rtp_listen.py: \(result.stderr)")
        }
        return object
    }

    /// Drops `percent` % of the RTP packets arriving in the receiver's namespace, chosen at
    /// random by nftables (this kernel has no sch_netem for `tc ... netem loss`).
    func dropPackets(percent: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft") else {
            try skipEnvironment("AES67 suite: nft is missing; run scripts/setup --environments")
        }
        let rules = """
            table inet jhaes {
              chain input { type filter hook input priority 0; udp dport \(port) numgen random mod 100 < \(percent) counter drop; }
            }
            """
        let file = receiver.runtimeDirectory.appendingPathComponent("loss.nft")
        try rules.write(to: file, atomically: true, encoding: .utf8)
        let result = try JACKFixture.run(ip, ["netns", "exec", receiverNamespace, "/usr/sbin/nft", "-f", file.path])
        guard result.status == 0 else { throw JackError.serverStartFailed(reason: "nft: \(result.stderr)") }
    }

    /// Both PipeWires stopped, the namespaces (and with them the veth pair) removed.
    func stop() {
        stopSender()
        receiver.stop()
        Aes67Environment.removeNamespaces(senderNamespace, receiverNamespace)
    }

    private static func removeNamespaces(_ names: String...) {
        for name in names { _ = try? JACKFixture.run("/usr/sbin/ip", ["netns", "del", name]) }
    }
}
