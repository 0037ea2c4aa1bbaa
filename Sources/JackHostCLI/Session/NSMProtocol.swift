/// The New Session Manager API as jackhost speaks it (API 1.1,
/// https://new-session-manager.jackaudio.org/api/index.html): the paths, jackhost's
/// capabilities and the API's error codes. One place, so the client and its tests read the
/// same names.
enum NSMProtocol {
    /// The API version jackhost announces: major 1, minor 1.
    static let apiMajor: Int32 = 1
    static let apiMinor: Int32 = 1
    /// What jackhost announces it can do: status lines (`/nsm/client/message`), progress while
    /// a take is finalised, and the live view as its optional GUI. It does not announce
    /// `:switch:` (the manager restarts it for another session) nor `:dirty:` (no setting
    /// changes while it runs, so there is never anything unsaved).
    static let capabilities = ":message:progress:optional-gui:"
    /// The application name in the announce, and the start of the client id a manager gives.
    static let applicationName = "jackhost"

    /// The API's error codes, sent in `/error` replies.
    enum ErrorCode: Int32 {
        case general = -1
        case incompatibleAPI = -2
        case blacklisted = -3
        case launchFailed = -4
        case noSuchFile = -5
        case noSessionOpen = -6
        case unsavedChanges = -7
        case notNow = -8
        case badProject = -9
        case createFailed = -10
    }

    /// Paths jackhost sends.
    enum Sent {
        static let announce = "/nsm/server/announce"
        static let reply = "/reply"
        static let error = "/error"
        static let message = "/nsm/client/message"
        static let progress = "/nsm/client/progress"
        static let guiShown = "/nsm/client/gui_is_shown"
        static let guiHidden = "/nsm/client/gui_is_hidden"
    }

    /// Paths jackhost reads.
    enum Received {
        static let open = "/nsm/client/open"
        static let save = "/nsm/client/save"
        static let sessionLoaded = "/nsm/client/session_is_loaded"
        static let showGUI = "/nsm/client/show_optional_gui"
        static let hideGUI = "/nsm/client/hide_optional_gui"
    }

    /// `/reply PATH MESSAGE`: a request done.
    static func reply(to path: String, _ message: String) -> OSCMessage {
        OSCMessage(path: Sent.reply, arguments: [.string(path), .string(message)])
    }

    /// `/error PATH CODE MESSAGE`: a request refused.
    static func error(to path: String, _ code: ErrorCode, _ message: String) -> OSCMessage {
        OSCMessage(path: Sent.error, arguments: [.string(path), .int32(code.rawValue), .string(message)])
    }

    /// `/nsm/client/message PRIORITY MESSAGE`, priority 0 (least) to 3 (most important).
    static func message(priority: Int32, _ text: String) -> OSCMessage {
        OSCMessage(path: Sent.message, arguments: [.int32(min(max(priority, 0), 3)), .string(text)])
    }
}
