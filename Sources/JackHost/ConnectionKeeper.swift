/// The few graph operations the ``ConnectionKeeper`` needs. ``JackClient`` provides them;
/// tests drive the keeper with a fake graph, without jackd.
protocol PortGraph {
    /// Whether a port with this full name exists.
    func portExists(_ name: String) -> Bool
    /// Connects two ports by full name; an existing connection counts as success.
    func connect(_ source: String, to destination: String) throws(JackError)
    /// The ports connected to the named port.
    func connections(ofPortNamed name: String) -> [String]
}

extension JackClient: PortGraph {}

/// Keeps the host's inputs wired as the user left them, across server restarts, route
/// changes and sources that come and go: the connection-restore policy as a pure state
/// machine. It does no I/O of its own; every graph question goes through a ``PortGraph``
/// and time is passed in (seconds on any monotonic clock), so tests can drive it.
///
/// The policy:
/// - After a reconnect, every connection known at the loss is restored, retried while its
///   source is missing or refused, for at most `restoreTimeout` seconds; then reported.
/// - jack2 refuses a connection to a port of a client that is not active yet, although the
///   port exists: a refused restore is retried, not given up at the first refusal.
/// - A connection that disappears while running is watched for `graceSeconds`: if its source
///   vanishes meanwhile (a client quitting deactivates first, then removes its ports), it is
///   restored, with no deadline, when the source returns; if the source stays, someone
///   disconnected it on purpose and it is forgotten. A source that vanished and came back
///   between two looks (a netjack2 slave's driver re-registering its ports when its master
///   returns) is told apart by a port unregistration counted while the loss is watched (the
///   callback can come a look late) or at most `earlySeconds` before it (a look early, while
///   the graph still showed the connection): its connection is restored. A deliberate
///   disconnect that coincides with some port going away is restored too; that is the price
///   of not missing a returning source.
/// - A restore is done only when the graph shows it: a source that goes away again right
///   after the connect is waited for again.
/// - A restore waiting for a returning source keeps waiting when it is refused (the source's
///   client may take long to become active again); restores after a reconnect give up at their
///   deadline and are reported.
struct ConnectionKeeper {
    /// A connection waiting to be made.
    struct Restore: Equatable {
        var source: String
        var destination: String
        /// When to give up and report it; nil waits for the source for ever.
        var deadline: Double?
        /// For a source that went away while running: the session's captured frames when the
        /// keeper found it gone (its input records silence from about there). Nil for the
        /// restores after a reconnect.
        var awaySinceFrame: Int? = nil
    }

    /// A source that went away from an input, or came back to it, for the host to tell.
    enum SourceChange: Equatable {
        /// `source` went away from `input`; the keeper waits for it without a deadline.
        case lost(source: String, input: String)
        /// `source` is connected to `input` again after `absentFrames` frames without it
        /// (counted between the keeper's looks: within one look, 20 ms, of the truth).
        case returned(source: String, input: String, absentFrames: Int)
    }

    /// How long restores after a reconnect are retried.
    let restoreTimeout: Double
    /// How long a lost connection is watched for its source vanishing.
    let graceSeconds: Double

    /// Each input's sources at the last look.
    private(set) var known: [[String]] = []
    /// Connections still to make.
    private(set) var pending: [Restore] = []
    /// Lost connections whose source still existed, watched until the time given.
    private var recentlyLost: [(source: String, destination: String, until: Double, portsWentAway: Bool)] = []
    /// Sources lost and returned since the host last took them (``takeChanges()``).
    private var changes: [SourceChange] = []
    /// The graph's port-unregistration count at the last look.
    private var unregistrationsSeen = 0
    /// When a look last found the count moved (-infinity: never).
    private var lastUnregistrationSeen = -Double.infinity
    /// How long before a loss an unregistration still counts for it: the callback can be
    /// counted a look before the graph shows the connection gone.
    let earlySeconds: Double

    init(restoreTimeout: Double, graceSeconds: Double = 2, earlySeconds: Double = 0.75) {
        self.restoreTimeout = restoreTimeout
        self.graceSeconds = graceSeconds
        self.earlySeconds = earlySeconds
    }

    /// Records the wiring as it is now (after the initial connections, or a restore).
    mutating func remember(_ graph: some PortGraph, inputs: [String]) {
        known = inputs.map { graph.connections(ofPortNamed: $0) }
    }

    /// Re-reads the wiring: connections that disappeared since the last look start being watched.
    /// `unregistrations` is the graph's running count of unregistered ports.
    mutating func observe(_ graph: some PortGraph, inputs: [String], now: Double, unregistrations: Int = 0) {
        let current = inputs.map { graph.connections(ofPortNamed: $0) }
        if unregistrations != unregistrationsSeen {
            lastUnregistrationSeen = now
            // The unregistration callback can arrive after the connection was seen lost (and after
            // the port returned): an unregistration inside a watched loss's grace counts for it too.
            for index in recentlyLost.indices { recentlyLost[index].portsWentAway = true }
        }
        unregistrationsSeen = unregistrations
        // Or before: counted at one look while the graph still showed the connection, which
        // the next look finds gone with the port already back.
        let portsWentAway = now - lastUnregistrationSeen <= earlySeconds
        for (index, previous) in known.enumerated() where index < current.count {
            for source in previous where !current[index].contains(source) {
                recentlyLost.append((source, inputs[index], now + graceSeconds, portsWentAway))
            }
        }
        known = current
    }

    /// Settles watched connections: one whose source vanished becomes a restore without a
    /// deadline (and a ``SourceChange/lost(source:input:)``); one whose source is still there
    /// after the grace was removed on purpose. `frame` is the session's captured frames now.
    mutating func settleLost(_ graph: some PortGraph, now: Double, frame: Int = 0) {
        guard !recentlyLost.isEmpty else { return }
        recentlyLost = recentlyLost.filter { entry in
            if !graph.portExists(entry.source) || entry.portsWentAway {
                pending.append(Restore(source: entry.source, destination: entry.destination, deadline: nil, awaySinceFrame: frame))
                changes.append(.lost(source: entry.source, input: entry.destination))
                return false
            }
            return now < entry.until
        }
    }

    /// The sources lost and returned since the last call, in order.
    mutating func takeChanges() -> [SourceChange] {
        defer { changes = [] }
        return changes
    }

    /// The wiring to carry into a rebuilt session: what is connected plus what waits, by input.
    func wiringToCarry(inputs: [String]) -> [[String]] {
        var wiring = known
        while wiring.count < inputs.count { wiring.append([]) }
        for restore in pending {
            if let index = inputs.firstIndex(of: restore.destination), !wiring[index].contains(restore.source) {
                wiring[index].append(restore.source)
            }
        }
        return wiring
    }

    /// Plans the restores for a new session: `wiring[i]`'s sources to `inputs[i]`, plus any
    /// `extra` pairs (new inputs that follow automatic wiring), each with a deadline.
    mutating func planRestore(_ wiring: [[String]], inputs: [String], extra: [(String, String)] = [], now: Double) {
        pending = []
        recentlyLost = []
        // A new session has a new engine, whose unregistration count starts at zero.
        unregistrationsSeen = 0
        lastUnregistrationSeen = -Double.infinity
        let deadline = now + restoreTimeout
        for (index, sources) in wiring.enumerated() where index < inputs.count {
            for source in sources { pending.append(Restore(source: source, destination: inputs[index], deadline: deadline)) }
        }
        for (source, destination) in extra { pending.append(Restore(source: source, destination: destination, deadline: deadline)) }
    }

    /// Makes the restores that can be made now; returns those given up, with their reasons. A
    /// returning source's restore, once the graph shows it, is a
    /// ``SourceChange/returned(source:input:absentFrames:)`` counted up to `frame`, the
    /// session's captured frames now.
    mutating func retry(_ graph: some PortGraph, inputs: [String], now: Double, frame: Int = 0) -> [JackError] {
        guard !pending.isEmpty else { return [] }
        var failures: [JackError] = []
        var kept: [Restore] = []
        var made: [Restore] = []
        for restore in pending {
            let expired = restore.deadline.map { now > $0 } ?? false
            if graph.portExists(restore.source) {
                do {
                    try graph.connect(restore.source, to: restore.destination)
                    made.append(restore)
                } catch {
                    // Refused although the port exists: its client may not be active yet.
                    if expired {
                        failures.append(error)
                    } else {
                        kept.append(restore)
                    }
                }
                continue
            }
            if expired {
                failures.append(.noSuchPort(restore.source))
            } else {
                kept.append(restore)
            }
        }
        remember(graph, inputs: inputs)
        // A restore is done when the graph shows it: a source that went away again between the
        // connect and this look (a netjack2 driver re-registering its ports) is waited for again.
        for restore in made {
            if holds(restore, inputs: inputs) {
                if let since = restore.awaySinceFrame {
                    changes.append(.returned(source: restore.source, input: restore.destination, absentFrames: max(0, frame - since)))
                }
            } else if restore.deadline.map({ now > $0 }) ?? false {
                failures.append(.noSuchPort(restore.source))
            } else {
                kept.append(restore)
            }
        }
        pending = kept
        return failures
    }

    /// Whether the last look found `restore`'s connection in place.
    private func holds(_ restore: Restore, inputs: [String]) -> Bool {
        guard let index = inputs.firstIndex(of: restore.destination), index < known.count else { return false }
        return known[index].contains(restore.source)
    }

    /// Gives up every restore still waiting (the host stops) and returns them as failures.
    mutating func abandonPending() -> [JackError] {
        defer { pending = [] }
        return pending.map { .noSuchPort($0.source) }
    }
}
