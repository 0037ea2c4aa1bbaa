import CSndFile
import FoundationEssentials
import Glibc
import JackHostSupport
import JackHostTypes
import Synchronization

/// A deferred consumer that writes every input to audio files through libsndfile.
///
/// - The files hold exactly the frames captured: when the ring dropped frames, the
///   recorder writes the same number of frames of silence, so the timeline stays aligned,
///   and counts them in ``silenceFramesInserted``.
/// - The header is rewritten every half second of audio, so a take killed with SIGKILL
///   stays readable up to the last rewrite. Ogg and MP3 need no rewrite: they are streams of
///   pages and frames, readable up to the last one written.
/// - Ogg Vorbis, Opus and MP3 are encoded from float samples, with ``quality`` when set
///   (see ``AudioContainer/configure(_:quality:)``).
/// - WAV is written as RF64 with auto-downgrade: a plain WAV below 4 GiB, RF64 beyond.
/// - WAV and RF64 files carry a Broadcast Wave `bext` chunk whose time reference places the
///   first sample, taken from its JACK cycle time, on a DAW's timeline (``broadcastWave``).
/// - A file is created with its first block, so a run that captures nothing leaves no file.
/// - No file is ever overwritten unless asked (see ``TakeFiles``): an existing take, segment
///   or link is refused before the run and again, atomically, when the file is created.
/// - With a ``SplitLimit``, takes are named `NAME-0001.ext`, `NAME-0002.ext`, … and split at
///   the exact frame; with ``alignSplits``, on wall-clock boundaries (14:00:00, 15:00:00, …),
///   local or UTC (``Settings/timeZone``).
/// - A name template may put segments in date folders (`/srv/log/%Y/%m/%d/%H%M.wav`), made as
///   segments need them; with ``retention``, old segments and the empty folders jackhost made go.
/// - With ``channelFiles``, each segment is one mono file per input, all starting on the same
///   frame and finalised together.
/// - With a ``trigger``, files are written only while a take runs, and each take starts
///   ``preRollSeconds`` before its trigger, from a buffer of the input kept meanwhile.
/// - After a server loss the current file is finalised and recording continues in the next
///   numbered segment (`take.wav`, then `take-0002.wav`, …) once the host reconnects.
public final class Recorder: DeferredAudioConsumer, EncodedAudioConsumer, @unchecked Sendable {
    // @unchecked: file state is touched only by the worker thread (consume/finish/handle, ordered by the host); settings are fixed at init; counters are atomics; `createdFiles`, notes and the failure are under `lock`.
    /// The name shown in reports.
    public let consumerName = "recorder"
    /// The path asked for (with splitting, the stem of the numbered files; for an automatic
    /// name, its pattern).
    public var path: String { takeFiles.displayName }
    /// Everything about the takes, as given to ``init(name:settings:)``.
    public let settings: Settings
    /// The container (``Settings/container``).
    public var container: AudioContainer { settings.container }
    /// The sample format on disk (``Settings/sampleFormat``).
    public var sampleFormat: SampleFormat { settings.sampleFormat }
    /// When to start a new file, if ever (``Settings/split``).
    public var split: SplitLimit? { settings.split }

    /// Frames written to disk, including inserted silence.
    public var framesWritten: Int { written.load(ordering: .relaxed) }
    /// Frames of silence written in place of frames the ring dropped.
    public var silenceFramesInserted: Int { silence.load(ordering: .relaxed) }
    /// Frames that arrived after a write error and were not written.
    public var framesLostToErrors: Int { lostToErrors.load(ordering: .relaxed) }
    /// Old segments `--keep` has removed so far.
    public var filesRemovedByRetention: Int { removedCount.load(ordering: .relaxed) }
    /// One line for each old segment, and each empty date folder, `--keep` removed since the last
    /// call, oldest first.
    public func takeRemovals() -> [String] {
        lock.withLock { _ in
            defer { pendingRemovals.removeAll() }
            return pendingRemovals
        }
    }
    /// Triggered takes started so far.
    public var takesStarted: Int { takes.load(ordering: .relaxed) }
    /// Whether a triggered take is open now (always false without a trigger); any thread.
    public var isTakeOpen: Bool { takeOpen.load(ordering: .relaxed) }
    /// Every file created so far, in order.
    public var files: [String] { lock.withLock { _ in createdFiles } }
    /// Every marker placed so far (``requestMarker(label:source:)``), in order.
    public var markers: [TakeMarker] { lock.withLock { _ in placedMarkers } }
    /// The write error that stopped the recorder, if any.
    public var failure: RecorderError? { lock.withLock { _ in failureStorage } }
    /// Problems that did not stop the take (a sidecar that could not be written, a segment
    /// retention could not remove), oldest first; ``takeNotes()`` hands them over once.
    public func takeNotes() -> [String] {
        lock.withLock { _ in
            defer { pendingNotes.removeAll() }
            return pendingNotes
        }
    }

    private let written = Atomic<Int>(0)
    private let silence = Atomic<Int>(0)
    private let lostToErrors = Atomic<Int>(0)
    private let takes = Atomic<Int>(0)
    private let takeOpen = Atomic<Bool>(false)
    private let rotateRequests = Atomic<Int>(0)
    /// The JACK microsecond clock at the latest rotate request.
    private let rotateStamp = Atomic<UInt64>(0)
    private let rotationCount = Atomic<Int>(0)
    /// Rotate requests the worker has seen, and the stamp of one not yet reached (worker thread).
    private var seenRotateRequests = 0
    private var pendingRotate: UInt64?
    private let removedCount = Atomic<Int>(0)
    private var pendingRemovals: [String] = []
    private let markerRequests = MarkerRequests()
    /// Markers whose cycle was reached, at their timeline position, until a write covers it (worker thread).
    private var unplacedMarkers: [(position: Int64, request: MarkerRequests.Request)] = []
    private let lock = Mutex<Void>(())
    private var createdFiles: [String] = []
    private var placedMarkers: [TakeMarker] = []
    private var failureStorage: RecorderError?
    private var pendingNotes: [String] = []

    private var format: StreamFormat?
    /// Names and creates the files (worker thread once recording).
    private var takeFiles: TakeFiles
    private let ownEncoder = BlockEncoder()
    private var writer: TakeWriter?
    private var timeline: TakeTimeline?
    /// Where the next block starts, in timeline positions (after the previous block).
    private var nextPosition: Int64 = 0
    /// The position of the next frame the open segment will write.
    private var writePosition: Int64 = 0
    /// With aligned splits, the position where the open segment ends.
    private var segmentEnd: Int64 = .max
    /// The open segment's sidecar, rewritten complete at close.
    private var sidecarState: (path: String, sidecar: TakeSidecar)?
    /// The loudness the sidecars carry (``Settings/loudness``), fed what is written.
    private var segmentLoudness: SegmentLoudness?
    /// The segment that a split just closed, for the `rotated` event.
    private var rotatedFrom: [String] = []
    private var gate: TriggerGate?
    private var preRoll: PreRollBuffer?
    private var zeros: UnsafeMutableRawPointer?
    private var zeroFrames = 0

    /// Describes a recording to `path` (`-` for standard output) with `settings`;
    /// ``validate(channels:sampleRate:)`` checks it before anything touches JACK.
    public convenience init(path: String, settings: Settings) {
        self.init(name: .exact(path), settings: settings)
    }

    /// Describes a recording to `path` (`-` for standard output) with the default
    /// ``Settings`` but these; the container is the path's (by its extension, else WAV)
    /// unless given.
    ///
    /// - Parameter overwrite: Replace an existing file instead of refusing it.
    public convenience init(
        path: String, container: AudioContainer? = nil, sampleFormat: SampleFormat = .float32,
        split: SplitLimit? = nil, overwrite: Bool = false
    ) {
        self.init(
            path: path,
            settings: Settings(
                container: container ?? AudioContainer(path: path) ?? .wav, sampleFormat: sampleFormat, split: split,
                overwrite: overwrite))
    }

    /// Seconds of audio between `fdatasync` calls (``Settings/syncSeconds``).
    public var syncSeconds: Double? { settings.syncSeconds }
    /// The free-space reserve on the take's disk (``Settings/minimumFreeBytes``).
    public var minimumFreeBytes: Int? { settings.minimumFreeBytes }
    /// Encoder quality for lossy containers (``Settings/quality``).
    public var quality: Double? { settings.quality }
    /// One mono file per input (``Settings/channelFiles``).
    public var channelFiles: Bool { settings.channelFiles }
    /// The names of the files with ``channelFiles`` (``Settings/channelPlan``).
    public var channelPlan: ChannelFilePlan? { settings.channelPlan }
    /// How long the first segment waits for ``channelPlan`` (the ring holds the audio meanwhile).
    public static let channelPlanWait = 5.0
    /// Whether WAV and RF64 files carry a Broadcast Wave `bext` chunk (``Settings/broadcastWave``).
    public var broadcastWave: Bool { settings.broadcastWave }
    /// Whether a JSON sidecar is written beside each segment (``Settings/sidecar``).
    public var sidecar: Bool { settings.sidecar }
    /// Whether duration splits fall on wall-clock multiples (``Settings/alignSplits``).
    public var alignSplits: Bool { settings.alignSplits }
    /// What starts and stops takes; nil records everything (``Settings/trigger``).
    public var trigger: TakeTrigger? { settings.trigger }
    /// Seconds of audio a triggered take starts with (``Settings/preRollSeconds``).
    public var preRollSeconds: Double { settings.preRollSeconds }
    /// Removes the recorder's own old segments (``Settings/retention``).
    public var retention: SegmentRetention? { settings.retention }
    private var describeInputs: (@Sendable () -> [RecorderInput])? { settings.describeInputs }
    private var onFileEvent: (@Sendable (RecorderFileEvent) -> Void)? { settings.onFileEvent }

    /// Describes a recording named by `name` (an exact path, or a template or automatic name
    /// that ``TakeFiles`` fills in) whose takes `settings` shape.
    public init(name: TakeFiles.TakeName, settings: Settings = Settings()) {
        var settings = settings
        // Retention reads names in the zone they are written in.
        settings.retention = settings.retention.map {
            SegmentRetention(template: $0.template, keepSeconds: $0.keepSeconds, timeZone: settings.timeZone)
        }
        self.settings = settings
        // Split segments and triggered takes are numbered from the first.
        self.takeFiles = TakeFiles(
            name: name, numbersEveryFile: settings.numbersEveryFile, overwrite: settings.overwrite, timeZone: settings.timeZone)
    }

    deinit {
        closeSegment()
        zeros?.deallocate()
    }

    /// Checks the container/sample-format pair, that the directory takes a new file, and that
    /// no existing take would be overwritten.
    /// - Parameter channels: The take's inputs; with ``channelFiles`` each file holds one of them,
    ///   so a container's channel limit (FLAC's 8, MP3's 2) applies to one.
    public func validate(channels: Int = 2, sampleRate: Int = 48000) throws(RecorderError) {
        let perFile = channelFiles ? 1 : channels
        if let refusal = container.refusal(for: sampleFormat, channels: perFile, sampleRate: sampleRate) { throw refusal }
        guard channelFiles else { return try takeFiles.validate() }
        // The channel files' names are checked exactly as they will be written; until they are
        // decided (they depend on what the inputs connect to), only the directory is.
        let known = channelPlan?.decided ?? channelPlan?.given
        try takeFiles.validate(channelNames: known, directoryOnly: known == nil)
    }

    /// Checks the decided channel-file names against existing files, before any is created.
    public func validateChannelFiles(_ names: [String]) throws(RecorderError) {
        try takeFiles.validate(channelNames: names)
    }

    /// Checks the format against the container.
    ///
    /// Before the first file, this also checks the destination (``validate(channels:sampleRate:)``);
    /// on a later format change the take's own files exist, and only the format is checked.
    public func prepare(format: StreamFormat) throws {
        let fileChannels = channelFiles ? 1 : format.channelCount
        if files.isEmpty {
            try validate(channels: format.channelCount, sampleRate: Int(format.sampleRate))
        } else if let refusal = container.refusal(for: sampleFormat, channels: fileChannels, sampleRate: Int(format.sampleRate)) {
            throw refusal
        }
        self.format = format
        timeline = nil
        writer = TakeWriter(
            settings: TakeWriter.Settings(
                container: container, encoding: encoding, subtype: container.subtype(for: sampleFormat) ?? 0,
                sampleFormat: sampleFormat, quality: quality, syncSeconds: syncSeconds))
        segmentLoudness =
            settings.sidecar ? settings.loudness.map { SegmentLoudness(programmes: $0, format: format, encoding: encoding) } : nil
        if let trigger {
            gate = TriggerGate(trigger: trigger, sampleRate: format.sampleRate, shape: settings.levelShape)
            // With --min-take, a take is opened that long after its first loud frame: the buffer
            // holds that too, so the take still starts at that frame less the pre-roll.
            let minimum = Self.isLevel(trigger) ? settings.levelShape.minTakeSeconds : 0
            preRoll = PreRollBuffer(
                capacityFrames: Int(((preRollSeconds + minimum) * format.sampleRate).rounded()),
                bytesPerFrame: format.channelCount * encoding.bytesPerSample)
        }
    }

    private static func isLevel(_ trigger: TakeTrigger) -> Bool {
        if case .level = trigger { return true }
        return false
    }

    /// The encoding libsndfile is fed: interleaved, 24-bit left-justified in 32-bit words.
    public var encoding: AudioEncoding {
        AudioEncoding(sampleFormat: sampleFormat == .fixed8_24 ? .int32 : sampleFormat, interleaved: true, int24InInt32: true)
    }

    /// Starts a take at the cycle being captured now when ``trigger`` is ``TakeTrigger/request``
    /// (SIGUSR1 on the command line), however far behind real time the writer runs. With an
    /// automatic trigger (level, transport, freewheel) the take opens too, and the trigger may not
    /// close it until ``requestTakeStop()``: the last explicit command wins until the next take.
    /// Any thread.
    ///
    /// - Parameter frame: The JACK frame time to start at, for a request that carries its own
    ///   (a MIDI event's): the take then starts at that frame, or where the writer is if it has
    ///   already passed it (a note says how late).
    public func requestTakeStart(atFrame frame: UInt32? = nil) { gate?.requestStart(at: Self.requestStamp(), frame: frame) }
    /// Stops the running take at the cycle being captured now when ``trigger`` is
    /// ``TakeTrigger/request`` (SIGUSR2 on the command line). With an automatic trigger the take
    /// closes too, and the trigger opens the next one only after it has let go. Any thread.
    ///
    /// - Parameter frame: The JACK frame time to stop at (the take's last frame is the one
    ///   before it), as for ``requestTakeStart(atFrame:)``.
    public func requestTakeStop(atFrame frame: UInt32? = nil) { gate?.requestStop(at: Self.requestStamp(), frame: frame) }
    /// Ends the current file at the cycle being captured now and goes on in the next numbered
    /// one (`take.wav`, then `take-0002.wav`; a dated name gets a new date), without losing or
    /// repeating a frame; nothing happens while no file is open. Standard output does not rotate.
    /// Any thread.
    public func requestRotate() {
        rotateStamp.store(Self.requestStamp(), ordering: .relaxed)
        rotateRequests.add(1, ordering: .releasing)
    }
    /// Files ended by ``requestRotate()`` so far.
    public var rotations: Int { rotationCount.load(ordering: .relaxed) }
    /// Places a marker at the first frame of the cycle being captured now, in the segment that
    /// holds that frame (see ``TakeMarker``); `label` nil or empty names it `marker N`. A marker
    /// whose frame falls outside any take (a triggered recorder between takes) is not placed,
    /// and a note says so. Any thread.
    ///
    /// - Parameter frame: The JACK frame time to place it at, for a request that carries its own
    ///   (a MIDI event's); where the writer is if it has already passed that frame.
    public func requestMarker(label: String?, source: String, atFrame frame: UInt32? = nil) {
        markerRequests.add(label: label ?? "", source: source, frame: frame)
    }

    /// JACK's microsecond clock now, which the blocks' cycle times use, so a request acts at the
    /// cycle captured when it came, however far behind the writer runs (blocks without a cycle
    /// time, from a test or a file, act on it at once).
    private static func requestStamp() -> UInt64 { CycleClock.microseconds }

    /// Converts and writes a block (used when the recorder is added to a host on its own).
    public func consume(_ block: AudioBlock) {
        ownEncoder.encode(block.buffers, as: encoding) { bytes in
            consume(
                EncodedBlock(
                    bytes: bytes, frameCount: block.frameCount, channelCount: block.channelCount,
                    encoding: encoding, timestamp: block.timestamp,
                    droppedFramesBefore: block.droppedFramesBefore))
        }
    }

    /// Writes an already converted block (and silence for frames dropped before it).
    public func consume(_ block: EncodedBlock) {
        guard failure == nil, let format else {
            lostToErrors.add(block.frameCount + block.droppedFramesBefore, ordering: .relaxed)
            return
        }
        if timeline == nil {
            // jack_get_time needs libjack's clock set up by an open client; a block without a
            // cycle time (0, as from a test or a file) has none, and counts from now.
            let jackNow = block.timestamp.microseconds == 0 ? 0 : CycleClock.microseconds
            timeline = TakeTimeline(
                anchor: block.timestamp, sampleRate: format.sampleRate, realtimeNow: TakeTimeline.realtimeNow(), jackNow: jackNow,
                timeZone: settings.timeZone)
            nextPosition = timeline!.anchorPosition + Int64(block.droppedFramesBefore)
        }
        let dropped = block.droppedFramesBefore
        let start = timeline!.position(ofFrameTime: block.timestamp.frameTime, earliest: nextPosition + Int64(dropped))
        // Before the silence for the dropped frames is written, so a marker lands where it begins.
        if settings.markXruns { markLosses(of: block, at: start) }
        if dropped > 0 {
            ensureZeros(frames: min(dropped, 4096), bytesPerFrame: block.bytesPerFrame)
            var done = 0
            while done < dropped && failure == nil {
                let count = min(dropped - done, zeroFrames)
                feed(UnsafeRawPointer(zeros!), frames: count, at: start - Int64(dropped - done), block: block)
                done += count
            }
            silence.add(dropped, ordering: .relaxed)
            if let writer, writer.isOpen { writer.droppedFrames += dropped } else { preRoll?.noteLosses(droppedFrames: dropped, xrun: false) }
        }
        if block.timestamp.xrunSincePreviousCycle {
            if let writer, writer.isOpen { writer.xruns += 1 } else { preRoll?.noteLosses(droppedFrames: 0, xrun: true) }
        }
        rotateIfAsked(at: block)
        let span = cycleSpan(of: block)
        for request in markerRequests.take(reachedBy: span.start, cycleEnd: span.end, block: block.timestamp.frameTime, frames: block.frameCount) {
            unplacedMarkers.append((start + Int64(request.offset(inBlockAt: block.timestamp.frameTime, frames: block.frameCount)), request))
        }
        feed(block.bytes.baseAddress!, frames: block.frameCount, at: start, block: block)
        nextPosition = start + Int64(block.frameCount)
        noteMarkersOutsideTakes(before: nextPosition)
    }

    /// `--mark-xruns`: a marker where the block's dropped frames begin, and one at the block when
    /// the server reported an xrun before it; only while a take is open (losses between takes are
    /// counted, not marked). Placed as requested markers are, at their own frame.
    private func markLosses(of block: EncodedBlock, at start: Int64) {
        guard gate?.recording ?? true else { return }
        let dropped = block.droppedFramesBefore
        if dropped > 0 {
            unplacedMarkers.append((start - Int64(dropped), .init(label: "dropped \(dropped) frames", source: "xrun", stamp: 0)))
        }
        if block.timestamp.xrunSincePreviousCycle && dropped == 0 {
            unplacedMarkers.append((start, .init(label: "xrun", source: "xrun", stamp: 0)))
        }
    }

    /// Closes the files, which writes their final headers.
    public func finish() { closeSegment() }

    /// On server loss, finalises the current file: the next block starts a new segment,
    /// `NAME-0002.ext`, and so on, placed in time afresh. Called with no block in flight.
    public func handle(_ event: AudioSessionEvent) {
        guard event == .serverLost else { return }
        closeSegment()
        // Their positions are on the lost session's timeline; the next one starts afresh.
        noteMarkersOutsideTakes(before: .max)
        timeline = nil
        preRoll?.clear()
        gate?.setRecording(false)
        takeOpen.store(false, ordering: .relaxed)
    }

    // MARK: Takes and segments (worker thread)

    /// Routes `frames` frames that start at `position` to the open take, or to the pre-roll
    /// while no triggered take runs, starting and stopping takes where the trigger says.
    private func feed(_ bytes: UnsafeRawPointer, frames: Int, at position: Int64, block: EncodedBlock) {
        guard let gate else {
            writeLive(bytes, frames: frames, at: position)
            return
        }
        var offset = 0
        while offset < frames && failure == nil {
            let late = gate.lateRequests
            let change = gate.nextChange(
                from: offset, frames: frames, transportRolling: block.timestamp.transportRolling,
                freewheeling: block.timestamp.freewheeling, time: blockTime(of: block),
                peak: { Self.peak(bytes, frame: $0, channels: block.channelCount, encoding: block.encoding) })
            if gate.lateRequests != late {
                note(
                    "a \(gate.recording ? "stop" : "start") asked for at its own frame came \(gate.lastLateness) frame(s) after the writer had passed it; it acted there"
                )
            }
            let end = change ?? frames
            if end > offset {
                let run = bytes + offset * block.bytesPerFrame
                if gate.recording {
                    writeLive(run, frames: end - offset, at: position + Int64(offset))
                } else {
                    preRoll?.append(run, frames: end - offset)
                }
            }
            offset = end
            guard change != nil else { break }
            if gate.recording {
                closeSegment()
                gate.setRecording(false)
            } else {
                startTake(at: position + Int64(offset))
                gate.setRecording(true)
            }
            takeOpen.store(gate.recording, ordering: .relaxed)
        }
    }

    /// Opens a triggered take whose live part starts at `position`, and writes its pre-roll first.
    private func startTake(at position: Int64) {
        takes.add(1, ordering: .relaxed)
        segmentLoudness?.startTake()
        guard let preRoll, preRoll.frameCount > 0 else { return }
        var cursor = position - Int64(preRoll.frameCount)
        let dropped = preRoll.droppedFrames
        let xruns = preRoll.xruns
        preRoll.drain { bytes, count in
            writeLive(bytes, frames: count, at: cursor)
            cursor += Int64(count)
        }
        if let writer, writer.isOpen {
            writer.droppedFrames += dropped
            writer.xruns += xruns
        }
    }

    /// Writes frames of the take, opening and splitting segments as needed.
    private func writeLive(_ bytes: UnsafeRawPointer, frames: Int, at position: Int64) {
        guard let writer, let format else { return }
        var done = 0
        while done < frames && failure == nil {
            if !writer.isOpen {
                openSegment(at: position + Int64(done), format: format)
                guard writer.isOpen else {
                    lostToErrors.add(frames - done, ordering: .relaxed)
                    return
                }
            }
            let room = framesUntilSplit(writer: writer, format: format)
            if room <= 0 {
                rotate()
                continue
            }
            let count = min(frames - done, room)
            placeMarkers(before: writePosition + Int64(count), in: writer)
            let result = writer.write(bytes + done * encoding.bytesPerSample * format.channelCount, frames: count)
            segmentLoudness?.add(bytes + done * encoding.bytesPerSample * format.channelCount, frames: result.written)
            written.add(result.written, ordering: .relaxed)
            writePosition += Int64(result.written)
            if let reason = result.failure {
                lostToErrors.add(frames - done - result.written, ordering: .relaxed)
                fail(.writeFailed(path: writer.paths.first ?? path, reason: reason))
                return
            }
            done += count
            if writer.headerJustUpdated { checkReserve(writer: writer) }
            if count == room && split != nil { rotate() }
        }
    }

    /// Frames the open segment takes before its split.
    private func framesUntilSplit(writer: TakeWriter, format: StreamFormat) -> Int {
        guard let split else { return .max }
        switch split {
        case .seconds(let seconds):
            if alignSplits { return Int(clamping: segmentEnd - writePosition) }
            return max(1, Int(seconds * format.sampleRate)) - writer.frames
        case .bytes(let bytes):
            let perFile = channelFiles ? 1 : format.channelCount
            return max(1, bytes / (perFile * max(sampleFormat.bytesPerSample, 2))) - writer.frames
        }
    }

    /// When `block`'s cycle started and ended on the cycle clock (µs; 0 to 0 for a block without
    /// a cycle time).
    /// The block's cycle span and frame time, as the trigger gate takes them.
    private func blockTime(of block: EncodedBlock) -> TriggerGate.BlockTime {
        let span = cycleSpan(of: block)
        return TriggerGate.BlockTime(cycleStart: span.start, cycleEnd: span.end, frameTime: block.timestamp.frameTime)
    }

    private func cycleSpan(of block: EncodedBlock) -> (start: UInt64, end: UInt64) {
        let start = block.timestamp.microseconds
        guard start != 0, let format else { return (start, start) }
        return (start, start + UInt64((Double(block.frameCount) / max(format.sampleRate, 1) * 1e6).rounded(.up)))
    }

    /// Ends the open file before `block` when a rotate request was stamped before the block's
    /// cycle ended (a block without a cycle time reaches every request).
    private func rotateIfAsked(at block: EncodedBlock) {
        let requests = rotateRequests.load(ordering: .acquiring)
        if requests != seenRotateRequests {
            seenRotateRequests = requests
            pendingRotate = rotateStamp.load(ordering: .relaxed)
        }
        guard let stamp = pendingRotate else { return }
        let span = cycleSpan(of: block)
        guard MarkerRequests.reached(stamp, cycleStart: span.start, cycleEnd: span.end) else { return }
        pendingRotate = nil
        guard !takeFiles.isStandardOutput, let writer, writer.isOpen else { return }
        rotate()
        rotationCount.add(1, ordering: .relaxed)
    }

    /// Places the markers whose frame the open segment is about to write (from ``writePosition``
    /// up to `end`): in its files' cue chunks where the container has one, and in its sidecar.
    private func placeMarkers(before end: Int64, in writer: TakeWriter) {
        guard unplacedMarkers.contains(where: { $0.position < end }), let timeline else { return }
        let due = unplacedMarkers.filter { $0.position < end }
        unplacedMarkers.removeAll { $0.position < end }
        for (position, request) in due {
            let frame = writer.frames + Int(max(0, position - writePosition))
            let inFile = writer.carriesMarkers && frame <= Int(UInt32.max)
            let marker = lock.withLock { _ in
                let marker = TakeMarker(
                    label: request.label.isEmpty ? "marker \(placedMarkers.count + 1)" : request.label, source: request.source,
                    file: writer.paths.first ?? path, frame: frame, unixTime: timeline.wallClock(at: position), inFile: inFile,
                    inSidecar: sidecarState != nil)
                placedMarkers.append(marker)
                return marker
            }
            if inFile { writer.addMarker(CueChunks.Point(frame: UInt32(frame), label: marker.label)) }
            sidecarState?.sidecar.markers.append(TakeSidecar.Marker(marker))
        }
        if let (sidecarPath, state) = sidecarState, let reason = state.write(to: sidecarPath) {
            note("cannot write the sidecar \(sidecarPath): \(reason)")
        }
    }

    /// Says which markers could not be placed because no take was open at their frame (a
    /// triggered recorder between takes, or a file that failed).
    private func noteMarkersOutsideTakes(before end: Int64) {
        guard unplacedMarkers.contains(where: { $0.position < end }) else { return }
        for (position, request) in unplacedMarkers where position < end {
            let name = request.label.isEmpty ? "a marker" : "marker \"\(request.label)\""
            note("\(name) from \(request.source) not placed: no take was open at its frame")
        }
        unplacedMarkers.removeAll { $0.position < end }
    }

    private func rotate() {
        let closed = writer?.paths ?? []
        closeSegment()
        rotatedFrom = closed
    }

    private func openSegment(at position: Int64, format: StreamFormat) {
        guard let writer, let timeline else { return }
        let wallClock = timeline.wallClock(at: position)
        var names: [String]?
        if channelFiles {
            switch channelPlan?.names(waitingUpTo: Self.channelPlanWait) ?? .undecided {
            case .names(let decided) where decided.count == format.channelCount: names = decided
            case .refused:
                fail(.invalidTemplate(template: path, reason: "its channel files' names were refused before the run"))
                return
            default: names = (0..<format.channelCount).map { "in_\($0 + 1)" }
            }
        }
        let created: [(path: String, descriptor: Int32)]
        let basePath: String
        if takeFiles.isStandardOutput {
            created = [("-", STDOUT_FILENO)]
            basePath = "-"
        } else {
            do {
                let segment = try takeFiles.createNext(now: time_t(wallClock.rounded(.down)), channelNames: names)
                created = segment.files.map { ($0.path, $0.descriptor) }
                basePath = segment.basePath
            } catch {
                fail(error)
                return
            }
        }
        let timeReference = timeline.bextTimeReference(at: position)
        var broadcast: [BroadcastWave]?
        if broadcastWave && BroadcastWave.isSupported(by: container) && basePath != "-" {
            let history = BroadcastWave.codingHistory(
                sampleFormat: sampleFormat, sampleRate: Int(format.sampleRate), channels: created.count == 1 ? format.channelCount : 1)
            broadcast = created.indices.map { index in
                let what = names.map { "input \(index + 1) (\($0[index]))" } ?? "\(format.channelCount) inputs"
                return BroadcastWave(
                    description: "jackhost take: \(what)", wallClock: wallClock, timeReference: timeReference,
                    codingHistory: history)
            }
        }
        do {
            try writer.open(created, format: format, broadcast: broadcast)
        } catch {
            fail(error)
            return
        }
        writePosition = position
        if alignSplits, case .seconds(let seconds) = split {
            let period = Int64((seconds * format.sampleRate).rounded())
            segmentEnd = timeline.nextBoundary(atOrAfter: position + 1, splitFrames: period)
        } else {
            segmentEnd = .max
        }
        let paths = created.map(\.path)
        lock.withLock { _ in createdFiles += paths }
        let removed = sweepOldSegments(protecting: paths, segmentTime: time_t(wallClock.rounded(.down)))
        segmentLoudness?.startSegment()
        if sidecar && basePath != "-" {
            let sidecarPath = TakeSidecar.path(forSegment: basePath)
            let state = TakeSidecar(
                files: paths, container: container.rawValue, sampleFormat: sampleFormat.name,
                sampleRate: format.sampleRate, channels: format.channelCount,
                firstSample: TakeSidecar.FirstSample(
                    wallClock: TakeSidecar.iso8601(wallClock), unixTime: wallClock,
                    jackFrameTime: timeline.frameTime(at: position), timeReference: timeReference),
                frames: 0, complete: false, losses: TakeSidecar.Losses(xruns: 0, droppedFrames: 0),
                inputs: describeInputs?() ?? [], removedByRetention: retention == nil ? nil : removed)
            sidecarState = (sidecarPath, state)
            if let reason = state.write(to: sidecarPath) { note("cannot write the sidecar \(sidecarPath): \(reason)") }
        }
        for path in paths { onFileEvent?(.opened(path: path)) }
        for (closed, opened) in zip(rotatedFrom, paths) { onFileEvent?(.rotated(closed: closed, opened: opened)) }
        rotatedFrom = []
    }

    /// `--keep`: removes this template's old segments that their marks prove jackhost wrote, and
    /// the empty date folders it made, each reported with one line, and returns the files.
    ///
    /// Age is judged from the later of the system clock and `segmentTime`, the first sample of the
    /// segment that opens: in real time that is the system clock, exactly as before; a render in
    /// freewheel runs the log's own clock ahead of it, and its segments are judged on that clock,
    /// the one that named them.
    private func sweepOldSegments(protecting paths: [String], segmentTime: time_t) -> [String] {
        guard let retention else { return [] }
        let swept = retention.sweep(now: max(time(nil), segmentTime), protecting: Set(paths))
        for failure in swept.failures { note("--keep could not remove \(failure.path): \(failure.reason)") }
        removedCount.add(swept.removed.count, ordering: .relaxed)
        lock.withLock { _ in
            pendingRemovals += swept.removed.map {
                "--keep removed \($0): older than \(SegmentRetention.describe(seconds: retention.keepSeconds)), and its mark proves jackhost wrote it"
            }
            pendingRemovals += swept.removedDirectories.map {
                "--keep removed the folder \($0): empty, and its mark proves jackhost made it"
            }
        }
        return swept.removed
    }

    /// Marks the files of a finalised segment (and its sidecar) as jackhost's own, so that a later
    /// `--keep` may remove them (see ``TakeMark``). A mark that cannot be set is a note only
    /// when retention is on: without marks, retention keeps the file.
    private func markFinalised(_ paths: [String]) {
        guard let template = takeFiles.name.retentionTemplate, !takeFiles.isStandardOutput else { return }
        for path in paths {
            if let reason = TakeMark.write(path: path, template: template, timeZone: settings.timeZone), retention != nil {
                note("cannot mark \(path) as jackhost's own (\(reason)); --keep will never remove it")
            }
        }
    }

    /// Ends the take cleanly when the disk's free space has fallen below the reserve: the file
    /// is closed (valid), and what arrives later is counted as lost to the failure.
    private func checkReserve(writer: TakeWriter) {
        guard let minimumFreeBytes, let current = writer.paths.first, current != "-",
            let free = DiskSpace.freeBytes(atPath: current), free < minimumFreeBytes
        else { return }
        fail(.reserveReached(path: current, minimumFreeBytes: minimumFreeBytes))
    }

    /// Finalises the open segment (every file of it) and its sidecar, and reports them closed.
    private func closeSegment() {
        guard let writer, writer.isOpen else { return }
        let segmentFile = writer.paths.first
        let summaries = writer.close()
        if !writer.markerProblems.isEmpty {
            for problem in writer.markerProblems { note("the markers are in the sidecar only, not in \(problem)") }
            lock.withLock { _ in
                for index in placedMarkers.indices where placedMarkers[index].file == segmentFile { placedMarkers[index].inFile = false }
            }
        }
        var finalised = summaries.map(\.path)
        if let (sidecarPath, state) = sidecarState {
            var complete = state
            complete.frames = summaries.first?.frames ?? 0
            complete.complete = true
            complete.losses = TakeSidecar.Losses(xruns: writer.xruns, droppedFrames: writer.droppedFrames)
            complete.loudness = segmentLoudness.map { TakeSidecar.Loudness($0.values()) }
            if !writer.markerProblems.isEmpty {
                for index in complete.markers.indices { complete.markers[index].inFile = false }
            }
            if let reason = complete.write(to: sidecarPath) {
                note("cannot write the sidecar \(sidecarPath): \(reason)")
            } else {
                finalised.append(sidecarPath)
            }
            sidecarState = nil
        }
        markFinalised(finalised)
        for summary in summaries { onFileEvent?(.closed(summary)) }
    }

    private func ensureZeros(frames: Int, bytesPerFrame: Int) {
        guard frames * bytesPerFrame > zeroFrames * bytesPerFrame || zeros == nil else { return }
        zeros?.deallocate()
        let count = max(4096, frames) * bytesPerFrame
        zeros = .allocate(byteCount: count, alignment: 16)
        zeros!.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        zeroFrames = max(4096, frames)
    }

    /// The largest magnitude over all channels of one interleaved frame, as a fraction of full scale.
    private static func peak(_ bytes: UnsafeRawPointer, frame: Int, channels: Int, encoding: AudioEncoding) -> Float {
        var peak: Float = 0
        let base = frame * channels
        switch encoding.sampleFormat {
        case .float32:
            let samples = bytes.assumingMemoryBound(to: Float.self)
            for channel in 0..<channels { peak = max(peak, abs(samples[base + channel])) }
        case .int16:
            let samples = bytes.assumingMemoryBound(to: Int16.self)
            for channel in 0..<channels { peak = max(peak, abs(Float(samples[base + channel])) / 32768) }
        default:
            let samples = bytes.assumingMemoryBound(to: Int32.self)
            for channel in 0..<channels { peak = max(peak, abs(Float(samples[base + channel])) / 2_147_483_648) }
        }
        return peak
    }

    /// `take.wav`, 3 → `take-0003.wav`: four digits sort correctly up to 9999 parts.
    public static func numberedPath(_ path: String, index: Int) -> String {
        TakeFiles.numberedPath(path, index: index)
    }

    /// libsndfile's error in jackhost's words: its system errors read
    /// "System error : No space left on device.;", so the errno text is used when there is one.
    static func libsndfileReason(_ file: OpaquePointer?, errno code: Int32 = 0) -> String {
        if code != 0 { return TakeFiles.reason(code) }
        var text = String(cString: sf_strerror(file))
        for prefix in ["System error : ", "Error : "] where text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
        while let last = text.last, last == "." || last == ";" || last == " " || last == "\n" { text.removeLast() }
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    private func note(_ text: String) {
        lock.withLock { _ in pendingNotes.append(text) }
    }

    private func fail(_ error: RecorderError) {
        lock.withLock { _ in if failureStorage == nil { failureStorage = error } }
        closeSegment()
    }
}
