import Glibc
import JackHostSupport

/// The start of a session: jackhost announces itself, before it opens any JACK client, and
/// waits for the manager's answer and its `/nsm/client/open`. Main thread only.
enum NSMHandshake {
    /// What `/nsm/client/open` gave: the session's folder for this client, the session's name
    /// and the client id, which becomes the JACK client's name.
    struct Opened: Equatable {
        var path: String
        var displayName: String
        var clientID: String
        /// The manager's name, from its answer to the announce.
        var managerName: String
    }

    /// How the handshake ended.
    enum Outcome: Equatable {
        case opened(Opened)
        /// The manager refused the announce, or sent an open jackhost cannot use (it has
        /// been answered with `/error`); the line says which.
        case failed(String)
        /// A stop signal came first.
        case stopped
    }

    /// How long jackhost waits for each answer.
    static let answerSeconds = 10.0

    /// Announces as `executable` and waits for the open. Messages before it that are not the
    /// answer are counted in `ignored`.
    static func run(link: NSMLink, executable: String, ignored: inout Int) -> Outcome {
        link.send(
            OSCMessage(
                path: NSMProtocol.Sent.announce,
                arguments: [
                    .string(NSMProtocol.applicationName), .string(NSMProtocol.capabilities), .string(executable),
                    .int32(NSMProtocol.apiMajor), .int32(NSMProtocol.apiMinor), .int32(getpid()),
                ]))
        var managerName: String?
        let deadline = monotonicSeconds() + answerSeconds
        while monotonicSeconds() < deadline {
            if SignalSource.stopRequested { return .stopped }
            guard link.waitForDatagram(seconds: 0.05), let received = link.receive() else { continue }
            guard case .message(let message) = received else {
                if case .refused = received {
                    return .failed("nothing listens at NSM_URL \(link.url); start jackhost from the session manager, or unset NSM_URL")
                }
                ignored += 1
                continue
            }
            switch answer(message, link: link) {
            case .announced(let name): managerName = name
            case .opened(let path, let displayName, let clientID):
                guard let managerName else {
                    return .failed("the session manager sent /nsm/client/open before it answered the announce")
                }
                return .opened(Opened(path: path, displayName: displayName, clientID: clientID, managerName: managerName))
            case .failed(let line): return .failed(line)
            case .other: ignored += 1
            }
        }
        return .failed(
            managerName == nil
                ? "the session manager at NSM_URL \(link.url) did not answer the announce in \(Int(answerSeconds)) s"
                : "the session manager accepted jackhost but sent no /nsm/client/open in \(Int(answerSeconds)) s")
    }

    private enum Answer {
        case announced(String)
        case opened(path: String, displayName: String, clientID: String)
        case failed(String)
        case other
    }

    /// What one message during the handshake means; a malformed open is answered with `/error`.
    private static func answer(_ message: OSCMessage, link: NSMLink) -> Answer {
        let arguments = message.arguments
        switch (message.path, message.types) {
        case (NSMProtocol.Sent.reply, let types) where types.hasPrefix("ss") && arguments.first == .string(NSMProtocol.Sent.announce):
            if case .string(let name) = arguments.count > 2 ? arguments[2] : .string("the session manager") { return .announced(name) }
            return .announced("the session manager")
        case (NSMProtocol.Sent.error, "sis") where arguments.first == .string(NSMProtocol.Sent.announce):
            guard case .int32(let code) = arguments[1], case .string(let text) = arguments[2] else { return .other }
            return .failed("the session manager refused jackhost (error \(code)): \(ValueParsing.shown(text))")
        case (NSMProtocol.Received.open, "sss"):
            guard case .string(let path) = arguments[0], case .string(let name) = arguments[1], case .string(let id) = arguments[2] else {
                return .other
            }
            return .opened(path: path, displayName: name, clientID: id)
        case (NSMProtocol.Received.open, let types):
            let line = "/nsm/client/open needs three strings (path, display name, client id), not \"\(types)\""
            link.send(NSMProtocol.error(to: NSMProtocol.Received.open, .general, line))
            return .failed("the session manager sent a malformed open: \(line)")
        default: return .other
        }
    }
}
