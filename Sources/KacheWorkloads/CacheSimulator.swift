/// An eviction policy simulated over whole objects, for W9's baselines:
/// the cache holds at most `capacity` objects (W9's values are all 1 KiB, so
/// objects and bytes count alike), and is used cache-aside.
///
/// ```swift
/// var fifo = FIFOSimulator(capacity: 3)
/// fifo.access(7, now: 0, expiresAt: 60_000)   // false: a miss, and 7 is set
/// fifo.access(7, now: 1, expiresAt: 60_001)   // true
/// ```
///
/// Expiry, for trace (c): an object whose time is up counts as absent, so a
/// request for it is a miss and sets it afresh, as in libCacheSim (which
/// removes an expired object when a request finds it). The simulators do not
/// sweep: an expired object no request names keeps its slot until the policy
/// evicts it, where Kache's sweep would free the slot sooner.
public protocol CacheSimulator {
    /// The most objects the cache holds.
    var capacity: Int { get }
    /// The objects it holds now, expired or not.
    var count: Int { get }
    /// One request at `now` (milliseconds): true on a hit of a live object;
    /// on a miss, evicts as the policy says and inserts `key` to expire at `expiresAt`.
    mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool
}

/// One slot of a simulator's queue: the key, and the stamp of the insertion
/// that made it. A slot whose stamp is no longer the key's is stale (the key
/// moved or left), and is skipped when it reaches the front, so that taking a
/// key out of the middle of a queue costs O(1).
struct QueueSlot {
    var key: Int
    var stamp: UInt64
}
