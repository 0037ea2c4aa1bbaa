import CJackHostPlugin
import JackHost
import Synchronization

/// Events on their way to a plugin's `handle_event` (ABI 2): the host's event thread posts
/// them, and the thread that calls the plugin's `process` delivers them just before the next
/// block, so a plugin never sees two calls at once and needs no locks.
///
/// A single-producer, single-consumer ring of fixed size: posting and delivering neither
/// allocate nor lock, so delivery is real-time safe. When a plugin falls far behind (no block
/// for a long while, 64 events queued), further events are counted in ``lostEvents``.
final class PluginEventMailbox: @unchecked Sendable {
    // @unchecked: `slots[i]` is written by the producer only while i is outside [head, tail)
    // as the consumer sees it, and read by the consumer only inside; the atomics order them.

    static let capacity = 64
    private let slots = UnsafeMutablePointer<jackhost_plugin_event_t>.allocate(capacity: capacity)
    /// Events taken so far (written by the delivering thread).
    private let head = Atomic<Int>(0)
    /// Events posted so far (written by the posting thread).
    private let tail = Atomic<Int>(0)
    /// Events that did not fit.
    let lostEvents = Atomic<Int>(0)

    init() {
        slots.initialize(repeating: jackhost_plugin_event_t(), count: Self.capacity)
    }

    deinit { slots.deinitialize(count: Self.capacity).deallocate() }

    /// Posts `event` (host's event thread). Events a plugin has no kind for are not posted.
    func post(_ event: AudioSessionEvent) {
        guard let cEvent = Self.cEvent(for: event) else { return }
        let tail = tail.load(ordering: .relaxed)
        guard tail - head.load(ordering: .acquiring) < Self.capacity else {
            lostEvents.add(1, ordering: .relaxed)
            return
        }
        slots[tail % Self.capacity] = cEvent
        self.tail.store(tail + 1, ordering: .releasing)
    }

    /// **Real-time safe.** Hands every waiting event to `handler` with `instance`, oldest first.
    @inline(__always)
    func deliver(
        to handler: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<jackhost_plugin_event_t>?) -> Void,
        instance: UnsafeMutableRawPointer
    ) {
        var head = head.load(ordering: .relaxed)
        let tail = tail.load(ordering: .acquiring)
        while head != tail {
            handler(instance, slots + head % Self.capacity)
            head += 1
        }
        self.head.store(head, ordering: .releasing)
    }

    /// The C form of a host event, or nil for one the ABI does not carry.
    static func cEvent(for event: AudioSessionEvent) -> jackhost_plugin_event_t? {
        let size = UInt32(MemoryLayout<jackhost_plugin_event_t>.size)
        func make(_ kind: UInt32, _ value: Int = 0, rate: Double = 0) -> jackhost_plugin_event_t {
            jackhost_plugin_event_t(struct_size: size, kind: kind, value: UInt64(max(value, 0)), sample_rate: rate)
        }
        switch event {
        case .xrun(let total): return make(JACKHOST_PLUGIN_EVENT_XRUN, total)
        case .bufferSizeChanged(let frames): return make(JACKHOST_PLUGIN_EVENT_BUFFER_SIZE, frames)
        case .sampleRateChanged(let rate): return make(JACKHOST_PLUGIN_EVENT_SAMPLE_RATE, rate: rate)
        case .serverLost: return make(JACKHOST_PLUGIN_EVENT_SERVER_LOST)
        case .serverRestored: return make(JACKHOST_PLUGIN_EVENT_SERVER_RESTORED)
        case .routeChanged(let channels): return make(JACKHOST_PLUGIN_EVENT_ROUTE_CHANGED, channels)
        case .freewheelChanged(let on): return make(JACKHOST_PLUGIN_EVENT_FREEWHEEL, on ? 1 : 0)
        case .sourceLost, .sourceReturned: return nil
        }
    }
}
