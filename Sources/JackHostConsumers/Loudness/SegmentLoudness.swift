import JackHostTypes

/// The loudness a recorder's sidecar carries: of each segment and of the take so far, per
/// measurement (each programme, or each input without one), fed the very frames the recorder
/// writes (interleaved, in the file's encoding: libebur128 reads 16-bit, 32-bit and float frames
/// as they are, a programme's channels picked by its channel map). Writer thread only.
final class SegmentLoudness {
    /// One measurement's values for the sidecar.
    struct Entry: Codable, Equatable {
        var name: String
        /// Integrated (gated) loudness, LUFS.
        var integrated: Double?
        /// Loudness range, LU.
        var range: Double?
        /// The largest true peak, dBTP.
        var truePeak: Double?
    }

    private let programmes: [LoudnessProgramme]
    private let format: StreamFormat
    private let encoding: AudioEncoding
    private var segment: [LoudnessState] = []
    private var take: [LoudnessState] = []

    /// Measures `programmes` (or each input when empty) of `format`'s frames in `encoding`.
    init(programmes: [LoudnessProgramme], format: StreamFormat, encoding: AudioEncoding) {
        self.programmes = programmes.isEmpty ? (0..<format.channelCount).map(LoudnessProgramme.init(input:)) : programmes
        self.format = format
        self.encoding = encoding
        startTake()
    }

    /// A new segment: its measurements start afresh; the take's go on.
    func startSegment() { segment = makeStates() }

    /// A new take (a triggered one): both start afresh.
    func startTake() {
        take = makeStates()
        segment = makeStates()
    }

    private func makeStates() -> [LoudnessState] {
        programmes.compactMap { LoudnessState(programme: $0, of: format.channelCount, sampleRate: format.sampleRate) }
    }

    /// Adds `frames` interleaved frames as the recorder writes them.
    func add(_ bytes: UnsafeRawPointer, frames: Int) {
        for state in segment + take {
            switch encoding.bytesPerSample {
            case 2: state.add(int16: bytes.assumingMemoryBound(to: Int16.self), frames: frames)
            case 4 where encoding.sampleFormat == .float32: state.add(bytes.assumingMemoryBound(to: Float.self), frames: frames)
            default: state.add(int32: bytes.assumingMemoryBound(to: Int32.self), frames: frames)
            }
        }
    }

    /// The segment's values and the take's so far.
    func values() -> (segment: [Entry], take: [Entry]) {
        func entries(_ states: [LoudnessState]) -> [Entry] {
            zip(programmes, states).map { programme, state in
                let reading = state.reading(named: programme.name)
                return Entry(name: programme.name, integrated: reading.integrated, range: reading.range, truePeak: reading.truePeak)
            }
        }
        return (entries(segment), entries(take))
    }
}
