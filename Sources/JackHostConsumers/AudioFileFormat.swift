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

    /// What a file name's extension says about its container.
    public enum ExtensionMeaning: Equatable, Sendable {
        /// No extension (`take`), or standard output (`-`).
        case none
        /// One of the containers jackhost writes.
        case container(AudioContainer)
        /// A well-known audio format jackhost does not write (`mp3`, `ogg`, `aiff`, …), upper-cased.
        case unsupportedAudio(String)
        /// An extension that names no audio format (`.bak`, `.2026`).
        case unknown(String)
    }

    /// Audio formats people name files after that the recorder does not write.
    static let otherAudioExtensions: Set<String> = [
        "mp3", "ogg", "oga", "opus", "aif", "aiff", "aifc", "au", "snd", "m4a", "mp4", "aac", "wma", "mka",
        "webm", "ape", "wv", "alac", "raw", "pcm", "sd2", "voc", "mat", "mpc", "spx",
    ]

    /// Reads a path's extension (case-insensitive).
    public static func meaning(ofExtensionIn path: String) -> ExtensionMeaning {
        guard path != "-", let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
            dot != path.startIndex, path[path.index(before: dot)] != "/"
        else { return .none }
        let ext = String(path[path.index(after: dot)...]).lowercased()
        if ext.isEmpty { return .none }
        if let container = AudioContainer(name: ext) { return .container(container) }
        if ext == "wave" || ext == "bwf" { return .container(.wav) }
        if otherAudioExtensions.contains(ext) { return .unsupportedAudio(ext.uppercased()) }
        return .unknown(ext)
    }

    /// Whether a file with this container may carry the extension of `other`: RF64 files are
    /// commonly named `.wav` (and jackhost's WAV becomes RF64 past 4 GiB).
    public func isCompatible(withExtensionOf other: AudioContainer) -> Bool {
        self == other || (self == .rf64 && other == .wav)
    }

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
