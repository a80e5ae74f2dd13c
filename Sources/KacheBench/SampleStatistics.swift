/// The summary of a figure's samples (one per run): median, min and max.
///
/// The median of an even count is the mean of the two middle samples.
struct SampleStatistics: Codable, Equatable {
    var median: Double
    var min: Double
    var max: Double

    /// Summarizes `samples`, or returns nil when there are none.
    /// - Complexity: O(n log n).
    init?(_ samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first!
        max = sorted.last!
    }
}
