/// Something that receives captured audio. Adopt ``RealtimeAudioConsumer`` or
/// ``DeferredAudioConsumer``, not this protocol directly.
///
/// The host calls ``prepare(format:)`` once before the first block, then
/// delivers blocks, then calls ``finish()`` once after the last block. Between
/// these calls the host guarantees happens-before ordering, so a consumer's own
/// state needs no locks as long as only the host calls it.
public protocol AudioConsumer: AnyObject {
    /// A short name for logs, meters and error messages.
    var consumerName: String { get }

    /// Called once, before the first block, on the thread that starts the host.
    /// Allocate everything the consumer needs here. Throw to refuse the format;
    /// the host then does not start.
    func prepare(format: StreamFormat) throws

    /// Called once, after the last block, on the thread that stops the host.
    func finish()

    /// Called on the host's monitor thread (never the real-time thread) when the session
    /// changes: xruns, buffer-size changes, server loss and return. `serverLost` arrives
    /// while no block is in flight; other events may arrive while a deferred consumer is
    /// in `consume`, so act on them through atomics. The default does nothing.
    func handle(_ event: AudioSessionEvent)
}

extension AudioConsumer {
    /// The type's name.
    public var consumerName: String { String(describing: type(of: self)) }
    /// Ignores the event.
    public func handle(_ event: AudioSessionEvent) {}
}

/// A consumer called **inside JACK's process callback**, with a zero-copy view of the port buffers.
///
/// Meant for meters and cheap analysis. ``process(_:)`` runs on the real-time
/// thread, with a deadline of one period (5.3 ms at 256 frames and 48 kHz), so
/// it must be real-time safe. Inside it, do **not**:
/// - allocate: no array, string or class creation, no appending to growing arrays,
///   no closures that escape, no boxing values into `any` existentials;
/// - lock: no `Mutex`, `NSLock`, `DispatchQueue.sync`, `print`, or lazily
///   initialised globals and `static let`s (their first access takes a lock);
/// - make system calls: no file or socket I/O, no `usleep`, no `CommandLine.arguments`.
///
/// Allocate in ``AudioConsumer/prepare(format:)``, and call your processing code once
/// there too: the first use of a generic type (SIMD masks, for example) instantiates its
/// metadata under a runtime lock. Publish results through the
/// `Synchronization` module's `Atomic` types. The view is valid only during the
/// call; never keep it or write into it. Builds linked with RealtimeSanitizer
/// report any violation (see docs/REALTIME.md).
public protocol RealtimeAudioConsumer: AudioConsumer {
    /// **Real-time thread.** Receives one cycle of audio; see the type's rules.
    func process(_ block: AudioBlock)
}

/// A consumer called on its own worker thread with blocks copied from the
/// real-time thread, like an `AVAudioEngine` tap.
///
/// The host copies each cycle into a lock-free ring that belongs to this
/// consumer; a worker thread drains it and calls ``consume(_:)``. The worker
/// may allocate, lock and do I/O. If the consumer falls behind and its ring is
/// full, the real-time thread never waits: the cycle's frames are dropped for
/// this consumer only, counted, and reported in the next block's
/// ``AudioBlock/droppedFramesBefore``.
public protocol DeferredAudioConsumer: AudioConsumer {
    /// **Worker thread.** Receives one block; the view is valid only during the call.
    func consume(_ block: AudioBlock)
}

/// A change in the session that consumers may want to know about, the analog of
/// `AVAudioSession`'s interruption and route-change notifications.
public enum AudioSessionEvent: Sendable, Equatable {
    /// The server reported xruns; `total` counts all since the host started.
    case xrun(total: Int)
    /// The period changed to `frames` frames.
    case bufferSizeChanged(frames: Int)
    /// The server's sample rate changed.
    case sampleRateChanged(Double)
    /// The server went away; no more blocks arrive until it returns. Delivered after
    /// every block captured before the loss was consumed.
    case serverLost
    /// The host reconnected to a server after a loss; blocks flow again.
    case serverRestored
    /// The number of inputs changed (automatic channel mode after a reconnect); consumers
    /// were finished and prepared again with the new format before this event.
    case routeChanged(channelCount: Int)
    /// The server started (`true`) or stopped (`false`) freewheeling: cycles run as fast as
    /// the graph allows, with no deadline (an offline render), instead of at the device's pace.
    case freewheelChanged(Bool)
    /// The source connected to the input port `input` (full names) went away while the server
    /// kept running (its client quit, or an AES67 stream stopped); the input records silence
    /// and the host waits for the source to return.
    case sourceLost(input: String, source: String)
    /// That source is back and connected again, after `absentFrames` frames without it.
    case sourceReturned(input: String, source: String, absentFrames: Int)
}
