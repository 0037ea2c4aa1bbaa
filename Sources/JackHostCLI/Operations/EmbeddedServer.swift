import Glibc
import JackHost
import JackHostSignals

/// A private dummy server plus a test-tone client, for first use without JACK set up.
final class EmbeddedServer {
    let server: PrivateJACKServer
    private(set) var tone: TestSignalSource?

    private init(server: PrivateJACKServer) { self.server = server }

    /// Starts a server when `requested`; otherwise returns nil.
    static func startIfRequested(_ requested: Bool, channels: Int) throws -> EmbeddedServer? {
        guard requested else { return nil }
        let server = PrivateJACKServer(name: "jackhost-embedded-\(getpid())", captureChannels: channels, synchronous: true)
        try server.start()
        printNote("started a private dummy JACK server \"\(server.name)\" with \(channels) capture channels; it stops when jackhost exits")
        return EmbeddedServer(server: server)
    }

    /// Starts a client playing a distinct tone (220 Hz × channel number, amplitude 0.5) per channel.
    func startTones(channels: Int) throws -> TestSignalSource {
        let tone = try TestSignalSource(
            name: "jackhost-tones", server: server.name, channels: channels,
            signal: .tones(baseFrequency: 220, amplitude: 0.5))
        self.tone = tone
        return tone
    }

    /// Stops the tone and the server.
    func stop() {
        tone?.stop()
        tone = nil
        server.stop()
    }
}
