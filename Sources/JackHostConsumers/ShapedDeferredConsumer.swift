import CSoxr
import JackHostTypes

/// Hands a deferred consumer blocks in the ``BlockShape`` it asked for: a channel subset,
/// converted to a sample rate with libsoxr, rebuffered into blocks of a fixed size. Runs on the
/// consumer's worker thread, so it may allocate and take its time; the real-time side is the
/// same as for any deferred consumer.
///
/// - The wrapped consumer is prepared with the shaped format (the subset's channel count, the
///   asked rate) and gets every frame exactly once, in order; the last block of a run may be
///   shorter (as JACK's last block of a timed run is).
/// - A block's timestamp is that of the input block its first frame came from; its sequence
///   counts shaped blocks from 0; its xrun flag is set if any input block it spans had one.
/// - Frames lost before an input block (a full ring) are reported, converted to the output
///   rate, in `droppedFramesBefore` of the next shaped block.
public final class ShapedDeferredConsumer: DeferredAudioConsumer {
    /// The consumer that receives the shaped blocks.
    public let inner: any DeferredAudioConsumer
    /// The shape it asked for.
    public let shape: BlockShape

    private var selected: [Int] = []
    private var inputPointers: [UnsafePointer<Float>] = []
    private var resampler: soxr_t?
    private var ratio = 1.0
    /// Per selected channel: soxr's output, then (with a fixed size) the block being filled.
    private var resampled: [UnsafeMutablePointer<Float>] = []
    private var resampledCapacity = 0
    private var pending: [UnsafeMutablePointer<Float>] = []
    private var pendingFrames = 0
    private var pendingTimestamp: AudioTimestamp?
    private var pendingXrun = false
    private var droppedFrames = 0.0
    private var sequence: UInt64 = 0
    private var lastTimestamp = AudioTimestamp(frameTime: 0, microseconds: 0, sequence: 0, xrunSincePreviousCycle: false)

    /// Wraps `inner` so it receives blocks of `shape`.
    public init(_ inner: any DeferredAudioConsumer, shape: BlockShape) {
        self.inner = inner
        self.shape = shape
    }

    deinit { release() }

    /// The wrapped consumer's name.
    public var consumerName: String { inner.consumerName }

    /// Checks the shape against the stream, sets up the resampler and buffers, and prepares the
    /// wrapped consumer with the shaped format.
    public func prepare(format: StreamFormat) throws {
        release()
        selected = shape.channels ?? Array(0..<format.channelCount)
        if let beyond = selected.first(where: { $0 >= format.channelCount }) {
            throw BlockShapeError(
                "channel \(beyond + 1) was asked for, but the stream has \(format.channelCount) channel\(format.channelCount == 1 ? "" : "s")")
        }
        let outputRate = shape.sampleRate ?? format.sampleRate
        ratio = outputRate / format.sampleRate
        if outputRate != format.sampleRate {
            var error: soxr_error_t?
            var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            resampler = soxr_create(format.sampleRate, outputRate, UInt32(selected.count), &error, &io, &quality, nil)
            if let error {
                throw BlockShapeError("libsoxr cannot convert \(format.sampleRate) Hz to \(outputRate) Hz: \(String(cString: error))")
            }
        }
        if let frames = shape.frames {
            pending = selected.map { _ in .allocate(capacity: frames) }
        }
        pendingFrames = 0
        pendingTimestamp = nil
        pendingXrun = false
        droppedFrames = 0
        sequence = 0
        try inner.prepare(format: StreamFormat(sampleRate: outputRate, channelCount: selected.count))
    }

    /// Shapes one block and hands on every complete shaped block.
    public func consume(_ block: AudioBlock) {
        droppedFrames += Double(block.droppedFramesBefore) * ratio
        lastTimestamp = block.timestamp
        inputPointers.removeAll(keepingCapacity: true)
        for channel in selected { inputPointers.append(block.buffers.channelPointers[channel]) }
        if let resampler {
            ensureResampledCapacity(Int((Double(block.frameCount) * ratio).rounded(.up)) + 64)
            // soxr takes what fits its output and keeps the rest of its state; feed until the
            // whole input is used.
            var offset = 0
            repeat {
                var used = 0
                var produced = 0
                let input = inputPointers.map { $0 + offset }
                input.withUnsafeBufferPointer { input in
                    resampled.withUnsafeBufferPointer { output in
                        _ = soxr_process(
                            resampler, UnsafeRawPointer(input.baseAddress), block.frameCount - offset, &used,
                            UnsafeMutableRawPointer(mutating: output.baseAddress), resampledCapacity, &produced)
                    }
                }
                accept(resampled.map { UnsafePointer($0) }, frames: produced, timestamp: block.timestamp)
                offset += used
                if used == 0 && produced == 0 { break }
            } while offset < block.frameCount
        } else {
            accept(inputPointers, frames: block.frameCount, timestamp: block.timestamp)
        }
    }

    /// Drains the resampler, hands on the last (shorter) block, and finishes the wrapped consumer.
    public func finish() {
        if let resampler {
            ensureResampledCapacity(4096)
            while true {
                var produced = 0
                resampled.withUnsafeBufferPointer { output in
                    _ = soxr_process(resampler, nil, 0, nil, UnsafeMutableRawPointer(mutating: output.baseAddress), resampledCapacity, &produced)
                }
                if produced == 0 { break }
                accept(resampled.map { UnsafePointer($0) }, frames: produced, timestamp: lastTimestamp)
            }
        }
        if shape.frames != nil && pendingFrames > 0 { emit(pending.map { UnsafePointer($0) }, frames: pendingFrames) }
        inner.finish()
    }

    /// Passes events on.
    public func handle(_ event: AudioSessionEvent) { inner.handle(event) }

    // MARK: Shaping

    private func accept(_ channels: [UnsafePointer<Float>], frames: Int, timestamp: AudioTimestamp) {
        guard frames > 0 else { return }
        guard let blockFrames = shape.frames else {
            pendingTimestamp = timestamp
            pendingXrun = timestamp.xrunSincePreviousCycle
            emit(channels, frames: frames)
            return
        }
        var offset = 0
        while offset < frames {
            if pendingFrames == 0 { pendingTimestamp = timestamp }
            pendingXrun = pendingXrun || timestamp.xrunSincePreviousCycle
            let count = min(blockFrames - pendingFrames, frames - offset)
            for (index, source) in channels.enumerated() {
                (pending[index] + pendingFrames).update(from: source + offset, count: count)
            }
            pendingFrames += count
            offset += count
            if pendingFrames == blockFrames { emit(pending.map { UnsafePointer($0) }, frames: blockFrames) }
        }
    }

    private func emit(_ channels: [UnsafePointer<Float>], frames: Int) {
        let start = pendingTimestamp ?? lastTimestamp
        let timestamp = AudioTimestamp(
            frameTime: start.frameTime, microseconds: start.microseconds, sequence: sequence, xrunSincePreviousCycle: pendingXrun)
        let dropped = Int(droppedFrames.rounded())
        channels.withUnsafeBufferPointer { pointers in
            inner.consume(
                AudioBlock(
                    buffers: AudioBufferListView(channels: pointers.baseAddress!, channelCount: channels.count, frameCount: frames),
                    timestamp: timestamp, droppedFramesBefore: dropped))
        }
        sequence += 1
        droppedFrames = 0
        pendingFrames = 0
        pendingXrun = false
        pendingTimestamp = nil
    }

    private func ensureResampledCapacity(_ frames: Int) {
        guard frames > resampledCapacity || resampled.count != selected.count else { return }
        for buffer in resampled { buffer.deallocate() }
        resampledCapacity = max(frames, resampledCapacity)
        resampled = selected.map { _ in .allocate(capacity: resampledCapacity) }
    }

    private func release() {
        if let resampler { soxr_delete(resampler) }
        resampler = nil
        for buffer in resampled + pending { buffer.deallocate() }
        resampled = []
        pending = []
        resampledCapacity = 0
    }
}
