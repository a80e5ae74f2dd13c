import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct TieredCacheTests {
        @Test(.timeLimit(.minutes(1))) func bothTiersHoldTheSameRecordUntilTheSameInstant() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                let value = Data(String(repeating: "a shared value ", count: 100).utf8)
                try await cache.set(value, forKey: "user:1", ttl: .seconds(300))
                await #expect(cache.local.data(forKey: "user:1") == value)

                let stored = try await client.send(RedisCommand(["GET", "kache:user:1"], keyIndex: 1))
                let record = try SharedTierRecord.decode(Data(try #require(stored.bytes)))
                #expect(record.value == value && record.key == "user:1")
                #expect(stored.bytes!.count < value.count, "the record is LZ4-compressed, as the local file")
                let expiresAt = try #require(try await client.send(RedisCommand(["PEXPIRETIME", "kache:user:1"], keyIndex: 1)).integer)
                #expect(expiresAt == TieredCache.milliseconds(ceilingOf: record.expiry))
                let left = Double(record.expiry) / 1e9 - Date().timeIntervalSince1970
                #expect(left > 295 && left <= 300)

                // A miss in the local tier is filled from Redis with the time left.
                await cache.local.removeValue(forKey: "user:1")
                #expect(await cache.data(forKey: "user:1") == value)
                await #expect(cache.local.data(forKey: "user:1") == value)
                #expect(cache.statistics.sharedHits == 1)

                try await cache.removeValue(forKey: "user:1")
                await #expect(cache.local.data(forKey: "user:1") == nil)
                #expect(try await client.send(RedisCommand(["EXISTS", "kache:user:1"], keyIndex: 1)).integer == 0)
                #expect(await cache.data(forKey: "user:1") == nil)
                #expect(cache.statistics.readErrors == 0 && cache.statistics.writeErrors == 0)
                await cache.close()
                await client.shutdown()
            }
        }

        /// A set reads the clock once, and that reading gives both tiers their
        /// expiry: the local copy is live a nanosecond before the Redis record
        /// ends, and gone when it ends.
        @Test(.timeLimit(.minutes(1))) func aSetReadsTheClockOnceAndBothTiersEndAtTheSameNanosecond() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = CountingClock()
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration(clock: clock)), client: client,
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                let value = Data("v".utf8)
                let (readings, start) = (clock.readings, clock.next)
                try await cache.set(value, forKey: "k", ttl: .seconds(60))
                #expect(clock.readings - readings == 1)
                let expiry = try await recordExpiry(of: "k", in: client)
                #expect(expiry == start + 60_000_000_000)
                clock.set(to: expiry - 1)
                await #expect(cache.local.data(forKey: "k") == value)
                clock.set(to: expiry)
                await #expect(cache.local.data(forKey: "k") == nil)
                await cache.close()
                await client.shutdown()
            }
        }

        /// A local miss filled from Redis ends when the record ends, not a
        /// clock reading later.
        @Test(.timeLimit(.minutes(1))) func aFillFromRedisEndsWhenTheRecordEnds() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = CountingClock()
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration(clock: clock)), client: client,
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                let value = Data("v".utf8)
                try await cache.set(value, forKey: "k", ttl: .seconds(60))
                let expiry = try await recordExpiry(of: "k", in: client)
                await cache.local.removeValue(forKey: "k")
                clock.set(to: expiry - 30_000_000_000)
                #expect(await cache.data(forKey: "k") == value)
                #expect(cache.statistics.sharedHits == 1)
                clock.set(to: expiry - 1)
                await #expect(cache.local.data(forKey: "k") == value)
                clock.set(to: expiry)
                await #expect(cache.local.data(forKey: "k") == nil)
                await cache.close()
                await client.shutdown()
            }
        }

        /// The expiry of the record Redis holds for `key`.
        private func recordExpiry(of key: String, in client: RedisClusterClient) async throws -> Int64 {
            let stored = try await client.send(RedisCommand(["GET", RESPArgument("kache:" + key)], keyIndex: 1))
            return try SharedTierRecord.decode(Data(try #require(stored.bytes))).expiry
        }

        /// Two tiered caches in one process: a set or removal by one drops the
        /// other's local copy, and a cache's own write does not drop its own.
        @Test(.timeLimit(.minutes(1))) func aChangeElsewhereDropsTheLocalCopy() async throws {
            try await LiveCluster.with { cluster in
                let clients = [cluster.client(), cluster.client()]
                let a = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: clients[0])
                let b = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: clients[1])
                try await a.set(Data("one".utf8), forKey: "k", ttl: .seconds(60))
                // Each own write is checked when its invalidation comes back; wait for one
                // before the next, or both invalidations would find the second write's mark.
                try await waitUntil("A's own write of one comes back and is checked", timeout: .seconds(5)) { a.statistics.ownWritesChecked == 1 }
                #expect(await b.data(forKey: "k") == Data("one".utf8))
                try await a.set(Data("two".utf8), forKey: "k", ttl: .seconds(60))
                try await waitUntil("B drops its copy of one", timeout: .seconds(5)) { b.local.data(forKey: "k") == nil }
                #expect(await b.data(forKey: "k") == Data("two".utf8))
                // A's own write came back as an invalidation and was checked, not dropped.
                try await waitUntil("A's own write of two comes back and is checked", timeout: .seconds(5)) { a.statistics.ownWritesChecked == 2 }
                #expect(a.statistics.localCopiesDropped == 0 && a.statistics.readErrors == 0)
                await #expect(a.local.data(forKey: "k") == Data("two".utf8))
                try await a.removeValue(forKey: "k")
                try await waitUntil("B drops its copy of two", timeout: .seconds(5)) { b.local.data(forKey: "k") == nil }
                #expect(await b.data(forKey: "k") == nil)
                await a.close()
                await b.close()
                for client in clients { await client.shutdown() }
            }
        }
    }
}
