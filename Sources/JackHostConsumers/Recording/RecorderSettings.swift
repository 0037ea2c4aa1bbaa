extension Recorder {
    /// Everything about a recording's takes, given once to ``Recorder/init(name:settings:)``:
    /// the files' format, how they split, number and name, what starts a take, what is kept,
    /// and who hears about the files. None of it changes after the recorder is made.
    ///
    /// The defaults record one WAV file of 32-bit float samples, synced every 2 seconds, with a
    /// Broadcast Wave `bext` chunk, and no split, trigger, sidecar or retention.
    ///
    /// ```swift
    /// let recorder = Recorder(
    ///     path: "take.flac",
    ///     settings: Recorder.Settings(container: .flac, sampleFormat: .int24, split: .seconds(3600)))
    /// ```
    public struct Settings: Sendable {
        /// The container (`wav`, `flac`, …).
        public var container: AudioContainer
        /// The sample format on disk.
        public var sampleFormat: SampleFormat
        /// When to start a new file, if ever. Split segments (and triggered takes) are numbered
        /// from the first: `take-0001.wav`, `take-0002.wav`, ….
        public var split: SplitLimit?
        /// With a duration ``split``, start each file on a wall-clock multiple of the duration
        /// (14:00:00, 15:00:00 for `1h`), counted from midnight in ``timeZone`` (`--align`).
        public var alignSplits: Bool
        /// The clock names and aligned splits are read on (`--utc` for ``TakeTimeZone/utc``): a
        /// template's fields and an automatic name's time stamp are expanded in it, ``alignSplits``
        /// counts from its midnight, and ``retention`` reads names back in it (the recorder gives
        /// its retention this zone, whatever it was made with). The `bext` chunk's date, time and
        /// time reference stay local, and the sidecar's time keeps its local offset (see
        /// ``TakeTimeZone``).
        public var timeZone: TakeTimeZone
        /// Replace an existing file instead of refusing it (`--overwrite`).
        public var overwrite: Bool
        /// One mono file per input (`take_in_1.wav`, `take_in_2.wav`, …) instead of one file with
        /// every channel (`--channel-files`).
        public var channelFiles: Bool
        /// The names of the files with ``channelFiles``, decided once before the first file; nil
        /// (or a plan not decided within ``Recorder/channelPlanWait``) names them `in_1`, `in_2`, ….
        public var channelPlan: ChannelFilePlan?
        /// Write a Broadcast Wave `bext` chunk into WAV and RF64 files (on by default).
        public var broadcastWave: Bool
        /// Write a JSON sidecar beside each segment (`--sidecar`; see the README).
        public var sidecar: Bool
        /// What starts and stops takes; nil records everything (the default).
        public var trigger: TakeTrigger?
        /// Turn every xrun and every run of dropped frames in an open take into a marker
        /// (`xrun`, `dropped N frames`, source `xrun`) at the frame where it happened, as Ardour's
        /// xrun markers are (`--mark-xruns`).
        public var markXruns = false
        /// Seconds of audio from before each trigger that a triggered take starts with.
        public var preRollSeconds: Double
        /// A level trigger's release level and take lengths (`--release`, `--min-take`, `--max-take`).
        public var levelShape = LevelShape()
        /// With a ``sidecar``: the loudness each sidecar carries, of its segment and of the take so
        /// far, for these programmes (each input when empty); nil for none (`--loudness`).
        public var loudness: [LoudnessProgramme]?
        /// Removes the recorder's own old segments, and the empty date folders it made, after
        /// each new one opens (`--keep`); it reads names in ``timeZone``.
        public var retention: SegmentRetention?
        /// Seconds of audio between `fdatasync` calls (data and header reach stable storage); nil
        /// leaves it to the kernel. After a power cut, at most this much of what was written is
        /// lost, plus what still waited in memory (the elastic buffer).
        public var syncSeconds: Double?
        /// Stop the take cleanly (a valid file) before the disk's free space falls below this.
        public var minimumFreeBytes: Int?
        /// Encoder quality for lossy containers, 0 (smallest) to 1 (best); nil keeps libsndfile's default.
        public var quality: Double?
        /// Describes the inputs for the sidecar (ports, pretty-names, connections); called on the
        /// writer thread when a segment opens.
        public var describeInputs: (@Sendable () -> [RecorderInput])?
        /// Receives each file's events on the writer thread (see ``RecorderFileEvent``); it must
        /// return quickly (hand real work to another thread).
        public var onFileEvent: (@Sendable (RecorderFileEvent) -> Void)?

        /// Settings with every value given or left at its default (see ``Settings``).
        public init(
            container: AudioContainer = .wav, sampleFormat: SampleFormat = .float32, split: SplitLimit? = nil,
            alignSplits: Bool = false, timeZone: TakeTimeZone = .local, overwrite: Bool = false, channelFiles: Bool = false,
            channelPlan: ChannelFilePlan? = nil, broadcastWave: Bool = true, sidecar: Bool = false,
            trigger: TakeTrigger? = nil, preRollSeconds: Double = 0, retention: SegmentRetention? = nil,
            syncSeconds: Double? = 2, minimumFreeBytes: Int? = nil, quality: Double? = nil,
            describeInputs: (@Sendable () -> [RecorderInput])? = nil,
            onFileEvent: (@Sendable (RecorderFileEvent) -> Void)? = nil
        ) {
            self.container = container
            self.sampleFormat = sampleFormat
            self.split = split
            self.alignSplits = alignSplits
            self.timeZone = timeZone
            self.overwrite = overwrite
            self.channelFiles = channelFiles
            self.channelPlan = channelPlan
            self.broadcastWave = broadcastWave
            self.sidecar = sidecar
            self.trigger = trigger
            self.preRollSeconds = preRollSeconds
            self.retention = retention
            self.syncSeconds = syncSeconds
            self.minimumFreeBytes = minimumFreeBytes
            self.quality = quality
            self.describeInputs = describeInputs
            self.onFileEvent = onFileEvent
        }

        /// Whether every file is numbered from `-0001`: split segments and triggered takes are.
        var numbersEveryFile: Bool { split != nil || trigger != nil }
    }
}
