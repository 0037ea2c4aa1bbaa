import JackHostPluginSDK

/// A real-time plugin that estimates the frequency of every input and, at the end of the
/// run, writes one line per channel: `frequency in_1 1000.00 Hz` (or `frequency in_2 none`
/// when a channel never completed a period above the hysteresis).
public final class FrequencyEstimator: RealtimePlugin {
    /// The plugin's name.
    public static let name = "FrequencyEstimator"
    /// The plugin's version.
    public static let version = "1.0.0"
    /// output, hysteresis and max-frequency.
    public static let options: [PluginOption] = [
        .output,
        .double(
            "hysteresis", default: 0.001,
            help: "the signal must fall below -hysteresis between counted crossings (0 to 1; 0.001 is -60 dBFS)"),
        .double(
            "max-frequency", default: 20000,
            help: "ignore crossings closer than one period of this (Hz); must be below half the sample rate"),
    ]

    private let output: PluginOutput
    private let hysteresis: Float
    private let maxFrequency: Double
    private var sampleRate = 0.0
    /// One counter per channel, allocated in prepare so that process() never allocates.
    private var counters = UnsafeMutableBufferPointer<ZeroCrossingCounter>(start: nil, count: 0)

    /// Reads and checks the options, and opens the output.
    public init(options: PluginOptions) throws {
        hysteresis = Float(options.double("hysteresis") ?? 0.001)
        maxFrequency = options.double("max-frequency") ?? 20000
        guard (0..<1).contains(hysteresis) else { throw EstimatorError("hysteresis=\(hysteresis) must be at least 0 and below 1") }
        guard maxFrequency > 0 else { throw EstimatorError("max-frequency=\(maxFrequency) must be positive") }
        output = try PluginOutput(path: options.string("output"))
    }

    deinit { counters.deallocate() }

    /// Refuses a max-frequency at or above Nyquist; allocates one counter per channel.
    public func prepare(format: StreamFormat) throws {
        guard maxFrequency < format.sampleRate / 2 else {
            throw EstimatorError(
                "max-frequency \(Self.hertz(maxFrequency)) Hz is not below the Nyquist frequency "
                    + "\(Self.hertz(format.sampleRate / 2)) Hz of a \(Self.hertz(format.sampleRate)) Hz stream")
        }
        sampleRate = format.sampleRate
        counters.deallocate()
        counters = .allocate(capacity: format.channelCount)
        let counter = ZeroCrossingCounter(hysteresis: hysteresis, maxFrequencyPerSample: maxFrequency / sampleRate)
        counters.initialize(repeating: counter)
        // Run the processing code once here: the first use of a generic type instantiates its
        // metadata under a runtime lock, which must not happen on the real-time thread.
        var scratch = counter
        let silence: [Float] = [0, -1, 1]
        silence.withUnsafeBufferPointer { scratch.consume($0) }
        scratch.closeSegment()
    }

    /// **Real-time thread.** Feeds each channel's samples to its counter; an xrun closes the segment.
    public func process(_ block: AudioBlock) {
        let channels = min(block.channelCount, counters.count)
        let restart = block.timestamp.xrunSincePreviousCycle
        for channel in 0..<channels {
            if restart { counters[channel].closeSegment() }
            counters[channel].consume(block.buffers[channel])
        }
    }

    /// The estimates so far, in Hz, by channel; nil where no full period was seen.
    public var estimates: [Double?] { counters.map { $0.frequencyPerSample.map { $0 * sampleRate } } }

    /// Writes one line per channel.
    public func finish() {
        for (index, estimate) in estimates.enumerated() {
            let value = estimate.map { PluginOutput.decimal($0, places: 2) + " Hz" } ?? "none"
            output.write(line: "frequency in_\(index + 1) \(value)")
        }
    }

    private static func hertz(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A refusal with the plugin's own words.
struct EstimatorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
