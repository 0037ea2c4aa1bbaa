import Glibc

/// The keyboard as a source of take commands, when standard input is a terminal and jackhost
/// runs in its foreground: `m` drops a marker and `r` rotates the file. Every other key is
/// ignored; Ctrl-C still stops the take (the terminal keeps its signal keys).
///
/// While it reads, the terminal delivers keys one at a time without echoing them; the previous
/// settings are put back when the run ends, and at exit in any case. A run in the background
/// (`jackhost record … &`) leaves the terminal alone and reads nothing, so it is never
/// stopped by SIGTTIN or SIGTTOU. Main thread only.
final class KeyboardSource: TakeDuty {
    /// The keys and what they do, as the meter shows them.
    static let legend = "keys: m marker  r rotate"

    private var saved: termios?

    /// A source reading standard input, or nil when it is not a terminal this process may read.
    init?() {
        guard isatty(STDIN_FILENO) == 1, Self.isForeground else { return nil }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
        var keys = settings
        keys.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN and VTIME 0: a read returns at once with what is there.
        withUnsafeMutableBytes(of: &keys.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0 else { return nil }
        saved = settings
        KeyboardSource.restoreAtExit(settings)
    }

    deinit { restore() }

    func tick(now: Double) -> [TakeController.Command] {
        guard saved != nil, Self.isForeground else { return [] }
        var commands: [TakeController.Command] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 0) == 1, ready.revents & Int16(POLLIN) != 0 else { break }
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            guard count > 0 else { break }
            commands += Self.commands(for: buffer[0..<count])
        }
        return commands
    }

    /// What the keys typed mean, in order.
    static func commands(for keys: some Sequence<UInt8>) -> [TakeController.Command] {
        keys.compactMap { key in
            switch key {
            case UInt8(ascii: "m"), UInt8(ascii: "M"): .marker(label: "", origin: "keyboard")
            case UInt8(ascii: "r"), UInt8(ascii: "R"): .rotate(origin: "keyboard")
            default: nil
            }
        }
    }

    /// Puts the terminal back as it was (also called at the end of the run).
    func restore() {
        guard var settings = saved else { return }
        saved = nil
        if Self.isForeground { tcsetattr(STDIN_FILENO, TCSANOW, &settings) }
    }

    /// Whether this process's group owns the terminal (a background job must not touch it).
    private static var isForeground: Bool { tcgetpgrp(STDIN_FILENO) == getpgrp() }

    /// The settings to put back if the process exits before ``restore()`` runs.
    // nonisolated(unsafe): written on the main thread before the run's other threads read
    // nothing of it; read once more by the atexit handler, on the exiting thread.
    nonisolated(unsafe) private static var atExitSettings: termios?

    private static func restoreAtExit(_ settings: termios) {
        let first = atExitSettings == nil
        atExitSettings = settings
        guard first else { return }
        atexit {
            guard var settings = KeyboardSource.atExitSettings, KeyboardSource.isForeground else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, &settings)
        }
    }
}
