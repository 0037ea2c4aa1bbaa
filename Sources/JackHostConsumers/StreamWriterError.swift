/// Why a ``StreamWriter`` did not open.
public enum StreamWriterError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Asked to stop while waiting for a FIFO's reader.
    case stoppedWaitingForReader(path: String)

    /// One line that names the problem.
    public var description: String {
        switch self {
        case .stoppedWaitingForReader(let path):
            return "stopped while waiting for a reader to open \(path); nothing was streamed"
        }
    }
}
