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
