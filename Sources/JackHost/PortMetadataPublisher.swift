/// The metadata jackhost gives its inputs, set again until the server confirms it.
///
/// Patchbays show `in_N` as "Input N", in order, from two properties per port. jackd stores a
/// property at once. PipeWire's libjack stores one only once the session manager (wireplumber)
/// has created PipeWire's "default" metadata object, and until then `jack_set_property` fails.
/// A jackhost started with the session, before wireplumber is ready, would otherwise have
/// ports without names for its whole run. So the supervisor calls ``publish(on:now:)`` on
/// every tick: it reads each property back through libjack, which under PipeWire answers
/// from what the server sent back, and sets again what does not read back yet.
///
/// Owned by the supervisor's thread, one per live session (a new session has new ports).
struct PortMetadataPublisher {
    private struct Property {
        let port: JackPort
        let key: String
        let value: String
        let type: String?
    }

    /// Seconds between two looks while something is unconfirmed.
    static let interval = 0.25

    private var pending: [Property]
    private var nextLook = 0.0
    /// How many times a property was set after the first, for tests and diagnostics.
    private(set) var repeatedSets = 0

    /// The properties for `ports`, in input order: pretty-name `names[N-1]` (a stream's name
    /// and channel), or "Input N" past the end of `names`, and order N.
    init(ports: [JackPort], names: [String] = []) {
        pending = ports.enumerated().flatMap { offset, port in
            PortMetadataPublisher.properties(forInput: offset + 1, names: names).map {
                Property(port: port, key: $0.key, value: $0.value, type: $0.type)
            }
        }
    }

    /// What input `number` (from 1) carries: its pretty-name and its order.
    static func properties(forInput number: Int, names: [String] = []) -> [(key: String, value: String, type: String?)] {
        [
            (JackClient.prettyNameKey, names.indices.contains(number - 1) ? names[number - 1] : "Input \(number)", nil),
            (JackClient.orderKey, String(number), JackClient.integerType),
        ]
    }

    /// Whether every property has read back.
    var isConfirmed: Bool { pending.isEmpty }

    /// Sets every property once (at registration, so jackd's patchbays see it at once).
    static func setAll(ports: [JackPort], names: [String] = [], on client: JackClient) {
        for (offset, port) in ports.enumerated() {
            for property in properties(forInput: offset + 1, names: names) {
                client.setProperty(on: port, key: property.key, value: property.value, type: property.type)
            }
        }
    }

    /// Drops what reads back and sets the rest again, at most every ``interval`` seconds.
    mutating func publish(on client: JackClient, now: Double) {
        guard !pending.isEmpty, now >= nextLook else { return }
        nextLook = now + PortMetadataPublisher.interval
        pending.removeAll { client.property(of: $0.port, key: $0.key) == $0.value }
        for property in pending {
            client.setProperty(on: property.port, key: property.key, value: property.value, type: property.type)
            repeatedSets += 1
        }
    }
}
