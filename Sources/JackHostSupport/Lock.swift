// Lock.swift
//
// A pthread mutex for ordinary (never real-time) threads. It stands in for Foundation's
// NSLock so that the library links FoundationEssentials only: loading Foundation maps ICU
// and ~6 MiB of libraries into every process that captures audio (BENCHMARKS.md, F5).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutual-exclusion lock. Never take it on the real-time thread.
package final class Lock: @unchecked Sendable {
    // @unchecked: a pthread mutex, heap-allocated once and never moved; it is the synchronisation.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    /// Creates an unlocked lock.
    package init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Blocks until the lock is held.
    package func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
