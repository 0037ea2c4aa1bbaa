/// One channel's K-weighted mean squares over consecutive 100 ms steps, and the loudness
/// measures EBU R128 builds from them (EBU Tech 3341 / ITU-R BS.1770-4):
/// - momentary: the last 400 ms (4 steps), updated every 100 ms;
/// - short-term: the last 3 s (30 steps), updated every 100 ms;
/// - integrated: every 400 ms block (75 % overlap), gated at -70 LUFS absolute, then at
///   10 LU below the loudness of the blocks that passed.
///
/// Steps all have the same length, so the mean of their mean squares is the window's mean square.
struct LoudnessHistory {
    static let momentarySteps = 4
    static let shortTermSteps = 30

    /// The last 30 steps' mean squares, oldest first.
    private var recent: [Double] = []
    /// Every momentary block, gated at the end (in constant memory: a histogram).
    private(set) var blocks = IntegratedLoudness()
    /// The largest momentary and short-term loudness so far.
    private(set) var maxMomentary: Double?
    private(set) var maxShortTerm: Double?

    /// Adds one 100 ms step.
    mutating func append(stepMeanSquare: Double) {
        recent.append(stepMeanSquare)
        if recent.count > Self.shortTermSteps { recent.removeFirst() }
        if let block = mean(last: Self.momentarySteps) { blocks.add(meanSquare: block) }
        maxMomentary = Self.larger(maxMomentary, momentary)
        maxShortTerm = Self.larger(maxShortTerm, shortTerm)
    }

    /// The momentary loudness in LUFS, or nil before 400 ms of audio or in silence.
    var momentary: Double? { mean(last: Self.momentarySteps).flatMap(KWeighting.loudness) }
    /// The short-term loudness in LUFS, or nil before 3 s of audio or in silence.
    var shortTerm: Double? { mean(last: Self.shortTermSteps).flatMap(KWeighting.loudness) }
    /// Whether 400 ms of audio have been seen.
    var hasMomentary: Bool { recent.count >= Self.momentarySteps }
    /// Whether 3 s of audio have been seen.
    var hasShortTerm: Bool { recent.count >= Self.shortTermSteps }

    /// The gated integrated loudness in LUFS, or nil when no block passes the gates.
    var integrated: Double? { blocks.value }

    private func mean(last count: Int) -> Double? {
        guard recent.count >= count else { return nil }
        return recent.suffix(count).reduce(0, +) / Double(count)
    }

    private static func larger(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }
}
