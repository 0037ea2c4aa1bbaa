/// How a consumer wants its samples: format, layout, and (for libsndfile) 24-bit in 32-bit words.
public struct AudioEncoding: Hashable, Sendable, CustomStringConvertible {
    /// The sample format.
    public var sampleFormat: SampleFormat
    /// Frame-major (`L R L R`) when true; one run per channel when false.
    public var interleaved: Bool
    /// 24-bit samples left-justified in native 32-bit words (what libsndfile's `sf_writef_int`
    /// takes) instead of packed little-endian 3-byte samples (what a raw stream carries).
    public var int24InInt32: Bool

    /// Creates an encoding.
    public init(sampleFormat: SampleFormat, interleaved: Bool, int24InInt32: Bool = false) {
        self.sampleFormat = sampleFormat
        self.interleaved = interleaved
        self.int24InInt32 = int24InInt32 && sampleFormat == .int24
    }

    /// Bytes one sample takes in memory under this encoding.
    public var bytesPerSample: Int { int24InInt32 ? 4 : sampleFormat.bytesPerSample }

    /// For example "s16 interleaved".
    public var description: String {
        "\(sampleFormat.name)\(int24InInt32 ? " in 32-bit" : "") \(interleaved ? "interleaved" : "non-interleaved")"
    }
}
