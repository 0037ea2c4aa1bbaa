/// What happened to one of a recording's files, for hooks and reports.
///
/// The recorder reports these on its writer thread, in order; a receiver that does real work
/// (running a program, for example) must hand them to a thread of its own, so the writer never
/// waits for it.
public enum RecorderFileEvent: Sendable, Equatable {
    /// A file was created and its first audio is about to be written.
    case opened(path: String)
    /// A file was finalised (closed with its final header).
    case closed(RecorderFileSummary)
    /// A segment ended because of `--split` and the next one opened: `closed` is the finished
    /// segment, `opened` the new one. Sent after `.closed` and `.opened` for the same files.
    case rotated(closed: String, opened: String)
}
