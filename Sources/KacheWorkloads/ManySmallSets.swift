import Foundation

/// The sets of W8 many-small, in the order WORKLOADS.md gives: for key
/// index 0, 1, 2, … (keys in index order, so the key draws nothing), the
/// text value's bytes, then the TTL, uniform in 60…3,600 s
/// (``WorkloadDraws/manySmallTTLSeconds(_:)``), all from one stream.
///
/// ```swift
/// let sets = ManySmallSets(count: 1_000_000, valueBytes: 200, seed: 42)
/// for index in sets.keys.indices {
///     try cache.set(sets.values[index], forKey: sets.keys[index], ttl: .seconds(sets.ttlSeconds[index]))
/// }
/// ```
public struct ManySmallSets: Sendable {
    /// `key-0000000` … in index order.
    public private(set) var keys: [String] = []
    /// The text value of each key.
    public private(set) var values: [Data] = []
    /// The TTL of each set, in seconds.
    public private(set) var ttlSeconds: [Int64] = []

    /// Draws `count` sets of `valueBytes`-byte text values from the stream
    /// of thread 0 of `seed` (W8 runs on one thread).
    /// - Complexity: O(count × valueBytes).
    public init(count: Int, valueBytes: Int, seed: UInt64 = SplitMix64.defaultSeed) {
        precondition(count >= 0, "a workload sets a non-negative number of values")
        var rng = SplitMix64(seed: seed, thread: 0)
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
        ttlSeconds.reserveCapacity(count)
        for index in 0..<count {
            keys.append(WorkloadKeys.key(index))
            values.append(WorkloadValues.text(index: index, byteCount: valueBytes, using: &rng))
            ttlSeconds.append(WorkloadDraws.manySmallTTLSeconds(&rng))
        }
    }

    /// The bytes of every value, uncompressed: what "raw bytes set" counts.
    public var rawBytes: Int { values.reduce(0) { $0 + $1.count } }
}
