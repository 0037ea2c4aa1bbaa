import CSignals
import FoundationEssentials
import Glibc
import JackHost
import JackHostSignals

/// `jackhost signal`: plays a test signal into JACK, for checking a setup end to end
/// (and for tests under PipeWire or netjack2, where the generator must be its own process).
enum SignalCommand {
    static let options: [OptionSpec] = [
        OptionSpec("server", short: "s", value: "NAME", help: "JACK server to use (default: $JACK_DEFAULT_SERVER or \"default\")"),
        OptionSpec("name", short: "n", value: "CLIENT", help: "JACK client name (default: jackhost-signal)"),
        OptionSpec("channels", short: "c", value: "N", help: "number of outputs out_1 ... out_N, 1-1024 (default: 2)"),
        OptionSpec("kind", short: "k", value: "KIND", help: "tones (220 Hz x channel), sine, or sequence (bit-exact test pattern) (default: tones)"),
        OptionSpec("frequency", value: "HZ", help: "frequency for --kind sine (default: 1000)"),
        OptionSpec("amplitude", value: "A", help: "peak amplitude for tones and sine, 0-1 (default: 0.5)"),
        OptionSpec("connect", value: "PATTERN", repeatable: true, help: "connect out_1, out_2, ... to input ports matching PATTERN"),
        OptionSpec("duration", short: "d", value: "SECONDS", help: "stop after SECONDS (default: until interrupted)"),
        OptionSpec("stall-ms", value: "MS", help: "overload on purpose: sleep MS in the process callback once a second (provokes xruns)"),
        CommandTables.help,
    ]

    static func run(_ arguments: [String]) throws -> ExitStatus {
        let parsed = try parseArguments(arguments, options: options, command: "signal")
        if parsed.has("help") {
            print(CommandCatalog.signal.usage)
            return .success
        }
        if let extra = parsed.positionals.first { throw UsageError("unexpected argument \"\(ValueParsing.shown(extra))\" for `jackhost signal`") }
        let server = try ValueParsing.server(parsed)
        let clientName = try ValueParsing.clientName(parsed, default: "jackhost-signal")
        let channels =
            try parsed.value("channels").map {
                try ValueParsing.wholeNumber($0, option: "channels", range: 1...JackError.maximumChannelCount)
            } ?? 2
        let amplitude =
            try parsed.value("amplitude").map { try ValueParsing.number($0, option: "amplitude", unit: "(full scale)", range: 0...1) } ?? 0.5
        let frequency = try parsed.value("frequency").map { try ValueParsing.number($0, option: "frequency", unit: "Hz", range: 1...96000) } ?? 1000
        let duration = try parsed.value("duration").map { try ValueParsing.seconds($0, option: "duration") }
        let stall = try parsed.value("stall-ms").map { try ValueParsing.number($0, option: "stall-ms", unit: "ms", range: 0...10_000) } ?? 0
        let patterns = try ValueParsing.patterns(parsed)
        let signal: TestSignal
        switch parsed.value("kind") ?? "tones" {
        case "tones": signal = .tones(baseFrequency: 220, amplitude: Float(amplitude))
        case "sine": signal = .sine(frequency: frequency, amplitude: Float(amplitude))
        case "sequence": signal = .sequence
        case let other: throw UsageError("unknown signal kind \"\(ValueParsing.shown(other))\"; use tones, sine or sequence")
        }
        csignals_install_stop_handlers()
        setenv("JACK_NO_START_SERVER", "1", 1)
        let source = try TestSignalSource(
            name: clientName, server: server,
            channels: channels, signal: signal, stallMicroseconds: UInt32(stall * 1000))
        defer { source.stop() }
        var destinations: [String] = []
        for pattern in patterns {
            let matches = source.client.portExists(pattern) ? [pattern] : try source.client.audioInputPortNames(matching: pattern)
            if matches.isEmpty { throw JackError.patternMatchedNothing(pattern: pattern) }
            destinations += matches
        }
        try source.connect(to: destinations)
        printNote("playing \(parsed.value("kind") ?? "tones") on \(source.outputPortNames.joined(separator: " "))")
        let frameLimit = duration.map { Int($0 * Double(source.client.sampleRate)) }
        while csignals_stop_requests() == 0 {
            if let frameLimit, source.framesPlayed >= frameLimit { break }
            usleep(10_000)
        }
        return .success
    }

}
