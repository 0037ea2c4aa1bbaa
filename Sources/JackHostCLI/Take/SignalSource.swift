import CPosix
import CSignals
import Glibc

/// Turns the signals jackhost counts (CSignals' async-signal-safe handlers, installed from the
/// process's first instruction) into commands: a stop signal quits, SIGUSR1 starts a take
/// (or asks for progress), SIGUSR2 stops one.
///
/// The counts are read from 0, so a SIGUSR1 or SIGUSR2 sent while jackhost was still
/// connecting is a command too; the controller holds it until the take can start.
final class SignalSource: TakeDuty {
    private var startRequests: Int32 = 0
    private var stopRequests: Int32 = 0
    private let quiet: Bool

    init(quiet: Bool) { self.quiet = quiet }

    func tick(now: Double) -> [TakeController.Command] {
        var commands: [TakeController.Command] = []
        if csignals_stop_requests() > 0 { commands.append(.quit(quitReason())) }
        if csignals_status_requests() != startRequests {
            startRequests = csignals_status_requests()
            commands.append(.start(origin: "SIGUSR1"))
        }
        if csignals_take_stop_requests() != stopRequests {
            stopRequests = csignals_take_stop_requests()
            commands.append(.stop(origin: "SIGUSR2"))
        }
        return commands
    }

    /// The quit for the latest stop signal; an unusual one is explained (unless quiet).
    private func quitReason() -> TakeController.StopReason {
        let number = csignals_last_signal()
        let unusual = Self.unusualStopSignal(number).map { "\($0) received: the take is finalised and jackhost stops, as for SIGTERM" }
        return .init(.signal(number), message: quiet ? nil : unusual)
    }

    /// Whether a stop signal has arrived (before the take started, it ends the run at once).
    static var stopRequested: Bool { csignals_stop_requests() > 0 }

    /// The latest stop signal's name.
    static var lastStopSignalName: String { signalName(csignals_last_signal()) }

    /// `SIGTERM` for 15: the name every line about a signal uses.
    static func signalName(_ number: Int32) -> String {
        guard number > 0, let abbreviation = cposix_signal_abbreviation(number) else { return "signal \(number)" }
        return "SIG" + String(cString: abbreviation)
    }

    /// The name of a stop signal that people do not send to end a program (anything but
    /// SIGINT, SIGTERM and SIGHUP), so that the take's end is explained; nil for those three.
    static func unusualStopSignal(_ number: Int32) -> String? {
        guard number > 0, ![SIGINT, SIGTERM, SIGHUP].contains(number) else { return nil }
        return signalName(number)
    }
}
