import Foundation

/// Zipf-distributed key ranks by an inverse-CDF table, exactly as WORKLOADS.md
/// specifies, so that every implementation draws the same ranks from the same stream.
///
/// ```swift
/// let zipf = ZipfDistribution(count: 100_000)
/// var rng = SplitMix64(seed: 42)
/// let key = WorkloadKeys.key(zipf.sample(&rng))   // rank 0 is the hottest key
/// ```
public struct ZipfDistribution: Sendable {
    /// The number of ranks, `0..<count`.
    public let count: Int
    /// The exponent s of the weights `k^-s`.
    public let exponent: Double
    /// `cdf[r]`: the sum of the weights of ranks `0...r`, divided by the total.
    /// Sums are taken in rank order in `Double`; the order is part of the
    /// specification, since floating-point addition is not associative.
    public let cdf: [Double]

    /// Builds the table of `count` ranks with weights `k^-exponent`, k = 1…count.
    /// - Complexity: O(count) time and memory (8 MB for a million keys).
    public init(count: Int, exponent: Double = 0.99) {
        precondition(count > 0, "a Zipf distribution needs at least one rank")
        self.count = count
        self.exponent = exponent
        var sums = [Double](repeating: 0, count: count)
        var total = 0.0
        for rank in 0..<count {
            total += pow(Double(rank + 1), -exponent)
            sums[rank] = total
        }
        cdf = sums.map { $0 / total }
    }

    /// Draws one rank: one value from `rng`, `u = Double(next() >> 11) * 2^-53`,
    /// and the first rank whose cumulative value is at least `u`.
    /// - Complexity: O(log count).
    public func sample(_ rng: inout SplitMix64) -> Int {
        let u = Double(rng.next() >> 11) * 0x1p-53
        var low = 0
        var high = count
        while low < high {
            let middle = low + (high - low) / 2
            if cdf[middle] >= u { high = middle } else { low = middle + 1 }
        }
        return min(low, count - 1)
    }
}
