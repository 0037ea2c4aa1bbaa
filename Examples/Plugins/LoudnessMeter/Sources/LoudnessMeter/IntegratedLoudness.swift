/// The gated integrated loudness of EBU R128 (ITU-R BS.1770-4) in constant memory: every
/// 400 ms block's mean square goes into a histogram of 0.1 LU bins between -70 and +10 LUFS
/// (louder blocks share the top bin), each bin keeping the sum and count of its blocks, as
/// libebur128's histogram mode does.
///
/// Why not keep every block: a take of a day at 64 channels would keep 55 million of them
/// (440 MB). The sums are exact; only the relative gate's decision is made per bin, so the
/// result can differ from the exact one only by blocks within 0.1 LU of the gate.
struct IntegratedLoudness {
    static let lowest = -70.0
    static let highest = 10.0
    static let binWidth = 0.1
    static let binCount = Int((highest - lowest) / binWidth)

    private var sums = [Double](repeating: 0, count: binCount)
    private var counts = [Int](repeating: 0, count: binCount)

    /// Adds one block's mean square; blocks at or below -70 LUFS fail the absolute gate and are not kept.
    mutating func add(meanSquare: Double) {
        guard let loudness = KWeighting.loudness(meanSquare: meanSquare), loudness > Self.lowest else { return }
        let bin = min(Self.binCount - 1, Int((loudness - Self.lowest) / Self.binWidth))
        sums[bin] += meanSquare
        counts[bin] += 1
    }

    /// The gated integrated loudness in LUFS, or nil when no block passes the gates.
    var value: Double? {
        let total = counts.reduce(0, +)
        guard total > 0, let ungated = KWeighting.loudness(meanSquare: sums.reduce(0, +) / Double(total)) else { return nil }
        let gate = ungated - 10
        var sum = 0.0
        var count = 0
        for bin in 0..<Self.binCount where counts[bin] > 0 {
            // The bin's own mean decides for all its blocks (exact unless the gate falls inside it).
            guard let loudness = KWeighting.loudness(meanSquare: sums[bin] / Double(counts[bin])), loudness > gate else { continue }
            sum += sums[bin]
            count += counts[bin]
        }
        guard count > 0 else { return nil }
        return KWeighting.loudness(meanSquare: sum / Double(count))
    }

    /// The memory the histogram holds, in bins (constant).
    var binsHeld: Int { sums.count }
}
