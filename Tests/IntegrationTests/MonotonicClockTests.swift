import Foundation
import Glibc
import JackHost
import JackHostTesting
import Synchronization
import XCTest

/// JackHostSupport's `CycleClock` is JACK's microsecond clock: the recorder (in
/// JackHostConsumers, which links no libjack) stamps take requests with it and compares them with
/// the blocks' cycle times, which libjack stamps with `jack_get_time`. No fixed system clock
/// would do: this also records which one `jack_get_time` is (CLOCK_MONOTONIC_RAW with jack2
/// 1.9.21, CLOCK_MONOTONIC with pipewire-jack), and holds it to be one of the two.
final class MonotonicClockTests: XCTestCase {
    /// Keeps the latest block's cycle time (an atomic store per cycle: no allocation, no lock).
    final class CycleTimeProbe: RealtimeAudioConsumer, @unchecked Sendable {
        let microseconds = Atomic<UInt64>(0)
        func prepare(format: StreamFormat) throws {}
        func process(_ block: AudioBlock) { microseconds.store(block.timestamp.microseconds, ordering: .releasing) }
        func finish() {}
    }

    /// The most two readings of one clock may differ by: "a few milliseconds".
    static let tolerance: UInt64 = 3_000

    /// How far `reading` lies outside `before...after` (0 inside).
    static func distance(_ reading: UInt64, from before: UInt64, to after: UInt64) -> UInt64 {
        reading < before ? before - reading : (reading > after ? reading - after : 0)
    }

    /// A system clock in microseconds.
    static func microseconds(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
    }

    func testCycleClockIsJACKsMicrosecondClock() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            // An open client sets up libjack's clock (and installs it as the cycle clock).
            let client = try JackClient(name: "jhclock", server: server.name)
            defer { client.close() }
            var worst: UInt64 = 0
            for _ in 0..<1000 {
                let before = CycleClock.microseconds
                let jack = JackClient.microsecondClock
                let after = CycleClock.microseconds
                XCTAssertLessThanOrEqual(before, after)
                worst = max(worst, Self.distance(jack, from: before, to: after))
            }
            XCTAssertLessThanOrEqual(worst, Self.tolerance, "jack_get_time is \(worst) µs outside the cycle clock's readings around it")
            // Which system clock libjack reads: one of the two, never the wall clock.
            let raw = Self.microseconds(CLOCK_MONOTONIC_RAW)
            let monotonic = Self.microseconds(CLOCK_MONOTONIC)
            let jack = JackClient.microsecondClock
            let fromRaw = jack > raw ? jack - raw : raw - jack
            let fromMonotonic = jack > monotonic ? jack - monotonic : monotonic - jack
            XCTAssertLessThanOrEqual(min(fromRaw, fromMonotonic), Self.tolerance, "jack_get_time is CLOCK_MONOTONIC or CLOCK_MONOTONIC_RAW")
            print(
                "CLOCK cycle clock vs jack_get_time: \(worst) µs apart at most (1000 readings); jack_get_time is \(fromRaw) µs from CLOCK_MONOTONIC_RAW, \(fromMonotonic) µs from CLOCK_MONOTONIC"
            )
        }
    }

    func testBlocksCycleTimesAreOnTheCycleClock() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let probe = CycleTimeProbe()
            let host = CaptureHost(configuration: .init(serverName: server.name, connections: .patterns(["jhgen:out_.*"])))
            host.add(realtime: probe)
            try host.start()
            defer { host.stop() }
            XCTAssertTrue(JACKFixture.waitUntil { probe.microseconds.load(ordering: .acquiring) != 0 }, "blocks arrive")
            // The latest cycle began a period or two (256 frames at 48 kHz: 5.3 ms) ago, on a loaded
            // machine sometimes more (the dummy driver's thread waits its turn): the freshest of 20
            // readings is held to two periods, and every one to well under a second.
            let period = UInt64(256 * 1_000_000 / 48000)
            var ages: [UInt64] = []
            for _ in 0..<20 {
                let cycle = probe.microseconds.load(ordering: .acquiring)
                let now = CycleClock.microseconds
                XCTAssertLessThanOrEqual(cycle, now + Self.tolerance, "a cycle time is not in the cycle clock's future")
                ages.append(now - min(now, cycle))
                usleep(10_000)
            }
            XCTAssertLessThanOrEqual(ages.min() ?? .max, 2 * period + Self.tolerance, "the latest cycle began moments ago on the cycle clock")
            XCTAssertLessThan(ages.max() ?? .max, 500_000, "no cycle time is far from the cycle clock")
            print("CLOCK latest cycle time vs cycle clock: \(ages.min() ?? 0) to \(ages.max() ?? 0) µs old (period \(period) µs)")
        }
    }
}
