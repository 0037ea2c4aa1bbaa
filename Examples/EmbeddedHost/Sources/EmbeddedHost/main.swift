// EmbeddedHost: the iOS capture pattern, on JACK, in one file.
//
//   swift run EmbeddedHost [SERVER|-|--embedded] [SECONDS]
//
// With no SERVER (or `-`) it uses the default JACK server. `--embedded` starts a private dummy
// server with a test tone, so the example runs anywhere; it is never a silent fallback, because
// a capture program that records test tones when the studio server is down misleads its user.
import Foundation
import JackHost
import JackHostSignals
import Synchronization

// 1. A real-time consumer: runs inside JACK's process callback. It only does arithmetic and
//    publishes through atomics: no allocation, no locks, no printing (see RealtimeAudioConsumer).
final class PeakMeter: RealtimeAudioConsumer, @unchecked Sendable {
    private var peaks: UnsafeMutableBufferPointer<Atomic<UInt32>> = .init(start: nil, count: 0)

    func prepare(format: StreamFormat) throws {
        // Allocate here, before the real-time thread ever calls process().
        peaks = .allocate(capacity: format.channelCount)
        for index in 0..<format.channelCount { (peaks.baseAddress! + index).initialize(to: Atomic(0)) }
    }

    func process(_ block: AudioBlock) {
        for channel in 0..<block.channelCount {
            var peak: Float = 0
            for sample in block.buffers[channel] { peak = max(peak, abs(sample)) }
            let previous = Float(bitPattern: peaks[channel].load(ordering: .relaxed))
            if peak > previous { peaks[channel].store(peak.bitPattern, ordering: .relaxed) }
        }
    }

    /// Reads and resets the peaks (called from an ordinary thread).
    func takePeaks() -> [Float] {
        (0..<peaks.count).map { Float(bitPattern: peaks[$0].exchange(0, ordering: .relaxed)) }
    }

    func finish() {}
}

// 2. Pick the server: the one named on the command line, the default one, or (asked for with
//    --embedded) a private dummy.
let arguments = CommandLine.arguments.dropFirst()
let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 5
let embedded = arguments.first == "--embedded"
var serverName = arguments.first.flatMap { $0.isEmpty || $0 == "-" || $0 == "--embedded" ? nil : $0 }
var privateServer: PrivateJACKServer?
var tone: TestSignalSource?
if embedded {
    let server = PrivateJACKServer(captureChannels: 2, synchronous: true)
    try server.start()
    tone = try TestSignalSource(server: server.name, channels: 2, signal: .tones(baseFrequency: 440, amplitude: 0.25))
    privateServer = server
    serverName = server.name
    print("started a private dummy server \(server.name) with a 440/880 Hz tone (--embedded)")
}

// 3. Read the session, the AVAudioSession analog.
let session: AudioSessionInfo
do {
    session = try AudioSessionInfo.query(server: serverName)
} catch {
    // JackError's description is one line that says what to do (start a server, or pass --embedded).
    print("EmbeddedHost: \(error) (or run with --embedded)")
    exit(1)
}
print(
    "session: \(Int(session.sampleRate)) Hz, \(session.bufferSize) frames per period,",
    "\(session.inputNumberOfChannels) capture channels: \(session.capturePorts.joined(separator: ", "))")

// 4. Configure the host (the RemoteIO unit): all capture channels, auto-connected, plus the
//    tone when we brought our own server.
var connections = CaptureHost.Connections.physicalCapture
if let tone { connections = .patterns(tone.outputPortNames) }
let host = CaptureHost(
    configuration: .init(
        clientName: "embedded-host", serverName: serverName, connections: connections,
        frameLimit: Int(seconds * session.sampleRate)))
let meter = PeakMeter()
host.add(realtime: meter)

// 5. A deferred tap as an AsyncSequence: blocks copied off the real-time thread, in order.
let blocks = host.blocks()

// 6. Start: ports embedded-host:in_1 ... appear, with pretty names, connected.
try host.start()
print("capturing from \(host.inputPortNames.joined(separator: ", ")) for \(seconds) s")

// 7. Consume the tap: RMS per second per channel, next to the real-time peak.
var sums = [Double](repeating: 0, count: session.inputNumberOfChannels == 0 ? 2 : host.inputPortNames.count)
var frames = 0
var lost = 0
for await block in blocks {
    lost += block.droppedFramesBefore
    for (channel, samples) in block.channels.enumerated() { sums[channel] += samples.reduce(0) { $0 + Double($1 * $1) } }
    frames += block.frameCount
    if frames >= Int(session.sampleRate) || host.isComplete {
        let peaks = meter.takePeaks()
        let line = sums.indices.map { channel in
            let rms = (sums[channel] / Double(frames)).squareRoot()
            return String(format: "in_%d peak %.3f rms %.3f", channel + 1, peaks[channel], rms)
        }
        print(line.joined(separator: " | "))
        sums = sums.map { _ in 0 }
        frames = 0
    }
    if host.isComplete && frames == 0 { break }
}

// 8. Stop: drains the tap, calls finish() on every consumer, closes the client.
host.stop()
let stats = host.statistics
print("captured \(stats.capturedFrames) frames in \(stats.cycles) cycles; xruns \(stats.xruns); frames lost \(lost)")
tone?.stop()
privateServer?.stop()
