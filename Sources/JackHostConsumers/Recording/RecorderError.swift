/// Errors the recorder reports; each is one line that says what to do.
public enum RecorderError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The container cannot hold this sample format (the lossy ones encode from f32 only).
    case unsupportedCombination(container: AudioContainer, sampleFormat: SampleFormat)
    /// The container holds fewer channels than the take has (FLAC 8, MP3 2, Ogg 255).
    case tooManyChannels(container: AudioContainer, channels: Int, maximum: Int)
    /// The codec does not encode at the server's sample rate (Opus: 8, 12, 16, 24 or 48 kHz; MP3: 8 to 48 kHz).
    case unsupportedSampleRate(container: AudioContainer, sampleRate: Int)
    /// This machine's libsndfile was built without the container's format or codec.
    case containerUnavailable(container: AudioContainer)
    /// The file cannot be created where asked.
    case unwritablePath(path: String, reason: String)
    /// libsndfile refused to open the file.
    case openFailed(path: String, reason: String)
    /// Writing failed (disk full, I/O error); the file is closed and valid up to this point.
    case writeFailed(path: String, reason: String)
    /// The file exists, and takes are never overwritten without ``TakeFiles/overwrite``.
    case fileExists(path: String)
    /// The path is a symbolic link whose target does not exist.
    case danglingSymlink(path: String)
    /// A numbered segment of the same name (`take-0002.wav`) exists from an earlier take.
    case segmentExists(path: String)
    /// Two outputs of one run would write the same file.
    case sameDestination(path: String, other: String)
    /// Recording stopped because the disk's free space fell below the `--min-free` reserve.
    case reserveReached(path: String, minimumFreeBytes: Int)
    /// A name template (`log-%Y%m%d-%H%M%S.wav`) that cannot be used, and why.
    case invalidTemplate(template: String, reason: String)

    /// One line that names the problem.
    public var description: String {
        switch self {
        case .unsupportedCombination(let container, let sampleFormat):
            let hint =
                container == .flac
                ? "FLAC stores integers; use --sample-format s16 or s24"
                : container.isLossy
                    ? "it encodes from float samples; use --sample-format f32, or leave it out"
                    : "use --sample-format f32, s32, s24 or s16"
            return "\(container.rawValue.uppercased()) cannot store \(sampleFormat.name) samples; \(hint)"
        case .tooManyChannels(let container, let channels, let maximum):
            let others = container == .mp3 ? "ogg or opus" : "w64, rf64 or caf"
            return
                "\(container.rawValue.uppercased()) holds at most \(maximum) channels, and this take has \(channels); record one file per channel with --channel-files, or use another container (\(others))"
        case .unsupportedSampleRate(let container, let sampleRate):
            let rates = (container.sampleRates ?? []).map { $0 % 1000 == 0 ? "\($0 / 1000)" : String(Double($0) / 1000) }
            let list = rates.dropLast().joined(separator: ", ") + (rates.count > 1 ? " or " : "") + (rates.last ?? "")
            return
                "\(container.rawValue.uppercased()) encodes only at \(list) kHz, and the server runs at \(sampleRate) Hz; run the server at one of those rates, or use ogg or flac"
        case .containerUnavailable(let container):
            let writable = AudioContainer.writableOnThisMachine().map(\.rawValue).joined(separator: ", ")
            return
                "this machine's libsndfile cannot write \(container.rawValue.uppercased()); use \(writable), or install a libsndfile built with it"
        case .unwritablePath(let path, let reason):
            return "cannot write \(path): \(reason); choose a writable directory"
        case .openFailed(let path, let reason):
            return "cannot create \(path): \(reason)"
        case .writeFailed(let path, let reason):
            return "recording to \(path) stopped: \(reason); the file is valid up to the failure"
        case .fileExists(let path):
            return "\(path) exists and jackhost never overwrites a take; choose another name, or pass --overwrite"
        case .danglingSymlink(let path):
            return "\(path) is a symbolic link to a file that does not exist; remove the link, or pass --overwrite to create its target"
        case .segmentExists(let path):
            return "\(path) exists from an earlier take and would be overwritten by this one's segments; choose another name, or pass --overwrite"
        case .reserveReached(let path, let bytes):
            return
                "recording to \(path) stopped: less than \(DiskSpace.describe(bytes)) would be left free on its disk (--min-free); the file is valid up to here"
        case .sameDestination(let path, let other):
            return "\(path) and \(other) are the same file; give each output its own destination"
        case .invalidTemplate(let template, let reason): return "cannot use the name template \(template): \(reason)"
        }
    }
}
