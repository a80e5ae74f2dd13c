import Foundation
import Kache
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct SharedQueueTests {
        @Test(.timeLimit(.minutes(1))) func fullQueueDropsOldestAndPopSkipsExpired() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = ManualClock()
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration(clock: clock)), client: client,
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                let queue = try cache.queue(named: "jobs", capacity: 3)
                for item in 1...3 { #expect(try await queue.push(Data("\(item)".utf8), ttl: .seconds(10)) == 0) }
                #expect(try await queue.push(Data("4".utf8), ttl: .seconds(10)) == 1)
                #expect(try await queue.pop() == Data("2".utf8))
                try await queue.push(Data("short".utf8), ttl: .seconds(1))
                clock.advance(by: .seconds(5))
                try await queue.push(Data("5".utf8), ttl: .seconds(10))
                #expect(try await queue.count() == 3)
                clock.advance(by: .seconds(6))
                // 3 and 4 expired at 10 s; "short" at 1 s; only 5 is live.
                #expect(try await queue.pop() == Data("5".utf8))
                #expect(try await queue.pop() == nil)
                #expect(try await queue.count() == 0)

                // A full Queue whose front has expired drops the expired, not a live item.
                for item in 1...3 { try await queue.push(Data("\(item)".utf8), ttl: .seconds(1)) }
                clock.advance(by: .seconds(2))
                #expect(try await queue.push(Data("new".utf8), ttl: .seconds(10)) == 1)
                #expect(try await queue.count() == 3)
                #expect(try await queue.pop() == Data("new".utf8))
                await cache.close()
                await client.shutdown()
            }
        }

        /// A TTL too long to count from now ends at the largest expiry, as in
        /// the local Queue: the item is still popped a century later.
        @Test(.timeLimit(.minutes(1))) func anItemWithATTLTooLongToCountIsPoppedACenturyLaterAsFromTheLocalQueue() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let clock = ManualClock()
                let local = try Kache(inMemory: Kache.Configuration(clock: clock))
                let cache = await TieredCache(local: local, client: client, configuration: TieredCacheConfiguration(tracksInvalidations: false))
                let forever = Duration.seconds(Int64.max)
                let localQueue = try local.queue(named: "forever", capacity: 2)
                try await localQueue.push(Data("v".utf8), ttl: forever)
                let queue = try cache.queue(named: "forever", capacity: 2)
                try await queue.push(Data("v".utf8), ttl: forever)

                let stored = try await client.send(RedisCommand(["LINDEX", "{kache:queue:forever}:items", "0"], keyIndex: 1))
                #expect(try SharedTierRecord.decode(Data(try #require(stored.bytes))).expiry == Int64.max)
                clock.advance(by: .seconds(100 * 365 * 86_400))
                await #expect(localQueue.pop() == Data("v".utf8))
                #expect(try await queue.pop() == Data("v".utf8))
                await cache.close()
                await client.shutdown()
            }
        }
    }
}

/// Bad input to a shared Queue is refused before Redis is asked, with the
/// local Queue's errors. No cluster needed.
@Suite struct SharedQueueInputTests {
    @Test(arguments: [0, -3]) func aCapacityBelowOneIsRefusedAsByTheLocalQueue(capacity: Int) async throws {
        try await withUnreachableSharedTier { cache in
            #expect(throws: KacheError.invalidCapacity(capacity)) { try cache.local.queue(named: "q", capacity: capacity) }
            #expect(throws: KacheError.invalidCapacity(capacity)) { try cache.queue(named: "q", capacity: capacity) }
        }
    }

    @Test(arguments: [Duration.zero, .seconds(-1)]) func aTTLThatIsNotPositiveIsRefusedAsByTheLocalQueue(ttl: Duration) async throws {
        try await withUnreachableSharedTier { cache in
            let localQueue = try cache.local.queue(named: "q", capacity: 2)
            await #expect(throws: KacheError.invalidTTL(ttl)) { try await localQueue.push(Data("v".utf8), ttl: ttl) }
            let queue = try cache.queue(named: "q", capacity: 2)
            await #expect(throws: KacheError.invalidTTL(ttl)) { try await queue.push(Data("v".utf8), ttl: ttl) }
        }
    }
}
