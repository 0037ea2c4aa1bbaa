import JackHostPluginSDK

/// A deferred plugin that measures EBU R128 loudness per input channel (each channel on its
/// own, channel weight 1) and writes JSON lines:
///
/// - every 100 ms, once 400 ms of audio have arrived, one line per channel:
///   `{"channel":"in_1","time":0.400,"momentary":-3.010,"shortTerm":null}`
///   (`time` is seconds since the stream started, lost frames included; `shortTerm` is null
///   for the first 3 s, and any value is null in silence);
/// - at the end, one summary line per channel:
///   `{"channel":"in_1","summary":true,"integrated":-3.010,"maxMomentary":-3.010,"maxShortTerm":-3.010,"seconds":4.500,"droppedFrames":0}`.
///
/// It also publishes the loudest input's `momentary` and `short-term` loudness as results
/// (plugin ABI 2), which jackhost shows in its meter, its summary, `--results FILE` and the
/// `--http` live view; in digital silence they read -inf.
///
/// Frames lost to a full ring are reported in the summary; the windows simply continue over the
/// audio that did arrive (they are not filled with silence, which would lower the reading).
public final class LoudnessMeter: DeferredPlugin {
    /// The plugin's name.
    public static let name = "LoudnessMeter"
    /// The plugin's version.
    public static let version = "1.0.0"
    /// Just `output`.
    public static let options: [PluginOption] = [.output]
    /// The loudest input's readings, published every 100 ms.
    public static let results: [PluginResult] = [
        PluginResult("momentary", unit: "LUFS", help: "momentary loudness (last 400 ms) of the loudest input"),
        PluginResult("short-term", unit: "LUFS", help: "short-term loudness (last 3 s) of the loudest input, from 3 s on"),
    ]

    /// Everything one channel needs.
    private struct Channel {
        var shelf: Biquad
        var highPass: Biquad
        var stepSum = 0.0
        var history = LoudnessHistory()
    }

    private let output: PluginOutput
    private let momentaryResult: PluginResultHandle
    private let shortTermResult: PluginResultHandle
    private var channels: [Channel] = []
    private var sampleRate = 0.0
    private var stepFrames = 0
    private var stepFilled = 0
    /// Frames since the stream started, received or lost.
    private var streamFrames = 0
    private var droppedFrames = 0

    /// Opens the output; without a host, results go nowhere.
    public convenience init(options: PluginOptions) throws { try self.init(options: options, host: .none) }

    /// Opens the output and looks up the result handles.
    public init(options: PluginOptions, host: PluginHost) throws {
        output = try PluginOutput(path: options.string("output"))
        momentaryResult = host.result("momentary")
        shortTermResult = host.result("short-term")
    }

    /// Builds the K-weighting filters for the sample rate; refuses rates the filters cannot represent.
    public func prepare(format: StreamFormat) throws {
        guard format.sampleRate >= 8000 else {
            throw LoudnessError("LoudnessMeter needs at least 8000 Hz (the K-weighting shelf sits at 1.7 kHz), got \(format.sampleRate)")
        }
        sampleRate = format.sampleRate
        stepFrames = Int((sampleRate / 10).rounded())
        let channel = Channel(shelf: KWeighting.shelf(sampleRate: sampleRate), highPass: KWeighting.highPass(sampleRate: sampleRate))
        channels = Array(repeating: channel, count: format.channelCount)
        (stepFilled, streamFrames, droppedFrames) = (0, 0, 0)
    }

    /// Worker thread: K-weights the block, and completes 100 ms steps as they fill.
    public func consume(_ block: AudioBlock) {
        droppedFrames += block.droppedFramesBefore
        streamFrames += block.droppedFramesBefore
        let count = min(block.channelCount, channels.count)
        var offset = 0
        while offset < block.frameCount {
            let take = min(block.frameCount - offset, stepFrames - stepFilled)
            for index in 0..<count {
                let samples = block.buffers[index]
                var channel = channels[index]
                for frame in offset..<(offset + take) {
                    let weighted = channel.highPass.process(channel.shelf.process(Double(samples[frame])))
                    channel.stepSum += weighted * weighted
                }
                channels[index] = channel
            }
            offset += take
            stepFilled += take
            streamFrames += take
            if stepFilled == stepFrames { completeStep() }
        }
    }

    /// Writes the summary lines; a partial last step is not counted.
    public func finish() {
        for (index, channel) in channels.enumerated() {
            let history = channel.history
            output.write(
                line: "{\"channel\":\"in_\(index + 1)\",\"summary\":true,\"integrated\":\(Self.json(history.integrated)),"
                    + "\"maxMomentary\":\(Self.json(history.maxMomentary)),\"maxShortTerm\":\(Self.json(history.maxShortTerm)),"
                    + "\"seconds\":\(PluginOutput.decimal(Double(streamFrames) / sampleRate, places: 3)),\"droppedFrames\":\(droppedFrames)}")
        }
    }

    /// Closes a 100 ms step on every channel, reports the readings and publishes the loudest.
    private func completeStep() {
        let time = PluginOutput.decimal(Double(streamFrames) / sampleRate, places: 3)
        var loudestMomentary = -Double.infinity
        var loudestShortTerm = -Double.infinity
        for index in channels.indices {
            channels[index].history.append(stepMeanSquare: channels[index].stepSum / Double(stepFrames))
            channels[index].stepSum = 0
            let history = channels[index].history
            guard history.hasMomentary else { continue }
            loudestMomentary = max(loudestMomentary, history.momentary ?? -.infinity)
            loudestShortTerm = max(loudestShortTerm, history.shortTerm ?? -.infinity)
            output.write(
                line: "{\"channel\":\"in_\(index + 1)\",\"time\":\(time),\"momentary\":\(Self.json(history.momentary)),"
                    + "\"shortTerm\":\(Self.json(history.shortTerm))}")
        }
        if channels.first?.history.hasMomentary == true { momentaryResult.publish(loudestMomentary) }
        if channels.first?.history.hasShortTerm == true { shortTermResult.publish(loudestShortTerm) }
        stepFilled = 0
    }

    /// A loudness as a JSON number with 3 decimals, or null.
    private static func json(_ value: Double?) -> String {
        value.map { PluginOutput.decimal($0, places: 3) } ?? "null"
    }
}

/// A refusal with the plugin's own words.
struct LoudnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
