import Glibc

/// Why `bind` (or `listen`) refused a listening socket, in words that say what to do: shared by
/// every server jackhost opens (the live view's HTTP, OSC's UDP).
package enum BindFailure {
    /// The reason for `code` (an errno from bind or listen); `what` names the port's kind in the
    /// in-use case ("the port", "the UDP port").
    package static func reason(_ code: Int32, what: String = "the port") -> String {
        switch code {
        case EADDRINUSE: "\(what) is in use; pick another (or 0 for any free one)"
        case EADDRNOTAVAIL: "no interface of this machine has that address"
        case EACCES: "a port below 1024 needs privileges; pick a higher one"
        default: String(cString: strerror(code))
        }
    }
}
