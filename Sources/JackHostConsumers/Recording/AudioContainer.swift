import CSndFile

/// The containers the recorder writes, through libsndfile.
///
/// The lossless ones store every sample as captured. The lossy ones (``ogg``, ``opus``,
/// ``mp3``) encode from float samples, take an encoder quality (``configure(_:quality:)``)
/// and have their codec's limits on channels and sample rates (``refusal(for:channels:sampleRate:)``).
/// Which of them this machine can write depends on how its libsndfile was built
/// (``writableOnThisMachine()``); Debian 12's writes all eight.
public enum AudioContainer: String, Sendable, CaseIterable {
    /// RIFF WAVE; becomes RF64 automatically when a take passes 4 GiB.
    case wav
    /// EBU RF64, WAV's 64-bit successor.
    case rf64
    /// Sonic Foundry Wave64.
    case w64
    /// Apple Core Audio Format.
    case caf
    /// FLAC, lossless compressed; integer samples only, at most 8 channels.
    case flac
    /// Ogg Vorbis, lossy; encodes from float samples, at most 255 channels.
    case ogg
    /// Ogg Opus, lossy; encodes from float samples at 8, 12, 16, 24 or 48 kHz, at most 255 channels.
    case opus
    /// MPEG-1/2 audio layer III, lossy; encodes from float samples, mono or stereo, 8 to 48 kHz.
    case mp3

    /// Parses a container name such as "wav" (case-insensitive).
    public init?(name: String) { self.init(rawValue: name.lowercased()) }

    /// Guesses the container from a file name's extension (`.wave` and `.bwf` are WAV, `.oga`
    /// is Ogg Vorbis); nil when it is not one of ours.
    public init?(path: String) {
        guard case .container(let container) = Self.meaning(ofExtensionIn: path) else { return nil }
        self = container
    }

    /// The file-name extension, without the dot.
    public var fileExtension: String { rawValue }

    /// Whether the container's files carry markers in a `cue ` chunk (``CueChunks``): WAV and
    /// RF64, and W64 in its own form (``Wave64Writer``); the others keep them in the sidecar.
    public var carriesCueChunks: Bool { self == .wav || self == .rf64 || self == .w64 }

    /// Whether the codec discards information: Vorbis, Opus and MP3.
    public var isLossy: Bool {
        switch self {
        case .ogg, .opus, .mp3: return true
        case .wav, .rf64, .w64, .caf, .flac: return false
        }
    }

    /// The most channels one file holds, when the format sets a limit below JACK's.
    public var maximumChannels: Int? {
        switch self {
        case .flac: return 8
        case .mp3: return 2
        case .ogg, .opus: return 255
        case .wav, .rf64, .w64, .caf: return nil
        }
    }

    /// The sample rates the codec encodes, when it does not take every rate.
    public var sampleRates: [Int]? {
        switch self {
        case .opus: return [8000, 12000, 16000, 24000, 48000]
        case .mp3: return [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .wav, .rf64, .w64, .caf, .flac, .ogg: return nil
        }
    }

    /// The sample format a take uses when none is asked for: 24-bit for FLAC, float otherwise.
    public var defaultSampleFormat: SampleFormat { self == .flac ? .int24 : .float32 }

    /// What a file name's extension says about its container.
    public enum ExtensionMeaning: Equatable, Sendable {
        /// No extension (`take`), or standard output (`-`).
        case none
        /// One of the containers jackhost writes.
        case container(AudioContainer)
        /// A well-known audio format jackhost does not write (`aiff`, `m4a`, …), upper-cased.
        case unsupportedAudio(String)
        /// An extension that names no audio format (`.bak`, `.2026`), as written (case kept).
        case unknown(String)
    }

    /// Audio formats people name files after that the recorder does not write.
    static let otherAudioExtensions: Set<String> = [
        "aif", "aiff", "aifc", "au", "snd", "m4a", "mp4", "aac", "wma", "mka",
        "webm", "ape", "wv", "alac", "raw", "pcm", "sd2", "voc", "mat", "mpc", "spx",
    ]

    /// Reads a path's extension (case-insensitive).
    public static func meaning(ofExtensionIn path: String) -> ExtensionMeaning {
        guard path != "-", let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
            dot != path.startIndex, path[path.index(before: dot)] != "/"
        else { return .none }
        let written = String(path[path.index(after: dot)...])
        let ext = written.lowercased()
        if ext.isEmpty { return .none }
        if let container = AudioContainer(name: ext) { return .container(container) }
        if ext == "wave" || ext == "bwf" { return .container(.wav) }
        if ext == "oga" { return .container(.ogg) }
        if otherAudioExtensions.contains(ext) { return .unsupportedAudio(ext.uppercased()) }
        return .unknown(written)
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
        case .ogg, .opus: return Int32(SF_FORMAT_OGG)
        case .mp3: return Int32(SF_FORMAT_MPEG)
        }
    }

    /// libsndfile's subtype for a sample format, or nil when the container cannot store it.
    /// The lossy codecs encode from floats: their subtype is the codec, fed f32 only.
    func subtype(for sampleFormat: SampleFormat) -> Int32? {
        if isLossy {
            guard sampleFormat == .float32 else { return nil }
            switch self {
            case .ogg: return Int32(SF_FORMAT_VORBIS)
            case .opus: return Int32(SF_FORMAT_OPUS)
            default: return Int32(SF_FORMAT_MPEG_LAYER_III)
            }
        }
        switch sampleFormat {
        case .float32: return Int32(SF_FORMAT_FLOAT)
        case .int16: return Int32(SF_FORMAT_PCM_16)
        case .int24: return Int32(SF_FORMAT_PCM_24)
        case .int32: return Int32(SF_FORMAT_PCM_32)
        case .fixed8_24: return nil
        }
    }

    /// Whether libsndfile can write this container with this sample format, channel count
    /// and sample rate.
    public func supports(_ sampleFormat: SampleFormat, channels: Int = 2, sampleRate: Int = 48000) -> Bool {
        refusal(for: sampleFormat, channels: channels, sampleRate: sampleRate) == nil
    }

    /// Why this container cannot take this stream, as the error the recorder reports; nil when it can.
    ///
    /// The codecs' limits come first, because libsndfile's `sf_format_check` does not know
    /// them all (it accepts any sample rate for Opus and MP3, and 256 channels for Ogg).
    public func refusal(for sampleFormat: SampleFormat, channels: Int, sampleRate: Int) -> RecorderError? {
        guard isWritableByLibsndfile else { return .containerUnavailable(container: self) }
        guard let subtype = subtype(for: sampleFormat) else {
            return .unsupportedCombination(container: self, sampleFormat: sampleFormat)
        }
        if let maximumChannels, channels > maximumChannels {
            return .tooManyChannels(container: self, channels: channels, maximum: maximumChannels)
        }
        if let sampleRates, !sampleRates.contains(sampleRate) {
            return .unsupportedSampleRate(container: self, sampleRate: sampleRate)
        }
        var info = SF_INFO()
        info.channels = Int32(channels)
        info.samplerate = Int32(sampleRate)
        info.format = majorFormat | subtype
        return sf_format_check(&info) == 1 ? nil : .unsupportedCombination(container: self, sampleFormat: sampleFormat)
    }

    /// Whether the installed libsndfile was built with this container's format and codec: it
    /// lists only what it was built with (Ogg needs libvorbis/libopus, MP3 needs LAME and mpg123).
    var isWritableByLibsndfile: Bool {
        Self.libsndfileMajorFormats.contains(majorFormat)
            && Self.libsndfileSubtypes.contains(subtype(for: defaultSampleFormat) ?? 0)
    }

    private static let libsndfileMajorFormats = libsndfileFormats(SFC_GET_FORMAT_MAJOR_COUNT, SFC_GET_FORMAT_MAJOR)
    private static let libsndfileSubtypes = libsndfileFormats(SFC_GET_FORMAT_SUBTYPE_COUNT, SFC_GET_FORMAT_SUBTYPE)

    /// The format codes libsndfile lists for a count/get command pair.
    private static func libsndfileFormats(_ countCommand: Int, _ getCommand: Int) -> Set<Int32> {
        var count: Int32 = 0
        sf_command(nil, Int32(countCommand), &count, Int32(MemoryLayout<Int32>.size))
        var formats: Set<Int32> = []
        for index in 0..<max(0, count) {
            var info = SF_FORMAT_INFO()
            info.format = index
            if sf_command(nil, Int32(getCommand), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0 {
                formats.insert(info.format)
            }
        }
        return formats
    }

    /// The containers this machine's libsndfile can write, in declaration order (for
    /// `jackhost record --help`). The corresponding C functions are `sf_command`
    /// (`SFC_GET_FORMAT_MAJOR`, `SFC_GET_FORMAT_SUBTYPE`) and `sf_format_check`.
    public static func writableOnThisMachine() -> [AudioContainer] {
        allCases.filter { $0.supports($0.defaultSampleFormat, channels: 2, sampleRate: 48000) }
    }

    /// Sets up a file just opened for writing: float scaling for the lossy codecs, and the
    /// encoder quality, 0 (smallest) to 1 (best); nil keeps libsndfile's default.
    ///
    /// Call it before the first sample is written. libsndfile's compression level is
    /// 1 − quality for every codec:
    /// - ogg: Vorbis variable bitrate, about 65 kbit/s (stereo) at 0 to 500 kbit/s at 1;
    /// - opus: 6 + 250 × quality kbit/s per channel;
    /// - mp3: LAME variable bitrate, V9.999 at 0 to V0 at 1.
    ///
    /// The lossless containers ignore `quality`. The corresponding C function is `sf_command`
    /// (`SFC_SET_NORM_FLOAT`, `SFC_SET_COMPRESSION_LEVEL`).
    public func configure(_ file: OpaquePointer, quality: Double?) {
        guard isLossy else { return }
        // The codecs take floats in ±1.0. libsndfile's MP3 encoder reads floats as ±32768
        // unless they are marked normalised (libsndfile 1.2.0, mpeg_l3_encode.c); Vorbis and
        // Opus ignore the flag.
        sf_command(file, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        guard let quality else { return }
        // LAME's VBR quality stops just short of 10 (V9.999); libsndfile multiplies by 10.
        var level = min(max(1 - quality, 0), self == .mp3 ? 0.9999 : 1)
        sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
    }
}
