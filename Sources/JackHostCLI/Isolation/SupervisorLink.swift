import Glibc
import JackHostPlugins

/// The child's side of an isolated plugin's link to the jackhost that started it
/// (`--supervisor-fd N`; see ``IsolatedPlugin``): it says "ready NAME" once capturing, then how many
/// frames its plugin has taken, a few times a second; the supervisor closing the link (or
/// dying) means "end now, normally".
struct SupervisorLink {
    let descriptor: Int32

    /// Tells the supervisor the plugin is capturing, and the name the plugin gives itself.
    func sendReady(pluginName: String) {
        send("ready \(pluginName.filter { $0 != "\n" })\n")
    }

    /// Tells the supervisor how many frames the plugin has taken so far.
    func sendProgress(_ frames: Int) { send("\(frames)\n") }

    /// Forwards the plugin's latest results: `result NAME BITS UNIT`, the value as the hex of
    /// its bit pattern so it crosses exactly (names have no spaces; the unit is the rest).
    func sendResults(_ results: [PublishedResult]) {
        guard !results.isEmpty else { return }
        send(results.map { "result \($0.name) \(String($0.value.bitPattern, radix: 16)) \($0.unit.filter { $0 != "\n" })\n" }.joined())
    }

    /// Whether the supervisor closed the link or went away: time to end.
    var isClosed: Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        // The supervisor never writes, so readable means closed (0) or broken (-1).
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    private func send(_ text: String) {
        var text = text
        // MSG_NOSIGNAL: a supervisor that died must not kill this process with SIGPIPE.
        _ = text.withUTF8 { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
