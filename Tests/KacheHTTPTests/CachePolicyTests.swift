import Foundation
import Kache
import Testing
@testable import KacheHTTP

/// The caller's overrides of the header rules.
@Suite struct CachePolicyTests {
    @Test func theDefaultsAreThoseOfAPrivateCacheWithBrowserHeuristics() {
        let policy = CachePolicy()
        #expect(policy.heuristicallyCacheableStatusCodes == [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501])
        #expect(policy.heuristicFreshness == .fractionOfAge(0.1, limit: .seconds(7 * 86_400)))
        #expect(policy.staleIfError == .asResponseAllows)
        #expect(policy.fixedTTL == nil)
        #expect(policy.maximumTTL == nil)
        #expect(policy.pool == nil)
        #expect(policy.role == .private)
        #expect(policy.targetedCacheControlFields.isEmpty)
    }

    @Test func theSharedPolicyDiffersFromTheDefaultInItsRoleAlone() {
        let shared = CachePolicy.shared
        #expect(shared.role == .shared)
        #expect(shared.targetedCacheControlFields.isEmpty)
        #expect(shared.heuristicallyCacheableStatusCodes == CachePolicy().heuristicallyCacheableStatusCodes)
        #expect(shared.heuristicFreshness == .browserDefault)
        #expect(shared.staleIfError == .asResponseAllows)
        #expect(shared.fixedTTL == nil && shared.maximumTTL == nil && shared.pool == nil)
    }

    @Test func aFixedTTLReplacesTheHeadersButNotNoStore() async throws {
        let f = try HTTPFixture(policy: CachePolicy(fixedTTL: .seconds(30)))
        defer { f.stop() }
        _ = try await f.get("/r/plain")  // no caching headers at all
        try await f.advance(by: 25)
        #expect(try await f.get("/r/plain").source == .cache)
        try await f.advance(by: 6)
        #expect(try await f.get("/r/plain").source == .network)

        _ = try await f.get("/r/forbidden?cc=no-store")
        #expect(try await f.get("/r/forbidden?cc=no-store").source == .network)
    }

    @Test func aMaximumTTLCapsTheHeaders() async throws {
        let f = try HTTPFixture(policy: CachePolicy(maximumTTL: .seconds(10)))
        defer { f.stop() }
        _ = try await f.get("/r/long?cc=max-age%3D3600")
        try await f.advance(by: 8)
        #expect(try await f.get("/r/long?cc=max-age%3D3600").source == .cache)
        try await f.advance(by: 3)
        #expect(try await f.get("/r/long?cc=max-age%3D3600").source == .network)
    }

    @Test func responsesGoIntoThePoolAndItsCapacityBoundsThem() async throws {
        let f = try HTTPFixture(makePolicy: { cache in CachePolicy(pool: try cache.pool(named: "avatars", capacity: 2)) })
        defer { f.stop() }
        // The first expires earliest, so a full Pool evicts it.
        _ = try await f.get("/r/a1?cc=max-age%3D60")
        _ = try await f.get("/r/a2?cc=max-age%3D120")
        _ = try await f.get("/r/a3?cc=max-age%3D180")
        let avatars = try f.cache.pool(named: "avatars", capacity: 2)
        #expect(avatars.count == 2)
        let topLevel = f.cache.keySpaces.first { $0.kind == .topLevel }
        #expect(topLevel?.count == 0)
        #expect(try await f.get("/r/a3?cc=max-age%3D180").source == .cache)
        #expect(try await f.get("/r/a1?cc=max-age%3D60").source == .network)
    }

    @Test func thePredicateKeepsURLsOutOfTheCache() async throws {
        let f = try HTTPFixture(policy: CachePolicy(shouldCache: { !$0.path.hasPrefix("/live") }))
        defer { f.stop() }
        _ = try await f.get("/live/feed?cc=max-age%3D60")
        _ = try await f.get("/live/feed?cc=max-age%3D60")
        #expect(try await f.server.requestCount("/live/feed") == 2)
        _ = try await f.get("/r/static?cc=max-age%3D60")
        #expect(try await f.get("/r/static?cc=max-age%3D60").source == .cache)
        let stats = f.client.statistics
        #expect(stats.bypassed == 2)
        #expect(stats.freshHits == 1)
        #expect(stats.stores == 1)
    }

    @Test func aLargerRevalidationWindowKeepsStaleResponsesLonger() async throws {
        let f = try HTTPFixture(policy: CachePolicy(revalidationWindow: .seconds(100)))
        defer { f.stop() }
        let path = "/r/window?cc=max-age%3D10&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 105)  // stale for 95 s: still kept
        #expect(try await f.get(path).source == .revalidated)
        try await f.advance(by: 115)  // the 304 kept it 10 s fresh + 100 s; now gone
        #expect(try await f.get(path).source == .network)
        #expect(try await f.server.stats("/r/window").last["if-none-match"] == nil)
    }
}
