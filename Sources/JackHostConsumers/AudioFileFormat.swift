import CSndFile

/// The containers the recorder writes, through libsndfile.
public enum AudioContainer: String, Sendable, CaseIterable {
    /// RIFF WAVE; becomes RF64 automatically when a take passes 4 GiB.
    case wav
    /// EBU RF64, WAV's 64-bit successor.
    case rf64
    /// Sonic Foundry Wave64.
    case w64
    /// Apple Core Audio Format.
    case caf
    /// FLAC, lossless compressed; integer samples only.
    case flac

    /// Parses a container name such as "wav" (case-insensitive).
    public init?(name: String) { self.init(rawValue: name.lowercased()) }

    /// Guesses the container from a file name's extension; nil when it is not one of ours.
    public init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        self.init(name: String(path[path.index(after: dot)...]))
    }

    /// The file-name extension, without the dot.
    public var fileExtension: String { rawValue }

    /// libsndfile's major format. WAV is written as RF64 with auto-downgrade, so it stays
    /// a plain WAV file below 4 GiB and never truncates above it.
    var majorFormat: Int32 {
        switch self {
        case .wav, .rf64: return Int32(SF_FORMAT_RF64)
        case .w64: return Int32(SF_FORMAT_W64)
        case .caf: return Int32(SF_FORMAT_CAF)
        case .flac: return Int32(SF_FORMAT_FLAC)
        }
    }

    /// libsndfile's subtype for a sample format, or nil when the container cannot store it.
    func subtype(for sampleFormat: SampleFormat) -> Int32? {
        switch sampleFormat {
        case .float32: return Int32(SF_FORMAT_FLOAT)
        case .int16: return Int32(SF_FORMAT_PCM_16)
        case .int24: return Int32(SF_FORMAT_PCM_24)
        case .int32: return Int32(SF_FORMAT_PCM_32)
        case .fixed8_24: return nil
        }
    }

    /// Whether libsndfile can write this container with this sample format and channel count.
    public func supports(_ sampleFormat: SampleFormat, channels: Int = 2, sampleRate: Int = 48000) -> Bool {
        guard let subtype = subtype(for: sampleFormat) else { return false }
        var info = SF_INFO()
        info.channels = Int32(channels)
        info.samplerate = Int32(sampleRate)
        info.format = majorFormat | subtype
        return sf_format_check(&info) == 1
    }
}
