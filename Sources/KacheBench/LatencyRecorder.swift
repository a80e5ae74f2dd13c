import Histogram

/// Per-operation latencies of one thread, in nanoseconds, in an HDR histogram
/// (3 significant digits, so a percentile is exact to 0.1 %).
struct LatencyRecorder: Sendable {
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)

    /// Records one operation that took `nanoseconds`.
    @inline(__always)
    mutating func record(_ nanoseconds: UInt64) {
        _ = histogram.record(nanoseconds)
    }

    /// Adds the operations another thread recorded.
    mutating func merge(_ other: LatencyRecorder) {
        histogram.add(other.histogram)
    }

    /// The latency at `percentile` (50, 99, 99.9), in microseconds.
    func microseconds(atPercentile percentile: Double) -> Double {
        Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    /// The percentiles every read-mixed workload reports, with the figure names they go by.
    static let reported: [(name: String, percentile: Double)] = [("p50 µs", 50), ("p99 µs", 99), ("p99.9 µs", 99.9)]
}
