import Synchronization

extension Atomic where Value == Int {
    /// **Real-time safe.** Adds `amount` to a counter that only the calling thread ever writes
    /// (others only load it): a relaxed load and store, plain moves on x86-64, where `add` is a
    /// locked read-modify-write that the process callback would pay for every cycle. Readers see
    /// every value the writer stores, in order; a second writer would lose counts, so a counter
    /// that more than one thread writes uses `add`.
    @inline(__always)
    func addFromSoleWriter(_ amount: Int) {
        store(load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }
}
