import Glibc
import JackHostConsumers

/// `/jackhost/subscribe`: who gets `/jackhost/meter`, how often, and until when. A subscriber
/// names a rate (at most ``fastestRate`` messages a second) and, optionally, a port on its own
/// host to send to (so that a listener such as liblo's `oscdump` can receive while another program
/// subscribes); it stays subscribed until `/jackhost/unsubscribe`, or until it has been quiet for
/// ``quietLimit`` seconds: renewing means subscribing again. Main thread only.
struct OSCMeterSubscriptions {
    /// One subscriber.
    struct Subscription {
        /// Where meters go: the sender's address, with the reply port when one was given.
        var destination: OSCSocket.Sender
        var rate: Float
        var nextSend: Double
        var expires: Double
    }

    /// The most messages a second a subscriber gets.
    static let fastestRate: Float = 30
    /// The rate when none is given.
    static let defaultRate: Float = 10
    /// Seconds without a renewal after which a subscriber is dropped.
    static let quietLimit = 10.0
    /// Subscribers at once; one more is refused.
    static let limit = 8
    /// The level sent for silence, in dBFS: below any 24-bit sample, and finite for every client.
    static let silenceDB: Float = -144

    private(set) var subscriptions: [Subscription] = []

    /// Adds or renews the subscription of `sender` (to `replyPort` on its host when given).
    /// Returns the reason when refused.
    mutating func subscribe(_ sender: OSCSocket.Sender, rate: Float?, replyPort: Int32?, now: Double) -> String? {
        let hz = rate ?? Self.defaultRate
        guard hz.isFinite, hz > 0 else { return "/jackhost/subscribe: the rate must be more than 0 messages a second" }
        guard replyPort.map({ (1...65535).contains($0) }) ?? true else { return "/jackhost/subscribe: the reply port must be 1 to 65535" }
        let destination = Self.destination(sender, replyPort: replyPort)
        let capped = min(hz, Self.fastestRate)
        if let index = subscriptions.firstIndex(where: { Self.same($0.destination, destination) }) {
            subscriptions[index].rate = capped
            subscriptions[index].expires = now + Self.quietLimit
            return nil
        }
        guard subscriptions.count < Self.limit else { return "/jackhost/subscribe: \(Self.limit) subscribers already; unsubscribe one first" }
        subscriptions.append(Subscription(destination: destination, rate: capped, nextSend: now, expires: now + Self.quietLimit))
        return nil
    }

    /// Ends the subscription of `sender` (to `replyPort` when given); false when there was none.
    mutating func unsubscribe(_ sender: OSCSocket.Sender, replyPort: Int32?) -> Bool {
        let destination = Self.destination(sender, replyPort: replyPort)
        let before = subscriptions.count
        subscriptions.removeAll { Self.same($0.destination, destination) }
        return subscriptions.count < before
    }

    /// Drops the quiet subscribers and returns where a meter is due now (each then waits a period).
    mutating func due(now: Double) -> [OSCSocket.Sender] {
        subscriptions.removeAll { $0.expires <= now }
        var destinations: [OSCSocket.Sender] = []
        for index in subscriptions.indices where subscriptions[index].nextSend <= now {
            destinations.append(subscriptions[index].destination)
            // From the time it was due, not from now: the 20 ms tick does not slow the rate down,
            // and a late tick does not make a burst.
            let period = 1 / Double(subscriptions[index].rate)
            subscriptions[index].nextSend = max(subscriptions[index].nextSend + period, now)
        }
        return destinations
    }

    /// `/jackhost/meter`: `i` the number of inputs, then `f` peak and `f` RMS in dBFS for each
    /// (``silenceDB`` for silence), over the window since the previous meter message.
    static func message(_ levels: [ChannelLevels]) -> OSCMessage {
        var arguments: [OSCMessage.Argument] = [.int32(Int32(levels.count))]
        for level in levels {
            arguments.append(.float(max(ChannelLevels.dBFS(level.peak), silenceDB)))
            arguments.append(.float(max(ChannelLevels.dBFS(level.rms), silenceDB)))
        }
        return OSCMessage(path: "/jackhost/meter", arguments: arguments)
    }

    private static func destination(_ sender: OSCSocket.Sender, replyPort: Int32?) -> OSCSocket.Sender {
        sender.replying(to: replyPort)
    }

    private static func same(_ a: OSCSocket.Sender, _ b: OSCSocket.Sender) -> Bool { a.host == b.host && a.port == b.port }
}
