/// The per-operation draws of WORKLOADS.md that are not keys or values.
/// For each operation, draw in this order: the kind (``isGet(_:)``), the key,
/// the TTL (``randomTTLSeconds(_:)``), then the value's bytes.
///
/// ```swift
/// if WorkloadDraws.isGet(&rng) { _ = cache.data(forKey: WorkloadKeys.key(zipf.sample(&rng))) }
/// ```
public enum WorkloadDraws {
    /// The share of W3's operations that are gets, in percent.
    public static let getPercent: UInt64 = 90
    /// The longest random TTL (W4), in seconds; the shortest is 1.
    public static let maxRandomTTLSeconds: UInt64 = 600
    /// How far W4's simulated clock advances per operation, in milliseconds.
    public static let churnTickMilliseconds: Int64 = 1
    /// The TTL range of W8 many-small, in seconds.
    public static let manySmallTTLRange: ClosedRange<UInt64> = 60...3600

    /// Whether a mixed workload's next operation is a get: `next() % 100 < 90`.
    /// - Complexity: O(1).
    public static func isGet(_ rng: inout SplitMix64) -> Bool {
        rng.next() % 100 < getPercent
    }

    /// A TTL uniform in 1…600 seconds: `1 + next() % 600`.
    /// - Complexity: O(1).
    public static func randomTTLSeconds(_ rng: inout SplitMix64) -> Int64 {
        Int64(1 + rng.next() % maxRandomTTLSeconds)
    }

    /// A W8 TTL, uniform in 60…3,600 seconds: `60 + next() % 3541`, the
    /// same form as ``randomTTLSeconds(_:)`` over W8's range.
    /// - Complexity: O(1).
    public static func manySmallTTLSeconds(_ rng: inout SplitMix64) -> Int64 {
        let range = manySmallTTLRange
        return Int64(range.lowerBound + rng.next() % UInt64(range.count))
    }
}
