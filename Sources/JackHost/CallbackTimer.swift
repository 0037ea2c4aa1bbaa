/// A preallocated histogram of how long the process callback takes, in microseconds.
///
/// The real-time thread only increments a bucket; nothing allocates or locks. Read the
/// summary after ``CaptureHost/stop(drainLimit:abandonWhen:)``: the buckets are plain memory, and stopping the
/// host (deactivating the client) orders the real-time writes before the read.
public final class CallbackTimer: @unchecked Sendable {
    // @unchecked: only the process thread writes the buckets; `summary` is read after stop(), when deactivation has ordered those writes before the read.
    /// Durations at or above this many microseconds share the last bucket (their maximum is kept exactly).
    public static let bucketCount = 20_000
    private let buckets: UnsafeMutablePointer<UInt32>
    private var maximum: UInt64 = 0
    private var count = 0

    /// Allocates and touches every bucket, so the real-time thread never faults a page in.
    public init() {
        buckets = .allocate(capacity: CallbackTimer.bucketCount)
        buckets.initialize(repeating: 0, count: CallbackTimer.bucketCount)
    }

    deinit { buckets.deallocate() }

    /// **Real-time safe.** Records one callback's duration.
    @inline(__always)
    func record(microseconds: UInt64) {
        let index = Int(min(microseconds, UInt64(CallbackTimer.bucketCount - 1)))
        buckets[index] &+= 1
        if microseconds > maximum { maximum = microseconds }
        count &+= 1
    }

    /// Percentiles over every recorded callback (microsecond resolution).
    public var summary: CallbackTimeSummary {
        func percentile(_ p: Double) -> Int {
            guard count > 0 else { return 0 }
            let target = Int((Double(count) * p).rounded(.up))
            var seen = 0
            for index in 0..<CallbackTimer.bucketCount {
                seen += Int(buckets[index])
                if seen >= target { return index }
            }
            return CallbackTimer.bucketCount - 1
        }
        return CallbackTimeSummary(count: count, p50: percentile(0.50), p99: percentile(0.99), max: Int(maximum))
    }
}

/// Callback durations in whole microseconds.
public struct CallbackTimeSummary: Sendable, Equatable, CustomStringConvertible {
    /// Callbacks measured.
    public var count: Int
    /// Median duration.
    public var p50: Int
    /// 99th percentile.
    public var p99: Int
    /// Longest callback.
    public var max: Int

    /// For example "callback_us count=1000 p50=3 p99=9 max=40".
    public var description: String { "callback_us count=\(count) p50=\(p50) p99=\(p99) max=\(max)" }
}
