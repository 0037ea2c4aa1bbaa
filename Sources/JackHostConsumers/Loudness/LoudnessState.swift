import CEBUR128
import Glibc

/// One libebur128 measurement: its state, made for a layout and a rate, freed with it.
/// Worker thread only (libebur128 states are not shared).
final class LoudnessState {
    private var state: UnsafeMutablePointer<ebur128_state>?
    let channelCount: Int
    /// The channels that count (true peak is read for these only).
    private(set) var usedChannels: [Int]

    /// What a state measures.
    enum Mode {
        /// Momentary, short-term, integrated, loudness range and true peak.
        case loudness
        /// True peak only (the clip alarm).
        case truePeak

        var flags: Int32 {
            switch self {
            case .loudness:
                Int32(EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue | EBUR128_MODE_I.rawValue)
                    | Int32(EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
            case .truePeak: Int32(EBUR128_MODE_TRUE_PEAK.rawValue)
            }
        }
    }

    /// A state over `channelCount` interleaved channels of which only `programme`'s count,
    /// weighted by its layout (the others unused): a programme measured straight from a file's
    /// interleaved frames. Nil when libebur128 refuses.
    init?(programme: LoudnessProgramme, of channelCount: Int, sampleRate: Double) {
        self.channelCount = channelCount
        usedChannels = programme.channels
        guard let state = ebur128_init(UInt32(channelCount), UInt(sampleRate.rounded()), Mode.loudness.flags) else { return nil }
        self.state = state
        let weights = Self.weights(programme.layout)
        for index in 0..<channelCount {
            let weight = programme.channels.firstIndex(of: index).map { weights[$0] } ?? EBUR128_UNUSED
            ebur128_set_channel(state, UInt32(index), Int32(weight.rawValue))
        }
    }

    private static func weights(_ layout: LoudnessProgramme.Layout) -> [channel] {
        switch layout {
        case .mono: [EBUR128_LEFT]
        case .stereo: [EBUR128_LEFT, EBUR128_RIGHT]
        case .surround51: [EBUR128_LEFT, EBUR128_RIGHT, EBUR128_CENTER, EBUR128_UNUSED, EBUR128_LEFT_SURROUND, EBUR128_RIGHT_SURROUND]
        }
    }

    /// Adds `frames` interleaved 16-bit frames.
    func add(int16 samples: UnsafePointer<Int16>, frames: Int) {
        guard let state, frames > 0 else { return }
        ebur128_add_frames_short(state, samples, frames)
    }

    /// Adds `frames` interleaved 32-bit integer frames (24-bit samples left-justified too).
    func add(int32 samples: UnsafePointer<Int32>, frames: Int) {
        guard let state, frames > 0 else { return }
        ebur128_add_frames_int(state, samples, frames)
    }

    /// Nil when libebur128 refuses the rate or runs out of memory.
    init?(layout: LoudnessProgramme.Layout, sampleRate: Double, mode: Mode = .loudness) {
        channelCount = layout.channelCount
        usedChannels = Array(0..<layout.channelCount)
        guard let state = ebur128_init(UInt32(channelCount), UInt(sampleRate.rounded()), mode.flags) else { return nil }
        self.state = state
        let weights = Self.weights(layout)
        for (index, weight) in weights.enumerated() { ebur128_set_channel(state, UInt32(index), Int32(weight.rawValue)) }
    }

    deinit { ebur128_destroy(&state) }

    /// Adds `frames` interleaved frames.
    func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard let state, frames > 0 else { return }
        ebur128_add_frames_float(state, samples, frames)
    }

    /// The largest true peak of the frames of the last ``add(_:frames:)``, over all channels,
    /// as a linear amplitude (1.0 is full scale).
    func lastTruePeak() -> Double {
        guard let state else { return 0 }
        var peak = 0.0
        for channel in usedChannels {
            var out = 0.0
            if ebur128_prev_true_peak(state, UInt32(channel), &out) == EBUR128_SUCCESS.rawValue { peak = max(peak, out) }
        }
        return peak
    }

    /// The values so far, named `name`.
    func reading(named name: String) -> LoudnessReading {
        guard let state else { return LoudnessReading(name: name) }
        func value(_ call: (UnsafeMutablePointer<ebur128_state>, UnsafeMutablePointer<Double>) -> Int32) -> Double? {
            var out = 0.0
            return call(state, &out) == EBUR128_SUCCESS.rawValue && out.isFinite ? out : nil
        }
        var peak = 0.0
        for channel in usedChannels {
            var out = 0.0
            if ebur128_true_peak(state, UInt32(channel), &out) == EBUR128_SUCCESS.rawValue { peak = max(peak, out) }
        }
        return LoudnessReading(
            name: name, momentary: value { ebur128_loudness_momentary($0, $1) }, shortTerm: value { ebur128_loudness_shortterm($0, $1) },
            integrated: value { ebur128_loudness_global($0, $1) }, range: value { ebur128_loudness_range($0, $1) },
            truePeak: peak > 0 ? 20 * log10(peak) : nil)
    }
}
