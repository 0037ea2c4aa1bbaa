import Glibc
import JackHost
import Synchronization

/// Signals the built-in ``TestSignalSource`` plays, and the reference values tests compare against.
public enum TestSignal: Sendable, Equatable {
    /// A distinct sine per channel: channel c (0-based) plays `baseFrequency * (1 + c % 80)` Hz.
    case tones(baseFrequency: Double, amplitude: Float)
    /// A full-period sine of one frequency and amplitude on every channel.
    case sine(frequency: Double, amplitude: Float)
    /// A deterministic sequence that identifies channel and frame, for bit-exact checks;
    /// see ``sequenceValue(channel:frame:)``. It does not repeat for 2^32 frames (24.8 hours
    /// at 48 kHz), so a loss of any length, even a multiple of 65,536 frames, is detected.
    case sequence

    /// The sample of ``sequence`` on `channel` at `frame` (both 0-based).
    ///
    /// Every value is k / 32768 for an integer k in [-32768, 32767], so it converts
    /// exactly to 16-, 24- and 32-bit integers and back. Even channels carry the frame's low
    /// 16 bits (k = 31·low + 7919·channel + 1, mod 2^16: each even channel names its own
    /// frame modulo 65,536); odd channels add the high 16 bits to the same formula, so a
    /// reader that knows the low bits from an even channel recovers the whole frame number
    /// (`sequenceFrame(channel0:channel1:)` in JackHostTesting). Channel 1 is never 0 at frame 0, which lets a
    /// reader find the start of the signal after leading silence.
    @inlinable
    public static func sequenceValue(channel: Int, frame: Int) -> Float {
        let low = frame & 0xFFFF
        let high = channel & 1 == 1 ? (frame >> 16) & 0xFFFF : 0
        let k = (low &* 31 &+ channel &* 7919 &+ 1 &+ high) & 0xFFFF
        return Float(Int16(truncatingIfNeeded: k)) / 32768
    }

}

/// A JACK client that plays a ``TestSignal`` on N output ports: the generator for tests
/// and for jackhost's embedded first-use mode, where the dummy backend's capture ports
/// only deliver silence.
public final class TestSignalSource: @unchecked Sendable {
    // @unchecked: everything is immutable after init except the client, which is thread-safe; the render state belongs to the process thread.
    /// The JACK client.
    public let client: JackClient
    /// Full names of the output ports, in order.
    public let outputPortNames: [String]
    private let state: SignalState

    /// Opens a client named `name` with `channels` outputs `out_1` … and activates it.
    ///
    /// - Parameter stallMicroseconds: When non-zero, the generator's process callback sleeps
    ///   this long once a second: a deliberately overloaded client, to provoke real xruns
    ///   when testing how other clients account for them.
    public init(
        name: String = "jackhost-signal", server: String?, channels: Int, signal: TestSignal,
        stallMicroseconds: UInt32 = 0
    ) throws {
        let client = try JackClient(name: name, server: server)
        self.client = client
        var ports: [JackPort] = []
        do {
            for index in 1...channels {
                let port = try client.registerAudioOutput(named: "out_\(index)")
                client.setProperty(on: port, key: JackClient.prettyNameKey, value: "Test signal \(index)")
                ports.append(port)
            }
            state = SignalState(
                client: client, ports: ports, signal: signal, sampleRate: Double(client.sampleRate),
                clientHandle: client.handle,
                stallMicroseconds: stallMicroseconds)
            state.install(on: client)
            outputPortNames = ports.map { client.fullName(of: $0) }
            try client.activate()
        } catch {
            client.close()
            throw error
        }
    }

    /// Frames played so far.
    public var framesPlayed: Int { state.framesPlayed.load(ordering: .relaxed) }

    /// A gain on every output from the next cycle on (1 plays the signal as it is): a level that
    /// moves, for trigger tests.
    public var gain: Float {
        get { Float(bitPattern: state.gainBits.load(ordering: .relaxed)) }
        set { state.gainBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// Whether the outputs play silence from the next cycle on (the signal goes on underneath,
    /// so unmuting resumes where it would have been): dead air for alarm tests.
    public var isMuted: Bool {
        get { state.muted.load(ordering: .relaxed) }
        set { state.muted.store(newValue, ordering: .relaxed) }
    }

    /// The JACK frame time at which the signal's frame 0 was played, once it has been.
    /// With a direct connection, a recorder captures signal frame n at JACK frame time
    /// `firstFrameTime + n`: an independent clock for checking time stamps.
    public var firstFrameTime: UInt32? {
        let stored = state.firstFrameTime.load(ordering: .acquiring)
        return stored == 0 ? nil : UInt32(truncatingIfNeeded: stored - 1)
    }

    /// When the generator played JACK frame `frameTime`, on JACK's microsecond clock: the start
    /// of the cycle that held it as JACK told the generator in that cycle, plus the frame's offset.
    /// Unlike a later `jack_frames_to_time`, xruns since then do not move it. Nil when that cycle
    /// was not played, or is more than 16384 cycles old.
    public func microseconds(atFrameTime frameTime: UInt32) -> UInt64? {
        state.microseconds(atFrameTime: frameTime, bufferSize: UInt32(clamping: client.bufferSize))
    }

    /// Connects output i to `destinations[i]`.
    public func connect(to destinations: [String]) throws {
        for (source, destination) in zip(outputPortNames, destinations) {
            try client.connect(source, to: destination)
        }
    }

    /// Deactivates and closes the client.
    public func stop() {
        client.deactivate()
        client.close()
    }

    /// Closes the client without deactivating, for when its server has died.
    public func abandon() {
        client.close(serverAlive: false)
    }
}

// REAL-TIME: `render` runs in the generator's process callback.
final class SignalState: @unchecked Sendable {
    // @unchecked: `frame` is touched only by the process thread; `framesPlayed` is atomic; the ports are set before activation.
    let ports: UnsafeMutablePointer<OpaquePointer>
    let channelCount: Int
    let signal: TestSignal
    let sampleRate: Double
    let framesPlayed = Atomic<Int>(0)
    /// Whether the outputs play silence (the signal's frames still advance).
    let muted = Atomic<Bool>(false)
    /// A gain on every output, as a Float's bit pattern (1: the signal as it is).
    let gainBits = Atomic<UInt32>(Float(1).bitPattern)
    /// The JACK frame time of signal frame 0, plus one (0: not played yet).
    let firstFrameTime = Atomic<UInt64>(0)
    private let clientHandle: OpaquePointer
    private var frame = 0
    let stallMicroseconds: UInt32
    /// The last ``cycleLogCapacity`` cycles' start, as JACK told this client in that cycle
    /// (`jack_get_cycle_times`): frame time and microseconds. A later `jack_frames_to_time`
    /// extrapolates from the server's clock model as it is then, which xruns move; this record
    /// is what the cycle itself said, so tests can check another client's time stamps against it.
    /// An instance constant, not a static one: a static would be a lazy global in the callback.
    let cycleLogCapacity = 16384
    private let cycleFrames = UnsafeMutablePointer<UInt32>.allocate(capacity: 16384)
    private let cycleMicroseconds = UnsafeMutablePointer<UInt64>.allocate(capacity: 16384)
    /// Cycles logged so far; entry i is at i % cycleLogCapacity.
    let cyclesLogged = Atomic<Int>(0)

    init(
        client: JackClient, ports: [JackPort], signal: TestSignal, sampleRate: Double, clientHandle: OpaquePointer,
        stallMicroseconds: UInt32 = 0
    ) {
        self.clientHandle = clientHandle
        self.stallMicroseconds = stallMicroseconds
        channelCount = ports.count
        self.ports = .allocate(capacity: ports.count)
        for (index, port) in ports.enumerated() { (self.ports + index).initialize(to: port.handle) }
        self.signal = signal
        self.sampleRate = sampleRate
    }

    deinit {
        ports.deallocate()
        cycleFrames.deallocate()
        cycleMicroseconds.deallocate()
    }

    /// When frame `frameTime` was played, on JACK's microsecond clock, from the logged start of
    /// the cycle that held it (plus its offset in that cycle at the nominal rate); nil when that
    /// cycle is not in the log (not played yet, or more than ``cycleLogCapacity`` cycles ago).
    func microseconds(atFrameTime frameTime: UInt32, bufferSize: UInt32) -> UInt64? {
        let logged = cyclesLogged.load(ordering: .acquiring)
        for index in stride(from: logged - 1, through: max(0, logged - cycleLogCapacity), by: -1) {
            let slot = index % cycleLogCapacity
            let offset = frameTime &- cycleFrames[slot]
            if offset < bufferSize {
                return cycleMicroseconds[slot] + UInt64((Double(offset) * 1e6 / sampleRate).rounded())
            }
        }
        return nil
    }

    func install(on client: JackClient) {
        client.installProcessCallback(
            { frames, context in
                Unmanaged<SignalState>.fromOpaque(context!).takeUnretainedValue().render(frames: frames)
                return 0
            }, owner: self)
    }

    func render(frames: UInt32) {
        let count = Int(frames)
        // Real-time safe: this cycle's start, as the server's clock has it now.
        if let cycle = JackClient.cycleStart(of: clientHandle) {
            let logged = cyclesLogged.load(ordering: .relaxed)
            cycleFrames[logged % cycleLogCapacity] = cycle.frames
            cycleMicroseconds[logged % cycleLogCapacity] = cycle.microseconds
            cyclesLogged.store(logged + 1, ordering: .releasing)
        }
        if frame == 0 {
            // Real-time safe: the frame time at this cycle's start.
            firstFrameTime.store(UInt64(JackClient.lastFrameTime(of: clientHandle)) + 1, ordering: .releasing)
        }
        for channel in 0..<channelCount {
            let out = JackClient.buffer(of: ports[channel], frames: frames)
            switch signal {
            case .sequence:
                for i in 0..<count { out[i] = TestSignal.sequenceValue(channel: channel, frame: frame + i) }
            case .tones(let base, let amplitude):
                let step = 2 * Double.pi * base * Double(1 + channel % 80) / sampleRate
                for i in 0..<count { out[i] = amplitude * Float(sin(step * Double(frame + i))) }
            case .sine(let frequency, let amplitude):
                let step = 2 * Double.pi * frequency / sampleRate
                for i in 0..<count { out[i] = amplitude * Float(sin(step * Double(frame + i))) }
            }
            if muted.load(ordering: .relaxed) {
                out.update(repeating: 0, count: count)
            } else if gainBits.load(ordering: .relaxed) != Float(1).bitPattern {
                let gain = Float(bitPattern: gainBits.load(ordering: .relaxed))
                for i in 0..<count { out[i] *= gain }
            }
        }
        let second = Int(sampleRate)
        if stallMicroseconds > 0 && second > 0 && frame / second != (frame + count) / second {
            usleep(stallMicroseconds)  // deliberate overload, see init(stallMicroseconds:)
        }
        frame += count
        framesPlayed.add(count, ordering: .relaxed)
    }
}
