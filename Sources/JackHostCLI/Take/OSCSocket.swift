import Glibc
import JackHostSupport

/// A failure to open the `--osc` socket (the port is in use, the address is not this machine's).
struct OSCError: Error, CustomStringConvertible {
    /// One line for stderr.
    let description: String
}

/// The `--osc` UDP socket: non-blocking, bound to the settings' address and port during
/// assembly (so a port in use fails before JACK is touched). jackhost owns it rather than
/// liblo, whose 0.31 UDP server cannot bind one chosen address. Main thread only.
final class OSCSocket {
    /// Where a datagram came from, and where its reply goes.
    struct Sender: CustomStringConvertible {
        let address: sockaddr_in

        /// The IPv4 address in host byte order.
        var host: UInt32 { UInt32(bigEndian: address.sin_addr.s_addr) }
        var port: UInt16 { UInt16(bigEndian: address.sin_port) }
        var description: String { "\(IPv4Network.dotted(host)):\(port)" }

        /// The same host at `replyPort` (a reply port a message named), or this sender itself.
        func replying(to replyPort: Int32?) -> Sender {
            guard let replyPort else { return self }
            var address = address
            address.sin_port = UInt16(truncatingIfNeeded: replyPort).bigEndian
            return Sender(address: address)
        }
    }

    let settings: OSCSettings
    /// The port bound (the kernel's choice for port 0).
    let port: UInt16
    private let descriptor: Int32

    /// Creates and binds the socket.
    init(settings: OSCSettings) throws(OSCError) {
        self.settings = settings
        let shown = "--osc \(settings.address):\(settings.port)"
        let flags = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(AF_INET, flags, 0)
        guard descriptor >= 0 else { throw OSCError(description: "\(shown): cannot create a UDP socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = settings.port.bigEndian
        address.sin_addr.s_addr = (IPv4Network.address(settings.address) ?? 0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = BindFailure.reason(errno, what: "the UDP port")
            close(descriptor)
            throw OSCError(description: "\(shown): cannot listen for OSC: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Where commands go, as the start note says it.
    var url: String { "osc.udp://\(settings.address):\(port)/" }

    /// Reads one waiting datagram into `buffer`; nil when none waits. Never blocks. `count` is
    /// the datagram's real length: more than the buffer holds means it was cut short.
    func receive(into buffer: inout [UInt8]) -> (count: Int, sender: Sender)? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC), $0, &length)
                }
            }
        }
        guard count >= 0 else { return nil }
        return (count, Sender(address: address))
    }

    /// Whether another datagram is waiting (a peek; never blocks).
    var hasWaitingDatagram: Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK)) >= 0
    }

    /// Sends `bytes` to `sender` from the bound socket; a reply that cannot go now is dropped.
    func send(_ bytes: [UInt8], to sender: Sender) {
        guard !bytes.isEmpty else { return }
        var address = sender.address
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}
