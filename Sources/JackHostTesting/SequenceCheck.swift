// SequenceCheck.swift
//
// The inverse of `TestSignal.sequence`: which frame a sample names. Only a test reads a
// sequence back, so it lives here, not beside the generator in JackHostSignals.

extension TestSignal {
    /// The frame index (mod 65536) whose channel-0 sample is `value`, inverting ``TestSignal/sequenceValue(channel:frame:)``.
    public static func sequenceFrame(fromChannel0 value: Float) -> Int {
        sequenceLowBits(value, channel: 0)
    }

    /// The frame's low 16 bits from an even channel's sample.
    public static func sequenceLowBits(_ value: Float, channel: Int) -> Int {
        let k = Int(Int16(value * 32768)) & 0xFFFF
        // 31 * 31711 ≡ 1 (mod 65536), so multiplying by 31711 undoes the * 31.
        return ((k &- 1 &- channel &* 7919) &* 31_711) & 0xFFFF
    }

    /// The whole frame number (mod 2^32) from the samples of channels 0 and 1 at one instant.
    public static func sequenceFrame(channel0: Float, channel1: Float) -> Int {
        let low = sequenceLowBits(channel0, channel: 0)
        let k1 = Int(Int16(channel1 * 32768)) & 0xFFFF
        let high = (k1 &- (low &* 31 &+ 7919 &+ 1)) & 0xFFFF
        return high << 16 | low
    }
}
