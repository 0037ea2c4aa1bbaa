import Glibc

/// The one UDP socket jackhost talks to its session manager on: every message goes from it,
/// as the API requires, and it is connected to the manager's address, so it reads only the
/// manager's datagrams and learns (ECONNREFUSED) when the manager's port has closed.
/// Non-blocking. Main thread only.
final class NSMLink {
    /// What one read found.
    enum Received {
        case message(OSCMessage)
        /// A datagram that is not one OSC message (or too long to read whole).
        case notOSC
        /// The manager's port is closed: it went away.
        case refused
    }

    let url: NSMURL
    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 8192)

    /// Opens the socket (any local address, a port of the kernel's choice) and connects it.
    init(url: NSMURL) throws(UsageError) {
        self.url = url
        let flags = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(AF_INET, flags, 0)
        guard descriptor >= 0 else { throw UsageError("cannot open a UDP socket for the session manager: \(String(cString: strerror(errno)))") }
        var address = url.address
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw UsageError("cannot reach the session manager at NSM_URL \(url): \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends one message; false when it could not go (the manager's port closed, a full buffer).
    @discardableResult
    func send(_ message: OSCMessage) -> Bool {
        let bytes = message.encoded()
        guard !bytes.isEmpty else { return false }
        return bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Reads one waiting datagram; nil when none waits. Never blocks.
    func receive() -> Received? {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC)) }
        if count < 0 { return errno == ECONNREFUSED ? .refused : nil }
        guard count <= buffer.count,
            let message = buffer.withUnsafeBytes({ OSCMessage(datagram: UnsafeRawBufferPointer(rebasing: $0[..<count])) })
        else { return .notOSC }
        return .message(message)
    }

    /// Waits up to `seconds` for a datagram to arrive; true when one waits.
    func waitForDatagram(seconds: Double) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, Int32(seconds * 1000)) > 0
    }
}
