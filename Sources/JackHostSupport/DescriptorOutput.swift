// DescriptorOutput.swift
//
// Writes text to a file descriptor straight away (no stdio buffer), as FileHandle did before
// the library dropped Foundation (see Lock.swift): stderr notes must appear in order with
// the live meter, and nothing may sit in a buffer when a signal ends the process.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes all of `text`'s UTF-8 bytes to `descriptor`, retrying short writes and EINTR.
/// Returns false when the descriptor refuses them (a closed pipe, a full disk).
@discardableResult
package func writeAll(_ text: String, to descriptor: Int32) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
