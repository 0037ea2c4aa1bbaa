/// A named point in a take, placed while it records (a keypress, a remote command), that a
/// DAW shows when the file is opened: in WAV and RF64 files a `cue ` chunk with a `LIST`/`adtl`
/// label (see ``CueChunks``), and in every container the segment's sidecar when there is one.
public struct TakeMarker: Equatable, Sendable, Codable {
    /// The marker's name (`marker 3` when none was given).
    public var label: String
    /// Who placed it: `keyboard`, `OSC /jackhost/marker`, …
    public var source: String
    /// The first file (the segment's base path) of the segment that holds it.
    public var file: String
    /// Its frame in that segment, counted from the segment's first frame: the first frame of the
    /// cycle being captured when it was asked for.
    public var frame: Int
    /// The wall-clock time of that frame, in seconds since the epoch.
    public var unixTime: Double
    /// Whether the segment's files carry it in a `cue ` chunk (false: the sidecar only, for a
    /// container without one, or a file where it could not be written).
    public var inFile: Bool
    /// Whether the segment's sidecar (`--sidecar`) carries it.
    public var inSidecar: Bool

    /// Creates a marker (the recorder makes them; tests and tools that read sidecars may too).
    public init(label: String, source: String, file: String, frame: Int, unixTime: Double, inFile: Bool, inSidecar: Bool) {
        self.label = label
        self.source = source
        self.file = file
        self.frame = frame
        self.unixTime = unixTime
        self.inFile = inFile
        self.inSidecar = inSidecar
    }

    /// The longest label a remote source may give, in UTF-8 bytes.
    package static let longestLabel = 200

    /// Whether a label from a remote source (OSC, the browser) may be taken: at most
    /// ``longestLabel`` bytes, without control characters.
    package static func isAcceptableLabel(_ label: String) -> Bool {
        label.utf8.count <= longestLabel && !label.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
