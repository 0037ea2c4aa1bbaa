import Glibc
import JackHostTypes

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

    /// `value` with exactly `places` digits after the point (0 to 17), rounded as printf's
    /// `%.Nf` rounds: `decimal(-6.0206, places: 2)` is "-6.02", and -infinity is "-inf". What
    /// `String(format: "%.2f", value)` gives, without linking Foundation into the plugin.
    public static func decimal(_ value: Double, places: Int) -> String {
        precondition((0...17).contains(places), "0 to 17 decimal places")
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 400) { buffer in
            // snprintf is variadic, which Swift cannot call; vsnprintf takes a va_list. 400
            // bytes hold any Double: 309 integer digits, a sign, a point and 17 places.
            let written = withVaList([Int32(places), value]) { vsnprintf(buffer.baseAddress!, 400, "%.*f", $0) }
            precondition(written >= 0 && written < 400, "a Double with \(places) places fits 400 bytes")
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: Int(written)), as: UTF8.self)
        }
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

/// Writes all of `text`'s UTF-8 bytes to `descriptor`, retrying short writes and EINTR; gives
/// up silently when the descriptor refuses them. (JackHost has its own; the SDK does not
/// depend on JackHost.)
private func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
