import Glibc

/// `jackhost` started by a New Session Manager (`NSM_URL` set, no arguments): announce, wait
/// for the open, make or read the session's folder, then run as `jackhost run --record` would
/// with the settings of `jackhost.conf`, in the session's folder (relative paths are inside
/// it), the client id as the JACK client's name and the take in its `takes` folder.
enum SessionCommand {
    /// Runs the session; `executable` is the name jackhost was started with (the announce
    /// must carry it).
    static func run(url text: String, executable: String) -> ExitStatus {
        let link: NSMLink
        do {
            link = try NSMLink(url: try NSMURL(text))
        } catch {
            printError(error.message)
            return .usage
        }
        var ignored = 0
        let opened: NSMHandshake.Opened
        switch NSMHandshake.run(link: link, executable: executable, ignored: &ignored) {
        case .opened(let value): opened = value
        case .stopped: return .success
        case .failed(let line):
            printError(line)
            return .session
        }
        let folder = SessionFolder(path: opened.path)
        let runOptions = CommandCatalog.run.options
        let plan: CapturePlan
        let settings: SessionSettings
        do {
            settings = try folder.open(runOptions: runOptions)
            try folder.enter()
            plan = try Self.plan(settings, opened: opened, folder: folder, options: runOptions)
        } catch {
            link.send(NSMProtocol.error(to: NSMProtocol.Received.open, error.code, error.description))
            printError(error.description)
            return .session
        }
        let client = NSMSessionClient(link: link, opened: opened, folder: folder, settings: settings, ignoredBeforeOpen: ignored, quiet: plan.quiet)
        return record(plan, client: client)
    }

    /// The plan of `jackhost run` with the session's settings; a setting `run` refuses makes the
    /// project bad, with run's own line.
    private static func plan(
        _ settings: SessionSettings, opened: NSMHandshake.Opened, folder: SessionFolder, options: [OptionSpec]
    ) throws(SessionError) -> CapturePlan {
        do {
            let arguments = settings.runArguments(folder: folder.path, displayName: opened.displayName, clientID: opened.clientID)
            return try CapturePlan(command: "run", parsed: try parseArguments(arguments, options: options, command: "run"))
        } catch let error as UsageError {
            throw SessionError(code: .badProject, description: "\(folder.settingsPath): \(error.message)")
        } catch {
            throw SessionError(code: .badProject, description: "\(folder.settingsPath): \(error)")
        }
    }

    /// Records until the manager (SIGTERM) or the user ends it; a failure to start is
    /// answered with `/error` and returns the status `jackhost run` would.
    private static func record(_ plan: CapturePlan, client: NSMSessionClient) -> ExitStatus {
        do {
            return try CaptureSession(plan: plan, companion: client).run()
        } catch let error as UsageError {
            client.failedToStart(error.message)
            printError(error.message)
            return .session
        } catch {
            client.failedToStart(String(describing: error))
            printError(String(describing: error))
            return .failure
        }
    }
}
