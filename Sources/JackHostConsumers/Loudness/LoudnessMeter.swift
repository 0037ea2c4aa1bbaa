import JackHostTypes
import Synchronization

/// EBU R128 loudness and true peak through libebur128, per input and per programme
/// (`--loudness`, `--programme`): momentary, short-term, integrated, loudness range and the
/// largest true peak, on a worker thread (a deferred consumer), never the real-time one.
///
/// Readings are published ten times a second of audio and at the end, for any thread to read
/// (``readings``). A new format (the server returned at another rate) starts the measurements
/// afresh. Frames the host dropped for this consumer are not measured; the host counts them.
public final class LoudnessMeter: DeferredAudioConsumer, @unchecked Sendable {
    // @unchecked: `measurements`, `scratch` and `framesSincePublish` belong to the worker thread
    // (and prepare/finish, which the host orders with it); `published` is a Mutex.
    /// "loudness", in meters and error messages.
    public var consumerName: String { "loudness" }
    /// The programmes asked for (`--programme`), measured beside the inputs.
    public let programmes: [LoudnessProgramme]
    /// Whether each input is measured alone too.
    public let perInput: Bool
    private var measurements: [(programme: LoudnessProgramme, state: LoudnessState)] = []
    private var scratch: [Float] = []
    private var framesSincePublish = 0
    private var publishEvery = 4800
    private var publishes = 0
    private let published = Mutex<[LoudnessReading]>([])
    /// Each measurement's short-term loudness once a second of audio, the last ten minutes.
    private let shortTermHistory = Mutex<[[Double?]]>([])
    /// Entries ``history`` keeps: ten minutes at one a second.
    public static let historyLength = 600

    /// Measures each input (when `perInput`) and each of `programmes`.
    public init(programmes: [LoudnessProgramme] = [], perInput: Bool = true) {
        self.programmes = programmes
        self.perInput = perInput
    }

    /// The latest values, inputs first, then programmes in the order given; any thread.
    public var readings: [LoudnessReading] { published.withLock { $0 } }

    /// Each measurement's short-term loudness (LUFS, nil when not measurable) once a second of
    /// audio over the last ten minutes, oldest first, in the order of ``readings``; any thread.
    public var history: [[Double?]] { shortTermHistory.withLock { $0 } }

    /// Makes one libebur128 state per measurement for `format`; refuses a programme that names
    /// inputs beyond its channels.
    public func prepare(format: StreamFormat) throws {
        for programme in programmes where programme.channels.contains(where: { $0 >= format.channelCount }) {
            throw LoudnessProgrammeError(
                "--programme \(programme.name) names inputs beyond the \(format.channelCount) captured; use inputs 1-\(format.channelCount)")
        }
        let all = (perInput ? (0..<format.channelCount).map(LoudnessProgramme.init(input:)) : []) + programmes
        measurements = try all.map { programme in
            guard let state = LoudnessState(layout: programme.layout, sampleRate: format.sampleRate) else {
                throw LoudnessProgrammeError("libebur128 cannot measure \(programme.name) at \(format.sampleRate) Hz")
            }
            return (programme, state)
        }
        publishEvery = max(1, Int(format.sampleRate / 10))
        framesSincePublish = 0
        publishes = 0
        shortTermHistory.withLock { $0 = Array(repeating: [], count: measurements.count) }
        publish()
    }

    /// **Worker thread.** Adds the block to every measurement (a programme's channels are
    /// interleaved into a scratch buffer first) and publishes ten times a second of audio.
    public func consume(_ block: AudioBlock) {
        let frames = block.buffers.frameCount
        for measurement in measurements {
            let channels = measurement.programme.channels
            if channels.count == 1 {
                measurement.state.add(block.buffers[channels[0]].baseAddress!, frames: frames)
                continue
            }
            block.buffers.interleaving(channels, from: 0, count: frames, into: &scratch) { measurement.state.add($0, frames: frames) }
        }
        framesSincePublish += frames
        if framesSincePublish >= publishEvery {
            framesSincePublish = 0
            publish()
        }
    }

    /// Publishes the final values.
    public func finish() { publish() }

    private func publish() {
        let values = measurements.map { $0.state.reading(named: $0.programme.name) }
        published.withLock { $0 = values }
        publishes += 1
        guard publishes % 10 == 0 else { return }
        shortTermHistory.withLock { history in
            for index in history.indices where index < values.count {
                history[index].append(values[index].shortTerm)
                if history[index].count > Self.historyLength { history[index].removeFirst(history[index].count - Self.historyLength) }
            }
        }
    }
}
