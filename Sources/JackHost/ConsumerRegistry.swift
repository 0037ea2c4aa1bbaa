/// The host's consumers, and where each one stands in its contract: `prepare` once, blocks,
/// `finish` once, again for every new format.
///
/// The registry makes the contract hold whatever happens around it: a consumer is finished
/// only if it was prepared and not finished since (no double `finish`, no `finish` after a
/// refused `prepare`), and a consumer left inside `consume` by an abandoned drain is never
/// called again (a call would race the one still running).
///
/// Consumers are added before the host starts; afterwards the lists do not change and only
/// the states do, under a lock, because a reconnect re-prepares on the supervisor's thread.
final class ConsumerRegistry: @unchecked Sendable {
    // @unchecked: `realtime` and `deferred` are written only before start (the host's API
    // says so) and read afterwards; `states` is guarded by `lock`.

    /// A deferred consumer and the seconds of audio its ring holds (nil: the configuration's).
    struct Deferred {
        let consumer: any DeferredAudioConsumer
        let ringSeconds: Double?
        /// The elastic stage's bound; nil for none.
        let maximumBuffer: BufferBound?
        /// Audio the elastic stage keeps back from the consumer (see ``CaptureHost/add(deferred:ringSeconds:maximumBuffer:holdBackSeconds:)``).
        var holdBackSeconds: Double = 0
    }

    private enum State {
        case idle
        case prepared
        /// Left inside `consume`; never called again.
        case unresponsive
    }

    private(set) var realtime: [any RealtimeAudioConsumer] = []
    private(set) var deferred: [Deferred] = []
    private let lock = Lock()
    /// Real-time consumers first, then deferred ones, in the order added.
    private var states: [State] = []

    func add(realtime consumer: any RealtimeAudioConsumer) {
        realtime.append(consumer)
        lock.withLock { states.insert(.idle, at: realtime.count - 1) }
    }

    func add(
        deferred consumer: any DeferredAudioConsumer, ringSeconds: Double?, maximumBuffer: BufferBound? = nil, holdBackSeconds: Double = 0
    ) {
        deferred.append(
            Deferred(consumer: consumer, ringSeconds: ringSeconds, maximumBuffer: maximumBuffer, holdBackSeconds: holdBackSeconds))
        lock.withLock { states.append(.idle) }
    }

    /// The deferred consumers' names, in order (statistics are kept by position).
    var deferredNames: [String] { deferred.map { $0.consumer.consumerName } }

    /// Deferred consumers that may still be given blocks, with their positions.
    var responsiveDeferred: [(index: Int, entry: Deferred)] {
        let current = lock.withLock { states }
        return deferred.enumerated().filter { current[realtime.count + $0.offset] != .unresponsive }
            .map { (index: $0.offset, entry: $0.element) }
    }

    private var all: [any AudioConsumer] { realtime as [any AudioConsumer] + deferred.map { $0.consumer } }

    /// Prepares every consumer that can take blocks. If one refuses, those prepared by this
    /// call are finished again and the error names the one that refused.
    func prepareAll(format: StreamFormat) throws {
        var preparedNow: [Int] = []
        for (position, consumer) in all.enumerated() {
            guard lock.withLock({ states[position] }) == .idle else { continue }
            do {
                try consumer.prepare(format: format)
            } catch {
                for earlier in preparedNow { finish(at: earlier) }
                throw CaptureHostError.consumerRejectedFormat(consumer: consumer.consumerName, reason: String(describing: error))
            }
            lock.withLock { states[position] = .prepared }
            preparedNow.append(position)
        }
    }

    /// Finishes every prepared consumer, once.
    func finishAll() {
        for position in all.indices { finish(at: position) }
    }

    private func finish(at position: Int) {
        let wasPrepared = lock.withLock {
            guard states[position] == .prepared else { return false }
            states[position] = .idle
            return true
        }
        if wasPrepared { all[position].finish() }
    }

    /// Marks a deferred consumer (by its index among deferred ones) as left inside `consume`.
    func markUnresponsive(deferredIndex: Int) {
        lock.withLock { states[realtime.count + deferredIndex] = .unresponsive }
    }

    /// Tells every consumer that can still be called about an event.
    func tell(_ event: AudioSessionEvent) {
        let current = lock.withLock { states }
        for (position, consumer) in all.enumerated() where current[position] != .unresponsive {
            consumer.handle(event)
        }
    }
}
