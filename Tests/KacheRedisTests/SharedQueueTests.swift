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
                let queue = cache.queue(named: "jobs", capacity: 3)
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
    }
}
