/// Estimates one channel's fundamental frequency from the times of its rising zero crossings.
///
/// A crossing's time is interpolated linearly between the two samples around zero, which
/// is exact to well under a thousandth of a sample for a sine, so the estimate over N
/// periods is `sampleRate * (crossings - 1) / (last - first)`. Two guards keep noise out:
/// hysteresis (the signal must dip below `-hysteresis` before the next rising crossing
/// counts), and a minimum spacing of one period of `maxFrequency`.
///
/// **Real-time safe**: a value type with no storage outside itself; ``consume(_:)`` only
/// does arithmetic.
struct ZeroCrossingCounter {
    private let hysteresis: Float
    private let minimumSpacing: Double

    /// The last sample seen, or nil at the start of a segment.
    private var previous: Float?
    /// Whether the signal went below `-hysteresis` since the last counted crossing.
    private var armed = false
    /// The index of the next sample, counted from the start of the segment.
    private var position = 0.0
    private var firstCrossing = 0.0
    private var lastCrossing = 0.0
    private var crossings = 0
    /// Periods and their total length, in samples, from segments already closed.
    private var closedPeriods = 0.0
    private var closedSpan = 0.0

    /// Creates a counter; `maxFrequency` is in cycles per sample (Hz / sample rate).
    init(hysteresis: Float, maxFrequencyPerSample: Double) {
        self.hysteresis = hysteresis
        minimumSpacing = 1 / maxFrequencyPerSample
    }

    /// **Real-time safe.** Counts the rising crossings in `samples`, which continue the previous call's.
    @inline(__always)
    mutating func consume(_ samples: UnsafeBufferPointer<Float>) {
        for index in 0..<samples.count {
            let sample = samples[index]
            if sample < -hysteresis { armed = true }
            if armed, let before = previous, before < 0, sample >= 0 {
                // Where the straight line from `before` to `sample` meets zero, in samples.
                let time = position - 1 + Double(before / (before - sample))
                if crossings == 0 || time - lastCrossing >= minimumSpacing {
                    if crossings == 0 { firstCrossing = time }
                    lastCrossing = time
                    crossings += 1
                    armed = false
                }
            }
            previous = sample
            position += 1
        }
    }

    /// **Real-time safe.** Ends a continuous segment (the audio has a gap, such as an xrun):
    /// keeps what it measured, and starts afresh for what follows.
    mutating func closeSegment() {
        if crossings > 1 {
            closedPeriods += Double(crossings - 1)
            closedSpan += lastCrossing - firstCrossing
        }
        crossings = 0
        previous = nil
        armed = false
        position = 0
    }

    /// The frequency over everything seen, in cycles per sample, or nil without a full period.
    var frequencyPerSample: Double? {
        var periods = closedPeriods, span = closedSpan
        if crossings > 1 {
            periods += Double(crossings - 1)
            span += lastCrossing - firstCrossing
        }
        return periods > 0 && span > 0 ? periods / span : nil
    }
}
