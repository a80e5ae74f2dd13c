import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

/// Where `TieredCache.data(forKey:)` runs: a local hit on the caller's own
/// executor, with no hop away and back.
@Suite struct CallerExecutorTests {
    @Test(.timeLimit(.minutes(1))) func aLocalHitFromAnActorIsAnsweredWithoutLeavingTheActor() async throws {
        try await withUnreachableSharedTier { cache in
            let value = Data("a value in memory".utf8)
            try await cache.local.set(value, forKey: "hit", ttl: .seconds(60))
            let (read, jobs) = await CountingActor().count { _ in await cache.data(forKey: "hit") }
            #expect(read == value)
            #expect(jobs == 0, "a hop to the global executor and back gives the actor's executor a job")
            #expect(cache.statistics.localHits == 1)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aMissFromAnActorReturnsToTheActorOnceAfterAskingRedis() async throws {
        try await withUnreachableSharedTier { cache in
            let (read, jobs) = await CountingActor().count { _ in await cache.data(forKey: "absent") }
            #expect(read == nil)
            #expect(jobs == 1)
            #expect(cache.statistics.readErrors == 1)
        }
    }
}
