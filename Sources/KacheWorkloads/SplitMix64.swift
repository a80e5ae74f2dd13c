/// The splitmix64 generator of WORKLOADS.md: the one source of randomness in
/// every workload, so that the same seed gives the same keys, values and
/// operation order in every tool and every cache under test.
///
/// ```swift
/// var rng = SplitMix64(seed: 42, thread: 1)   // stream of the second thread
/// let ttl = 1 + rng.next() % 600
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The seed WORKLOADS.md uses unless told otherwise.
    public static let defaultSeed: UInt64 = 42

    /// The generator's whole state: advances by a fixed odd constant per draw.
    public private(set) var state: UInt64

    /// Creates the stream of `seed`.
    public init(seed: UInt64 = SplitMix64.defaultSeed) {
        state = seed
    }

    /// Creates the stream of one thread of a multi-threaded run: seed + thread index.
    public init(seed: UInt64 = SplitMix64.defaultSeed, thread: Int) {
        precondition(thread >= 0, "a thread index is never negative")
        state = seed &+ UInt64(thread)
    }

    /// The next 64 random bits.
    /// - Complexity: O(1).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
