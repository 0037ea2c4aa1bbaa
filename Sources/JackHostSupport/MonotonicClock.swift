// MonotonicClock.swift
//
// The clocks a consumer compares "now" with, read without linking libjack.
//
// `CycleClock` is the clock of AudioTimestamp.microseconds (the blocks' cycle times), which is
// libjack's `jack_get_time`. Which system clock that is depends on the libjack: Debian's jack2
// 1.9.21 reads CLOCK_MONOTONIC_RAW (its libjack calls clock_gettime with clock id 4), while
// pipewire-jack reads CLOCK_MONOTONIC, and the two drift apart (seen: 256 ms after 30 minutes of
// uptime). So no fixed system clock is JACK's; the core, which links libjack, installs
// `jack_get_time` when it opens a client, and consumers read that through `CycleClock` without
// a libjack dependency of their own. IntegrationTests/MonotonicClockTests holds this on a real
// server.
//
// `MonotonicClock` is CLOCK_MONOTONIC itself, for intervals, and what `CycleClock` reads before
// any client is open (blocks then carry no cycle time, 0, and are not compared with it).

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The system's monotonic clock (CLOCK_MONOTONIC).
package enum MonotonicClock {
    /// CLOCK_MONOTONIC now, in microseconds. Any thread; no allocation or lock (clock_gettime is
    /// a vDSO call). Not necessarily JACK's clock: compare cycle times with ``CycleClock``.
    @inline(__always)
    package static var microseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000 &+ UInt64(now.tv_nsec / 1000)
    }

    /// CLOCK_MONOTONIC now, in nanoseconds: for timing short intervals (the callback timer)
    /// finer than JACK's microsecond clock. Any thread; no allocation or lock (a vDSO call).
    @inline(__always)
    package static var nanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}

/// CLOCK_MONOTONIC in seconds: for intervals on ordinary threads (the CLI's timers, the live
/// view's update pacing), never for comparing with JACK's cycle times (use ``CycleClock``).
package func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The clock the blocks' cycle times (`AudioTimestamp.microseconds`) are on: libjack's
/// `jack_get_time` once the core has opened a client, CLOCK_MONOTONIC before.
package enum CycleClock {
    /// A microsecond clock as a C function, as libjack's `jack_get_time` is.
    package typealias Source = @convention(c) () -> UInt64

    /// The installed source's address, 0 for none.
    private static let source = Atomic<UInt>(0)

    /// Makes `clock` the cycle clock (JackClient does, with `jack_get_time`, once libjack's
    /// clock is set up by an open client). Any thread; later installs replace earlier ones.
    package static func install(_ clock: Source) {
        source.store(UInt(bitPattern: unsafeBitCast(clock, to: Int.self)), ordering: .releasing)
    }

    /// The cycle clock now, in microseconds: the installed source, or ``MonotonicClock`` when
    /// none is. Any thread; no allocation or lock.
    @inline(__always)
    package static var microseconds: UInt64 {
        let address = source.load(ordering: .acquiring)
        guard address != 0 else { return MonotonicClock.microseconds }
        return unsafeBitCast(Int(bitPattern: address), to: Source.self)()
    }
}
