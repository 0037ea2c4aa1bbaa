// ServerCrash.swift
//
// Fault injection: a private server that dies as a crashed jackd would. Only tests crash a
// server on purpose, so this lives here, not in JackHostSignals.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension PrivateJACKServer {
    /// Kills the server with SIGKILL at once, as a crash would (for fault-injection tests).
    public func crash() {
        guard let process else { return }
        self.process = nil
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}
