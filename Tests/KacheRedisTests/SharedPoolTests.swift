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
                    let pool = try cache.pool(named: "model-\(seed)", capacity: capacity)
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

        /// A TTL too long to count from now ends at the largest expiry, as in
        /// the local Pool: the value stays live a century later, and a later
        /// set does not sweep it.
        @Test(.timeLimit(.minutes(1))) func aTTLTooLongToCountSaturatesAtTheLargestExpiryAsTheLocalPoolDoes() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = ManualClock()
                let local = try Kache(inMemory: Kache.Configuration(clock: clock))
                let cache = await TieredCache(local: local, client: client, configuration: TieredCacheConfiguration(tracksInvalidations: false))
                let forever = Duration.seconds(Int64.max)
                let century = Duration.seconds(100 * 365 * 86_400)
                let localPool = try local.pool(named: "forever", capacity: 2)
                try await localPool.set(Data("v".utf8), forKey: "k", ttl: forever)
                let pool = try cache.pool(named: "forever", capacity: 2)
                try await pool.set(Data("v".utf8), forKey: "k", ttl: forever)

                let stored = try await client.send(RedisCommand(["HGET", "{kache:pool:forever}:values", "k"], keyIndex: 1))
                #expect(try SharedTierRecord.decode(Data(try #require(stored.bytes))).expiry == Int64.max)
                clock.advance(by: century)
                await #expect(localPool.data(forKey: "k") == Data("v".utf8))
                #expect(try await pool.set(Data("w".utf8), forKey: "other", ttl: .seconds(1)).expired.isEmpty)
                #expect(try await pool.data(forKey: "k") == Data("v".utf8))
                #expect(try await pool.keysByExpiry() == ["other", "k"])
                try await pool.removeAll()
                await cache.close()
                await client.shutdown()
            }
        }
    }
}

/// Bad input to a shared Pool is refused before Redis is asked, with the
/// local Pool's errors. No cluster needed.
@Suite struct SharedPoolInputTests {
    @Test(arguments: [0, -3]) func aCapacityBelowOneIsRefusedAsByTheLocalPool(capacity: Int) async throws {
        try await withUnreachableSharedTier { cache in
            #expect(throws: KacheError.invalidCapacity(capacity)) { try cache.local.pool(named: "p", capacity: capacity) }
            #expect(throws: KacheError.invalidCapacity(capacity)) { try cache.pool(named: "p", capacity: capacity) }
        }
    }

    @Test(arguments: [Duration.zero, .seconds(-1)]) func aTTLThatIsNotPositiveIsRefusedAsByTheLocalPool(ttl: Duration) async throws {
        try await withUnreachableSharedTier { cache in
            let localPool = try cache.local.pool(named: "p", capacity: 2)
            await #expect(throws: KacheError.invalidTTL(ttl)) { try await localPool.set(Data("v".utf8), forKey: "k", ttl: ttl) }
            let pool = try cache.pool(named: "p", capacity: 2)
            await #expect(throws: KacheError.invalidTTL(ttl)) { try await pool.set(Data("v".utf8), forKey: "k", ttl: ttl) }
        }
    }
}
