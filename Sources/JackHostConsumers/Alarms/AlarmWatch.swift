import Glibc
import JackHostTypes
import Synchronization

/// Dead-air and clip alarms (`--silence`, `--clip`) on each watched source: every programme
/// (`--programme`) when any is given, else every input. A deferred consumer: levels are judged
/// on its worker thread over 100 ms windows of audio (sample peak for silence, libebur128's
/// true peak for clipping), never on the real-time thread.
///
/// Changes are queued for the main thread (``takeEvents()``), which says them, runs
/// `--on-alarm`, marks the take and tells systemd; ``active`` lists what is raised now.
public final class AlarmWatch: DeferredAudioConsumer, @unchecked Sendable {
    // @unchecked: `sources`, `framesInWindow` and `position` belong to the worker thread (and
    // prepare, which the host orders with it); `pending` and `raisedNow` are Mutexes.
    /// "alarms", in meters and error messages.
    public var consumerName: String { "alarms" }
    /// When alarms are raised and cleared.
    public let rules: AlarmRules
    /// The programmes watched instead of the inputs, when given.
    public let programmes: [LoudnessProgramme]

    private final class Source {
        let programme: LoudnessProgramme
        var silence: SilenceTracker?
        var clip: ClipTracker?
        let truePeak: LoudnessState?
        var peak: Float = 0
        var overs = false
        var scratch: [Float] = []

        init(_ programme: LoudnessProgramme, rules: AlarmRules, sampleRate: Double) {
            self.programme = programme
            silence = rules.silence.map(SilenceTracker.init)
            clip = rules.clipCount.map { ClipTracker(count: $0) }
            truePeak = rules.clipCount == nil ? nil : LoudnessState(layout: programme.layout, sampleRate: sampleRate, mode: .truePeak)
        }
    }

    private var sources: [Source] = []
    private var windowFrames = 4800
    private var framesInWindow = 0
    private var position = 0
    private let pending = Mutex<[AlarmEvent]>([])
    private let raisedNow = Mutex<[String: AlarmEvent]>([:])
    private static let ceiling = pow(10, AlarmRules.clipCeilingDBTP / 20)

    /// Watches `programmes` (or, when empty, each input) by `rules`.
    public init(rules: AlarmRules, programmes: [LoudnessProgramme] = []) {
        self.rules = rules
        self.programmes = programmes
    }

    /// The changes since the last call, oldest first; any thread (the main thread's).
    public func takeEvents() -> [AlarmEvent] {
        pending.withLock { events in
            defer { events = [] }
            return events
        }
    }

    /// The alarms raised and not cleared, by source and kind; any thread.
    public var active: [AlarmEvent] { raisedNow.withLock { Array($0.values) }.sorted { $0.position < $1.position } }

    /// Sets up one tracker per watched source; refuses a programme beyond the inputs.
    public func prepare(format: StreamFormat) throws {
        for programme in programmes where programme.channels.contains(where: { $0 >= format.channelCount }) {
            throw LoudnessProgrammeError(
                "--programme \(programme.name) names inputs beyond the \(format.channelCount) captured; use inputs 1-\(format.channelCount)")
        }
        let watched = programmes.isEmpty ? (0..<format.channelCount).map(LoudnessProgramme.init(input:)) : programmes
        sources = watched.map { Source($0, rules: rules, sampleRate: format.sampleRate) }
        windowFrames = max(1, Int((format.sampleRate * AlarmRules.windowSeconds).rounded()))
        framesInWindow = 0
    }

    /// **Worker thread.** Measures the block window by window.
    public func consume(_ block: AudioBlock) {
        let frames = block.buffers.frameCount
        var offset = 0
        while offset < frames {
            let count = min(frames - offset, windowFrames - framesInWindow)
            for source in sources { measure(source, block.buffers, from: offset, count: count) }
            offset += count
            framesInWindow += count
            position += count
            if framesInWindow == windowFrames {
                framesInWindow = 0
                let frameTime = block.timestamp.frameTime &+ UInt32(truncatingIfNeeded: offset)
                for source in sources { closeWindow(source, frameTime: frameTime) }
            }
        }
    }

    /// Nothing to flush: a window cut short by the end decides nothing.
    public func finish() {}

    private func measure(_ source: Source, _ buffers: AudioBufferListView, from offset: Int, count: Int) {
        let channels = source.programme.channels
        for channel in channels {
            let samples = buffers[channel]
            for index in offset..<(offset + count) { source.peak = max(source.peak, abs(samples[index])) }
        }
        guard let truePeak = source.truePeak else { return }
        buffers.interleaving(channels, from: offset, count: count, into: &source.scratch) { truePeak.add($0, frames: count) }
        if truePeak.lastTruePeak() > Self.ceiling { source.overs = true }
    }

    private func closeWindow(_ source: Source, frameTime: UInt32) {
        if let change = source.silence?.window(peak: source.peak), let rule = rules.silence {
            let detail =
                change
                ? "below \(Self.shown(rule.levelDBFS)) dBFS for \(Self.shown(rule.after)) s"
                : "sound above \(Self.shown(rule.levelDBFS)) dBFS for \(Self.shown(rule.clearAfter)) s"
            post(AlarmEvent(kind: .deadAir, raised: change, source: source.programme.name, position: position, frameTime: frameTime, detail: detail))
        }
        if let change = source.clip?.window(over: source.overs), let count = rules.clipCount {
            let detail = change ? "true peak over -1 dBTP in \(count) windows of 100 ms within a minute" : "a minute without true peak over -1 dBTP"
            post(AlarmEvent(kind: .clip, raised: change, source: source.programme.name, position: position, frameTime: frameTime, detail: detail))
        }
        source.peak = 0
        source.overs = false
    }

    private func post(_ event: AlarmEvent) {
        let key = "\(event.kind.rawValue) \(event.source)"
        raisedNow.withLock { $0[key] = event.raised ? event : nil }
        pending.withLock { $0.append(event) }
    }

    static func shown(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }
}
