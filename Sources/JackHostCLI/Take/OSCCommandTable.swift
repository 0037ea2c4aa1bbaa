/// The OSC paths jackhost answers, their type strings, and what each asks of the take: a
/// table, so the README's list and the tests read one set of rules. jack_capture's paths keep
/// their meaning; `/jackhost/...` are jackhost's own.
enum OSCCommandTable {
    /// What an accepted message asks for.
    enum Request: Equatable {
        /// A command for the ``TakeController``.
        case command(TakeController.Command)
        /// A `/jackhost/status` reply to the sender.
        case status
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
        Entry(path: "/jackhost/status", types: [""], meaning: "reply /jackhost/status sshihhf to the sender") { _ in .status },
    ]

    /// The request a message makes, or the one line that says why it makes none.
    static func request(for message: OSCMessage) -> Result<Request, Refusal> {
        guard let entry = entries.first(where: { $0.path == message.path }) else {
            return .failure(Refusal("unknown path \(shown(message.path)); jackhost answers /jackhost/... and jack_capture's paths"))
        }
        guard entry.types.contains(message.types) else {
            let wanted = entry.types.map { $0.isEmpty ? "no arguments" : "\"\($0)\"" }.joined(separator: " or ")
            return .failure(Refusal("\(entry.path) takes \(wanted), not \"\(message.types)\""))
        }
        if case .string(let label)? = message.arguments.first, !isPrintable(label) {
            return .failure(Refusal("\(entry.path): a label is at most \(longestLabel) bytes of text without control characters"))
        }
        return .success(entry.request(message))
    }

    /// The longest marker label taken, in UTF-8 bytes.
    static let longestLabel = 200

    /// Whether a label may be taken: short, and without control characters.
    private static func isPrintable(_ label: String) -> Bool {
        label.utf8.count <= longestLabel && !label.unicodeScalars.contains { $0.properties.generalCategory == .control }
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
