/// A preallocated histogram of how long the process callback takes, read from CLOCK_MONOTONIC in
/// nanoseconds: 0.1 µs buckets up to 1 ms, 1 µs buckets from there to 21 ms.
///
/// The real-time thread only increments a bucket; nothing allocates or locks. Read the
/// summary after ``CaptureHost/stop(drainLimit:abandonWhen:)``: the buckets are plain memory, and stopping the
/// host (deactivating the client) orders the real-time writes before the read.
///
/// Why tenths of a microsecond: a callback with little to do takes 2 or 3 µs, and with whole
/// microseconds a comparison with another client could only say 1, 1.5 or 2 ×.
public final class CallbackTimer: @unchecked Sendable {
    // @unchecked: only the process thread writes the buckets; `summary` is read after stop(), when deactivation has ordered those writes before the read.
    /// Buckets of 100 ns below 1 ms.
    static let fineBuckets = 10_000
    /// Then buckets of 1 µs; durations at or above 21 ms share the last one (their maximum is kept exactly).
    static let coarseBuckets = 20_000
    private static let bucketCount = fineBuckets + coarseBuckets
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
    func record(nanoseconds: UInt64) {
        buckets[CallbackTimer.bucket(nanoseconds)] &+= 1
        if nanoseconds > maximum { maximum = nanoseconds }
        count &+= 1
    }

    /// The bucket of a duration.
    @inline(__always)
    static func bucket(_ nanoseconds: UInt64) -> Int {
        let tenths = nanoseconds / 100
        if tenths < UInt64(fineBuckets) { return Int(tenths) }
        return min(fineBuckets + Int(nanoseconds / 1000) - fineBuckets / 10, bucketCount - 1)
    }

    /// The shortest duration a bucket holds, in microseconds.
    static func lowerBound(ofBucket index: Int) -> Double {
        index < fineBuckets ? Double(index) / 10 : Double(index - fineBuckets + fineBuckets / 10)
    }

    /// Percentiles over every recorded callback (each the lower edge of its bucket: 0.1 µs
    /// resolution below 1 ms, 1 µs above).
    public var summary: CallbackTimeSummary {
        func percentile(_ p: Double) -> Double {
            guard count > 0 else { return 0 }
            let target = Int((Double(count) * p).rounded(.up))
            var seen = 0
            for index in 0..<CallbackTimer.bucketCount {
                seen += Int(buckets[index])
                if seen >= target { return CallbackTimer.lowerBound(ofBucket: index) }
            }
            return CallbackTimer.lowerBound(ofBucket: CallbackTimer.bucketCount - 1)
        }
        return CallbackTimeSummary(
            count: count, p50: percentile(0.50), p99: percentile(0.99), max: Double(maximum / 100) / 10)
    }
}

/// Callback durations in microseconds, to a tenth (see ``CallbackTimer``).
public struct CallbackTimeSummary: Sendable, Equatable, CustomStringConvertible {
    /// Callbacks measured.
    public var count: Int
    /// Median duration, µs.
    public var p50: Double
    /// 99th percentile, µs.
    public var p99: Double
    /// Longest callback, µs.
    public var max: Double

    /// For example "callback_us count=1000 p50=2.4 p99=3.1 max=40.2".
    public var description: String {
        func tenths(_ value: Double) -> String {
            let scaled = Int((value * 10).rounded())
            return "\(scaled / 10).\(scaled % 10)"
        }
        return "callback_us count=\(count) p50=\(tenths(p50)) p99=\(tenths(p99)) max=\(tenths(max))"
    }
}
