import JackHostConsumers

/// The OSC paths jackhost answers, their type strings, and what each asks of the take: a
/// table, so the README's list and the tests read one set of rules. jack_capture's paths keep
/// their meaning; `/jackhost/...` are jackhost's own.
enum OSCCommandTable {
    /// What an accepted message asks for.
    enum Request: Equatable {
        /// A command for the ``TakeController``.
        case command(TakeController.Command)
        /// A `/jackhost/status` reply to the sender (or to `replyPort` on its host).
        case status(replyPort: Int32?)
        /// `/jackhost/meter` to the sender (or to `replyPort` on its host), `rate` times a second.
        case subscribe(rate: Float?, replyPort: Int32?)
        /// No more meters to the sender (or to `replyPort` on its host).
        case unsubscribe(replyPort: Int32?)
    }

    /// One path: the type strings it takes and the request it makes.
    struct Entry: Sendable {
        let path: String
        /// Every accepted type string (`""`: no arguments).
        let types: [String]
        /// What the path does, for the README and `/jackhost/error` replies.
        let meaning: String
        let request: @Sendable (OSCMessage) -> Request
    }

    /// The origin every OSC command names in messages and in markers' `source`.
    static let origin = "OSC"

    /// Every path, jack_capture's first.
    static let entries: [Entry] = [
        Entry(path: "/jack_capture/stop", types: [""], meaning: "end the run, as SIGTERM does") { quit($0) },
        Entry(path: "/jack_capture/rotate", types: [""], meaning: "go on in a new file without losing a frame") { rotate($0) },
        Entry(path: "/jack_capture/tm/start", types: [""], meaning: "start a take (record --signal-trigger)") { start($0) },
        Entry(path: "/jack_capture/tm/stop", types: [""], meaning: "stop the take (record --signal-trigger)") { stop($0) },
        Entry(path: "/jackhost/start", types: [""], meaning: "start a take (record --signal-trigger)") { start($0) },
        Entry(path: "/jackhost/stop", types: [""], meaning: "stop the take (record --signal-trigger)") { stop($0) },
        Entry(path: "/jackhost/rotate", types: [""], meaning: "go on in a new file without losing a frame") { rotate($0) },
        Entry(path: "/jackhost/quit", types: [""], meaning: "end the run, as SIGTERM does") { quit($0) },
        Entry(path: "/jackhost/marker", types: ["", "s"], meaning: "place a marker, with an optional label") { message in
            if case .string(let label)? = message.arguments.first { return .command(.marker(label: label, origin: origin)) }
            return .command(.marker(label: "", origin: origin))
        },
        Entry(
            path: "/jackhost/status", types: ["", "i"],
            meaning: "reply /jackhost/status sshihhf to the sender, or to a port on the sender's host"
        ) { message in
            .status(replyPort: message.arguments.first.flatMap(port))
        },
        Entry(
            path: "/jackhost/subscribe", types: ["", "f", "i", "fi", "ii"],
            meaning: "send /jackhost/meter (peak and RMS per input) at a rate, optionally to a port on the sender's host"
        ) { message in
            .subscribe(rate: message.arguments.first.flatMap(number), replyPort: message.arguments.dropFirst().first.flatMap(port))
        },
        Entry(path: "/jackhost/unsubscribe", types: ["", "i"], meaning: "stop sending /jackhost/meter") { message in
            .unsubscribe(replyPort: message.arguments.first.flatMap(port))
        },
    ]

    /// A rate given as `f` or `i`.
    private static func number(_ argument: OSCMessage.Argument) -> Float? {
        switch argument {
        case .float(let value): value
        case .int32(let value): Float(value)
        default: nil
        }
    }

    /// A port given as `i`.
    private static func port(_ argument: OSCMessage.Argument) -> Int32? {
        if case .int32(let value) = argument { value } else { nil }
    }

    /// The request a message makes, or the one line that says why it makes none.
    static func request(for message: OSCMessage) -> Result<Request, Refusal> {
        guard let entry = entries.first(where: { $0.path == message.path }) else {
            return .failure(Refusal("unknown path \(shown(message.path)); jackhost answers /jackhost/... and jack_capture's paths"))
        }
        guard entry.types.contains(message.types) else {
            let wanted = entry.types.map { $0.isEmpty ? "no arguments" : "\"\($0)\"" }.joined(separator: " or ")
            return .failure(Refusal("\(entry.path) takes \(wanted), not \"\(message.types)\""))
        }
        if case .string(let label)? = message.arguments.first, !TakeMarker.isAcceptableLabel(label) {
            return .failure(Refusal("\(entry.path): a label is at most \(TakeMarker.longestLabel) bytes of text without control characters"))
        }
        return .success(entry.request(message))
    }

    /// Why a message was refused: the text of the `/jackhost/error` reply.
    struct Refusal: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private static func start(_ message: OSCMessage) -> Request { .command(.start(origin: "\(origin) \(message.path)")) }
    private static func stop(_ message: OSCMessage) -> Request { .command(.stop(origin: "\(origin) \(message.path)")) }
    private static func rotate(_ message: OSCMessage) -> Request { .command(.rotate(origin: "\(origin) \(message.path)")) }
    private static func quit(_ message: OSCMessage) -> Request {
        .command(.quit(.init(.remote("\(origin) \(message.path)"))))
    }

    /// A path as it may be shown: at most 64 printable ASCII characters, quoted.
    private static func shown(_ path: String) -> String {
        let printable = path.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return "\"\(String(printable))\(path.unicodeScalars.count > 64 ? "…" : "")\""
    }
}
