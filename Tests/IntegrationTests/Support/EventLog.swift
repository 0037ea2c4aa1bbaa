import Foundation
import JackHost

/// Collects session events from the monitor thread.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [AudioSessionEvent] = []
    func append(_ event: AudioSessionEvent) { lock.withLock { events.append(event) } }
    var all: [AudioSessionEvent] { lock.withLock { events } }
}
