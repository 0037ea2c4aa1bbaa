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

/// A finalised file and what it holds.
public struct RecorderFileSummary: Sendable, Equatable {
    /// The file's path.
    public var path: String
    /// Frames in the file, including silence written for dropped frames.
    public var frames: Int
    /// Cycles in the file that followed an xrun (or a jump in the server's frame time).
    public var xruns: Int
    /// Frames that were dropped before reaching the recorder and written as silence.
    public var droppedFrames: Int

    /// Creates a summary.
    public init(path: String, frames: Int, xruns: Int, droppedFrames: Int) {
        self.path = path
        self.frames = frames
        self.xruns = xruns
        self.droppedFrames = droppedFrames
    }
}
