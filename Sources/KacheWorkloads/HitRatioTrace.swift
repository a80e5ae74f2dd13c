/// The request sequence of W9 hit ratio (WORKLOADS.md): cache-aside, so each
/// request is a get of one key and, on a miss, a set of that key with the
/// request's TTL. The sequence is fixed by the seed alone, so Kache, the
/// in-process baselines and libCacheSim replay the same requests.
///
/// ```swift
/// let trace = HitRatioTrace(.oneHitWonders, keyCount: 100_000, requests: 1_000_000)
/// var lru = LRUSimulator(capacity: 1_000)
/// let ratio = Double(trace.hits(replayingOn: &lru)) / Double(trace.count)
/// ```
///
/// Draws, per request, from one SplitMix64 stream of `seed` (thread 0), in
/// WORKLOADS.md's order: for trace (b) the kind first (`next() % 100 < 30`
/// is a fresh key, which draws nothing more), then the key (a Zipf draw),
/// then for trace (c) the TTL (`next() % 3` picks 60 s, 3,600 s or 86,400 s).
///
/// Two choices the row leaves open, made here:
/// - Trace (c) draws a TTL for *every* request, hit or miss, and a hit
///   ignores it. Drawing only on a miss would make the keys that follow
///   depend on the cache under test, and no two caches would see one trace.
/// - The values set on a miss are not part of the trace: they come from a
///   stream of their own (``valueStream(seed:)``), for the same reason.
public struct HitRatioTrace: Sendable {
    /// The three traces of the W9 row.
    public enum Kind: String, CaseIterable, Sendable {
        /// (a) Zipf 0.99 over the N keys.
        case zipf = "a"
        /// (b) 30 % of requests to keys never seen before, numbered from N upward.
        case oneHitWonders = "b"
        /// (c) Zipf, each request with a TTL of 60 s, 1 h or 1 d.
        case mixedTTL = "c"

        /// How a table names the trace: "(a) Zipf".
        public var title: String {
            switch self {
            case .zipf: "(a) Zipf"
            case .oneHitWonders: "(b) + 30 % one-hit wonders"
            case .mixedTTL: "(c) Zipf, TTL 60 s / 1 h / 1 d"
            }
        }
    }

    /// The share of trace (b)'s requests that name a fresh key, in percent.
    public static let freshKeyPercent: UInt64 = 30
    /// The TTLs trace (c) picks from with `next() % 3`, in seconds.
    public static let ttlChoices: [Int32] = [60, 3_600, 86_400]
    /// The TTL of every set in traces (a) and (b): one day, which the
    /// simulated run (1,000 s at the standard sizes) never reaches.
    public static let defaultTTLSeconds: Int32 = 86_400
    /// How far the simulated clock moves per request.
    public static let millisecondsPerRequest: Int64 = 1

    public let kind: Kind
    /// N: the Zipf draws range over keys `0..<keyCount`.
    public let keyCount: Int
    /// The key index of each request (fresh keys of trace (b) are `keyCount` upward).
    public let keys: [Int32]
    /// The TTL, in seconds, that each request's set has if the request misses.
    public let ttlSeconds: [Int32]

    /// The number of requests.
    public var count: Int { keys.count }

    /// Draws the trace `kind` of `requests` requests over `keyCount` keys from
    /// the stream of `seed`.
    /// - Complexity: O(requests × log keyCount), and O(keyCount) for the Zipf table.
    public init(_ kind: Kind, keyCount: Int, requests: Int, seed: UInt64 = SplitMix64.defaultSeed) {
        precondition(requests >= 0, "a trace has a non-negative number of requests")
        precondition(keyCount + requests <= WorkloadKeys.indexLimit, "the keys of the trace must have 7-digit names")
        let zipf = ZipfDistribution(count: keyCount)
        var rng = SplitMix64(seed: seed, thread: 0)
        var keys: [Int32] = []
        var ttls: [Int32] = []
        keys.reserveCapacity(requests)
        ttls.reserveCapacity(requests)
        var freshKeys = 0
        for _ in 0..<requests {
            var ttl = Self.defaultTTLSeconds
            switch kind {
            case .zipf:
                keys.append(Int32(zipf.sample(&rng)))
            case .oneHitWonders:
                if rng.next() % 100 < Self.freshKeyPercent {
                    keys.append(Int32(keyCount + freshKeys))
                    freshKeys += 1
                } else {
                    keys.append(Int32(zipf.sample(&rng)))
                }
            case .mixedTTL:
                keys.append(Int32(zipf.sample(&rng)))
                ttl = Self.ttlChoices[Int(rng.next() % UInt64(Self.ttlChoices.count))]
            }
            ttls.append(ttl)
        }
        self.kind = kind
        self.keyCount = keyCount
        self.keys = keys
        self.ttlSeconds = ttls
    }

    /// The stream the values set on a miss are drawn from: thread 1's stream
    /// of `seed` (seed + 1), which W9, a one-thread workload, uses for nothing else.
    public static func valueStream(seed: UInt64 = SplitMix64.defaultSeed) -> SplitMix64 {
        SplitMix64(seed: seed, thread: 1)
    }

    /// The simulated time of request `index`, in milliseconds from the start.
    public static func time(ofRequest index: Int) -> Int64 {
        Int64(index) * millisecondsPerRequest
    }

    /// Replays the trace on `simulator` (request i at ``time(ofRequest:)``)
    /// and returns the number of hits.
    /// - Complexity: O(count) requests of the simulator.
    public func hits<Simulator: CacheSimulator>(replayingOn simulator: inout Simulator) -> Int {
        var hits = 0
        for index in keys.indices {
            let now = Self.time(ofRequest: index)
            if simulator.access(Int(keys[index]), now: now, expiresAt: now + Int64(ttlSeconds[index]) * 1_000) { hits += 1 }
        }
        return hits
    }
}
