/// One measurement's values at a moment, in LUFS, LU and dBTP (nil: not measurable yet, such
/// as integrated loudness before a gated block, or below the absolute gate).
public struct LoudnessReading: Sendable, Equatable {
    /// The measurement's name: `in_1`, or a programme's `1-2`.
    public var name: String
    /// Momentary loudness (400 ms window), LUFS.
    public var momentary: Double?
    /// Short-term loudness (3 s window), LUFS.
    public var shortTerm: Double?
    /// Integrated (gated) loudness since the start, LUFS.
    public var integrated: Double?
    /// Loudness range since the start, LU.
    public var range: Double?
    /// The largest true peak since the start over the measurement's channels, dBTP
    /// (libebur128's oversampling); nil while there was only silence.
    public var truePeak: Double?

    /// `in_1: integrated -23.0 LUFS, range 0.0 LU, true peak -20.0 dBTP` for the summary.
    public var summaryLine: String {
        "\(name): integrated \(Self.shown(integrated, "LUFS")), range \(Self.shown(range, "LU")), true peak \(Self.shown(truePeak, "dBTP"))"
    }

    /// `LUFS 1-2  M -23.0  S -23.1  I -23.0  LRA 0.0 LU  TP -20.0 dBTP`: the meter's loudness line.
    public var meterLine: String {
        func value(_ number: Double?) -> String {
            guard let number, number.isFinite else { return "    -" }
            let text = "\((number * 10).rounded() / 10)"
            return String(repeating: " ", count: max(0, 5 - text.count)) + text
        }
        return
            "LUFS \(name + String(repeating: " ", count: max(0, 6 - name.count))) M \(value(momentary))  S \(value(shortTerm))  I \(value(integrated))"
            + "  LRA \(value(range)) LU  TP \(value(truePeak)) dBTP"
    }

    static func shown(_ value: Double?, _ unit: String) -> String {
        guard let value, value.isFinite else { return "- \(unit)" }
        return "\((value * 10).rounded() / 10) \(unit)"
    }
}
