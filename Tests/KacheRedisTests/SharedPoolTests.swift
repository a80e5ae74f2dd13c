import Foundation
import Kache
import KacheWorkloads
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct SharedPoolTests {
        /// Random sets against the original Kache's sorted-array Pool, the
        /// reference model: the same keys expire, the same key is evicted, and
        /// the eviction order is equal after every step.
        @Test(.timeLimit(.minutes(2))) func evictionOrderMatchesTheReferenceModel() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = ManualClock()
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration(clock: clock)), client: client,
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                for seed in UInt64(1)...12 {
                    var rng = SplitMix64(seed: seed, thread: 0)
                    let capacity = Int(rng.next() % 8) + 2
                    let pool = cache.pool(named: "model-\(seed)", capacity: capacity)
                    var model = SortedArrayPool(capacity: capacity)
                    for step in 0..<120 {
                        // Whole microseconds, the Redis score's unit; coarse steps make ties.
                        let now = clock.nanosecondsSince1970()
                        let key = "k\(rng.next() % 14)"
                        let expiry = now + Int64(rng.next() % 6) * 1_000_000
                            + (rng.next() % 4 == 0 ? 0 : 1_000_000)
                        let expected = model.set(key: key, expiry: expiry, now: now)
                        let removed = try await pool.set(Data(key.utf8), forKey: key, expiry: expiry, now: now)
                        #expect(removed.expired.sorted() == expected.expired.sorted(), "seed \(seed) step \(step)")
                        #expect(removed.evicted == expected.evicted, "seed \(seed) step \(step)")
                        #expect(try await pool.keysByExpiry() == model.keysByExpiry, "seed \(seed) step \(step)")
                        clock.advance(by: .milliseconds(Int64(rng.next() % 3)))
                    }
                    let live = model.keysByExpiry.filter { model.expiry(forKey: $0)! > clock.nanosecondsSince1970() }
                    for key in live { #expect(try await pool.data(forKey: key) == Data(key.utf8)) }
                    try await pool.removeAll()
                }
                await cache.close()
                await client.shutdown()
            }
        }
    }
}
