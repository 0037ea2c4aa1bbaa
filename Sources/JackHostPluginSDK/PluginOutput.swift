import Glibc
import JackHost

/// Where a plugin's results go: standard output, or the file named by its `output=PATH`
/// option. Not real-time safe: write in `finish()` or from a deferred plugin's `consume`.
///
/// ```swift
/// static let options: [PluginOption] = [.output]
/// init(options: PluginOptions) throws { output = try PluginOutput(path: options.string("output")) }
/// func finish() { output.write(line: "peak in_1 0.5") }
/// ```
public final class PluginOutput: @unchecked Sendable {
    // @unchecked: the host calls a plugin from one thread at a time (an ABI rule), and the
    // handle is only written through, never reassigned.

    /// The file written to, or nil for standard output.
    public let path: String?
    private let descriptor: Int32

    /// Opens `path` for writing, creating or truncating it now, so that a bad path fails
    /// while the plugin is created (before jackhost touches JACK). Nil means standard output.
    public init(path: String?) throws {
        self.path = path
        guard let path else {
            descriptor = STDOUT_FILENO
            return
        }
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw PluginOutputError(path: path, reason: String(cString: strerror(errno)))
        }
        descriptor = opened
    }

    deinit { if path != nil { close(descriptor) } }

    /// Writes one line (a newline is added). Nothing is buffered: the line reaches the kernel
    /// before this returns, so it survives jackhost being killed afterwards.
    public func write(line: String) {
        writeAll(line + "\n", to: descriptor)
    }
}

/// The output file could not be opened.
public struct PluginOutputError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The path that was refused.
    public let path: String
    /// The system's reason.
    public let reason: String
    /// "cannot write PATH: REASON".
    public var description: String { "cannot write \(path): \(reason)" }
}

extension PluginOption {
    /// The conventional `output` option: write results to PATH instead of standard output.
    public static let output = PluginOption.string("output", help: "write the results to PATH instead of stdout")
}
