import Dispatch
import FoundationEssentials
import Glibc
import JackHostSupport
import Synchronization

/// Draws a ``LevelMeter`` off the real-time thread: live bars on a terminal,
/// plain periodic lines otherwise, and a summary table at the end.
public final class MeterDisplay: @unchecked Sendable {
    // @unchecked: the display thread owns its state; start/stop are called from one thread and synchronise with it through an atomic and a semaphore.
    /// What the summary table reports besides levels.
    public struct Counters: Sendable {
        /// Frames lost by deferred consumers (for example the recorder's ring).
        public var droppedFrames: Int
        /// Xruns the server reported.
        public var xruns: Int
        /// Frames the server's clock skipped for this client (frame-time jumps).
        public var skippedFrames: Int
        /// Seconds of audio waiting in the fullest elastic buffer (a stalled disk shows here).
        public var bufferedSeconds: Double
        /// Seconds of recording the take's disk has left, when that is under 10 minutes.
        public var recordingSecondsLeft: Double?
        /// Plugins' published results, one line per plugin (`FrequencyEstimator: frequency.hz 440.0`).
        public var resultLines: [String] = []
        /// Lines shown as they are: loudness (`--loudness`) and raised alarms.
        public var statusLines: [String] = []
        /// The keys that act on the take (`keys: m marker  r rotate`), shown on a terminal; nil for none.
        public var keys: String?
        /// Creates counters.
        public init(
            droppedFrames: Int = 0, xruns: Int = 0, skippedFrames: Int = 0, bufferedSeconds: Double = 0,
            recordingSecondsLeft: Double? = nil, resultLines: [String] = [], statusLines: [String] = [], keys: String? = nil
        ) {
            self.keys = keys
            self.statusLines = statusLines
            self.resultLines = resultLines
            self.recordingSecondsLeft = recordingSecondsLeft
            self.droppedFrames = droppedFrames
            self.xruns = xruns
            self.skippedFrames = skippedFrames
            self.bufferedSeconds = bufferedSeconds
        }
    }

    private let meter: LevelMeter
    private let output: Int32
    private let isTerminal: Bool
    private let linesInterval: Double
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var started = false
    private var drawnLines = 0
    private var holds: [(level: Float, time: Double)] = []
    /// Supplies live counters (xruns, drops) for the display; called on the display thread.
    private let counters: @Sendable () -> Counters

    /// Creates a display writing to file descriptor `output` (1 = stdout, 2 = stderr).
    /// - Parameters:
    ///   - plainInterval: Seconds between lines when `output` is not a terminal.
    ///   - counters: The live counters (xruns, drops) shown beside the levels; called on the display thread.
    public init(
        meter: LevelMeter, output: Int32 = 1, plainInterval: Double = 1.0, counters: @escaping @Sendable () -> Counters = { Counters() }
    ) {
        self.meter = meter
        self.counters = counters
        self.output = output
        self.isTerminal = isatty(output) == 1
        self.linesInterval = plainInterval
    }

    /// Starts the drawing thread: about 15 redraws a second on a terminal.
    public func start() {
        guard !started else { return }
        started = true
        WorkerThread.start(name: "jackhost-meter-display") { [self] in
            let interval = isTerminal ? 1.0 / 15 : linesInterval
            var next = Date().timeIntervalSinceReferenceDate + interval
            while !stopFlag.load(ordering: .acquiring) {
                let now = Date().timeIntervalSinceReferenceDate
                if now >= next {
                    draw(snapshot: meter.takeSnapshot(), now: now)
                    next += interval
                    if next < now { next = now + interval }
                }
                // Sleep until the next redraw (at most 50 ms, so stop() is prompt): polling
                // faster would steal CPU from JACK's threads on small machines.
                let wait = min(max(next - Date().timeIntervalSinceReferenceDate, 0.001), 0.05)
                usleep(UInt32(wait * 1_000_000))
            }
            done.signal()
        }
    }

    /// Stops the drawing thread and clears the live bars.
    public func stop() {
        guard started else { return }
        started = false
        stopFlag.store(true, ordering: .releasing)
        done.wait()
    }

    private func draw(snapshot: [ChannelLevels], now: Double) {
        if holds.count != snapshot.count { holds = Array(repeating: (0, now), count: snapshot.count) }
        for (index, levels) in snapshot.enumerated() where levels.peak >= holds[index].level || now - holds[index].time > 2 {
            holds[index] = (levels.peak, now)
        }
        let counters = counters()
        if isTerminal {
            var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
            for (index, levels) in snapshot.enumerated() {
                text += MeterDisplay.barLine(channel: index + 1, levels: levels, hold: holds[index].level) + "\u{1B}[K\n"
            }
            text +=
                "xruns \(counters.xruns)  dropped \(counters.droppedFrames)  skipped \(counters.skippedFrames)  buffered \(counters.bufferedSeconds.formatted(places: 1)) s\(Self.spaceNote(counters))\u{1B}[K\n"
            for line in counters.resultLines + counters.statusLines { text += line + "\u{1B}[K\n" }
            if let keys = counters.keys { text += keys + "\u{1B}[K\n" }
            drawnLines = snapshot.count + 1 + counters.resultLines.count + counters.statusLines.count + (counters.keys == nil ? 0 : 1)
            write(text)
        } else {
            let fields = snapshot.enumerated().map { index, levels in
                "in_\(index + 1) \(MeterDisplay.format(LevelMeter.dB(levels.peak)))/\(MeterDisplay.format(LevelMeter.dB(levels.rms)))"
            }
            write(
                "meter peak/rms dBFS: " + fields.joined(separator: "  ")
                    + "  xruns \(counters.xruns) dropped \(counters.droppedFrames) buffered \(counters.bufferedSeconds.formatted(places: 1)) s\(Self.spaceNote(counters))\n"
                    + counters.resultLines.map { "results \($0)\n" }.joined() + counters.statusLines.map { "\($0)\n" }.joined()
            )
        }
    }

    /// One bar: `in_1 [#########-------|  ]  -6.0 dBFS peak  -9.0 rms  hold -6.0  clips 0`.
    static func barLine(channel: Int, levels: ChannelLevels, hold: Float) -> String {
        let width = 40
        func column(_ linear: Float) -> Int {
            let db = max(LevelMeter.dB(linear), -60)
            return Int(((db + 60) / 60 * Float(width)).rounded(.down))
        }
        let filled = min(width, max(0, column(levels.peak)))
        let holdColumn = min(width - 1, max(0, column(hold)))
        var bar = Array(repeating: Character(" "), count: width)
        for index in 0..<filled { bar[index] = "#" }
        if hold > 0 { bar[holdColumn] = "|" }
        let name = "in_\(channel)".padded(to: 6)
        return "\(name)[\(String(bar))] \(format(LevelMeter.dB(levels.peak))) pk \(format(LevelMeter.dB(levels.rms))) rms  clips \(levels.clips)"
    }

    /// A dBFS value to one decimal, right-aligned in six columns; silence prints "-inf".
    public static func format(_ db: Float) -> String {
        let text = db.isFinite ? db.formatted(places: 1) : "-inf"
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }

    /// "  DISK: 7.2 min left" when the take's disk has less than 10 minutes left.
    static func spaceNote(_ counters: Counters) -> String {
        guard let left = counters.recordingSecondsLeft, left < 600 else { return "" }
        return "  DISK: \((left / 60).formatted(places: 1)) min left"
    }

    /// The summary table printed at exit, one row per channel:
    /// `channel  peak_dBFS  rms_dBFS  clips  dropped  skipped  xruns`, with two decimals:
    /// dropped frames are ring overruns in jackhost, skipped frames are frame-time jumps
    /// (the server's clock moved on without running jackhost), xruns are what the server reported.
    public static func summary(levels: [ChannelLevels], counters: Counters) -> String {
        var lines = ["channel  peak_dBFS  rms_dBFS  clips  dropped  skipped  xruns"]
        for (index, channel) in levels.enumerated() {
            func db(_ value: Float) -> String {
                let v = LevelMeter.dB(value)
                return v.isFinite ? v.formatted(places: 2) : "-inf"
            }
            let name = "in_\(index + 1)"
            lines.append(
                [
                    name.padded(to: 7),
                    db(channel.overallPeak).leftPadded(9), db(channel.overallRMS).leftPadded(9),
                    String(channel.clips).leftPadded(6), String(counters.droppedFrames).leftPadded(8),
                    String(counters.skippedFrames).leftPadded(8), String(counters.xruns).leftPadded(6),
                ]
                .joined(separator: "  "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(output, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
