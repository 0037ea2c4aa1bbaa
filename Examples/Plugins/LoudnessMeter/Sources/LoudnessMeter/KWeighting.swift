import Glibc  // cos, sin, tan, pow, log10: the plugin links no Foundation

/// One second-order IIR section, direct form I, in Double precision.
struct Biquad: Equatable {
    let b0, b1, b2, a1, a2: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }

    /// Filters one sample.
    @inline(__always)
    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        (x2, x1, y2, y1) = (x1, x, y1, y)
        return y
    }

    /// The magnitude response |H(e^jω)| at `frequency`.
    func gain(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        // H = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2) with z^-k = cos(kw) - i sin(kw).
        let numerator = (re: b0 + b1 * cos(w) + b2 * cos(2 * w), im: -b1 * sin(w) - b2 * sin(2 * w))
        let denominator = (re: 1 + a1 * cos(w) + a2 * cos(2 * w), im: -a1 * sin(w) - a2 * sin(2 * w))
        return
            ((numerator.re * numerator.re + numerator.im * numerator.im)
            / (denominator.re * denominator.re + denominator.im * denominator.im)).squareRoot()
    }
}

/// ITU-R BS.1770's K-weighting: a high-shelf "pre-filter" (about +4 dB above 1.5 kHz, the head's
/// effect) followed by the RLB high-pass (about 38 Hz).
///
/// The standard tabulates both sections at 48 kHz only. These are the analog prototypes those
/// tables come from (centre frequency, gain and Q fitted to the tabulated coefficients), mapped
/// to any sample rate with the bilinear transform. At 48 kHz they reproduce the standard's table
/// to within 1e-8; at 44.1 and 96 kHz the curve stays within a few hundredths of a dB of the
/// 48 kHz one (frequency warping), well inside EBU Tech 3341's 0.1 LU. The tests check both.
enum KWeighting {
    /// Stage 1, the high shelf.
    static func shelf(sampleRate: Double) -> Biquad {
        let f0 = 1681.974450955533, gainDB = 3.999843853973347, q = 0.7071752369554196
        let k = tan(Double.pi * f0 / sampleRate)
        let vh = pow(10, gainDB / 20)
        let vb = pow(vh, 0.4996667741545416)
        let a0 = 1 + k / q + k * k
        return Biquad(
            b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0, b2: (vh - vb * k / q + k * k) / a0,
            a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }

    /// Stage 2, the RLB high-pass. Its numerator is 1, -2, 1 unnormalised, as in the standard's table.
    static func highPass(sampleRate: Double) -> Biquad {
        let f0 = 38.13547087602444, q = 0.5003270373238773
        let k = tan(Double.pi * f0 / sampleRate)
        let a0 = 1 + k / q + k * k
        return Biquad(b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }

    /// BS.1770's loudness of a K-weighted mean square: -0.691 + 10 log10(z), in LUFS; nil for silence.
    static func loudness(meanSquare: Double) -> Double? {
        meanSquare > 0 ? -0.691 + 10 * log10(meanSquare) : nil
    }
}
