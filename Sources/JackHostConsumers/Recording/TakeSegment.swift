/// One segment of a take: its name and the files created for it, open for writing.
public struct TakeSegment: Sendable {
    /// One created file and its descriptor, which the caller closes.
    public struct File: Sendable, Equatable {
        /// The file's path.
        public var path: String
        /// Its descriptor, open write-only.
        public var descriptor: Int32

        /// Describes a created file.
        public init(path: String, descriptor: Int32) {
            self.path = path
            self.descriptor = descriptor
        }
    }

    /// The segment's name (`take-0002.wav`); with channel files, the name they are made from
    /// (`take-0002_in_1.wav`, …), which is itself not created.
    public var basePath: String
    /// The files: one, or one per channel in the order of the channel names.
    public var files: [File]

    /// Describes a segment.
    public init(basePath: String, files: [File]) {
        self.basePath = basePath
        self.files = files
    }
}
