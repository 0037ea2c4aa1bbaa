// WorkerThread.swift
//
// Starts a named, detached POSIX thread for ordinary work (a deferred consumer's worker, the
// host's monitor, the meter display). It replaces Foundation's Thread so that the library
// needs FoundationEssentials only (see Lock.swift). Callers signal their own completion.

import CPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A detached thread running one closure.
package enum WorkerThread {
    /// Carries the closure across pthread_create's `void *` argument.
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new detached thread named `name` (Linux keeps the first 15 bytes;
    /// `top -H` and debuggers show it). Traps if the system cannot create a thread.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                _ = cposix_set_thread_name(start.name)
                start.body()
                return nil
            }, start)
        precondition(status == 0, "pthread_create failed with error \(status)")
    }
}
