import Foundation
import Kache
import Testing
@testable import KacheHTTP

/// Freshness from the response headers, against the real server: a fresh
/// response is answered without a request; a stale one goes to the server.
@Suite struct FreshnessRulesTests {
    @Test func maxAgeResponseIsServedWithoutARequestUntilItIsStale() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/max-age?cc=max-age%3D60"
        let start = Date()
        let first = try await f.get(path)
        #expect(first.source == .network)
        try await f.advance(by: 30)
        let second = try await f.get(path)
        #expect(second.source == .cache)
        #expect(second.data == first.data)
        #expect(second.response.statusCode == 200)
        #expect((30 ... 30 + HTTPFixture.realSeconds(since: start)).contains(Int(second.response.value(forHTTPHeaderField: "Age") ?? "") ?? -1))
        #expect(try await f.server.requestCount("/r/max-age") == 1)

        try await f.advance(by: 31)
        let third = try await f.get(path)
        #expect(third.source == .network)
        #expect(HTTPFixture.text(third).contains("count=2"))
        #expect(try await f.server.requestCount("/r/max-age") == 2)
        let stats = f.client.statistics
        #expect(stats.freshHits == 1)
        #expect(stats.misses == 2)
        #expect(stats.bytesSaved == UInt64(first.data.count))
    }

    @Test func sharedMaxAgeIsIgnoredByAPrivateCache() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/shared?cc=s-maxage%3D600")
        let second = try await f.get("/r/shared?cc=s-maxage%3D600")
        #expect(second.source == .network)
        #expect(try await f.server.requestCount("/r/shared") == 2)

        // With max-age beside it, max-age alone decides.
        _ = try await f.get("/r/both?cc=s-maxage%3D0,%20max-age%3D60")
        #expect(try await f.get("/r/both?cc=s-maxage%3D0,%20max-age%3D60").source == .cache)
        #expect(try await f.server.requestCount("/r/both") == 1)
    }

    @Test func expiresCountsFromTheServersDateNotTheClientsClock() async throws {
        // The client's clock is 1000 s behind the server's: Expires − now would
        // give 1060 s; Expires − Date gives the intended 60 s.
        let f = try HTTPFixture(clockOffset: .seconds(-1000))
        defer { f.stop() }
        let path = "/r/expires?expires_delta=60"
        _ = try await f.get(path)
        try await f.advance(by: 50)
        #expect(try await f.get(path).source == .cache)
        try await f.advance(by: 12)
        #expect(try await f.get(path).source == .network)
        #expect(try await f.server.requestCount("/r/expires") == 2)
    }

    @Test func anInvalidExpiresMeansAlreadyExpired() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/bad-expires?expires=0")
        #expect(try await f.get("/r/bad-expires?expires=0").source == .network)
        #expect(try await f.server.requestCount("/r/bad-expires") == 2)
    }

    @Test func aDateInThePastCountsTowardsTheAge() async throws {
        // Date says the response left the server 40 s ago: 20 of its 60 s remain.
        // 45 s later it is stale (it would be fresh for 15 s more without
        // its Date). The margin is wide because the server's clock is the real
        // one and the client's stands still between advances: on a loaded
        // machine the first request may reach the server seconds after the
        // client's clock was set, and the response looks that much younger
        // (22 s after, as this test once checked, failed under load).
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/old-date?cc=max-age%3D60&date_offset=-40"
        _ = try await f.get(path)
        try await f.advance(by: 5)
        #expect(try await f.get(path).source == .cache)
        try await f.advance(by: 40)
        #expect(try await f.get(path).source == .network)
    }

    @Test func theAgeHeaderCountsTowardsTheAge() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/aged?cc=max-age%3D60&age=50"
        let start = Date()
        _ = try await f.get(path)
        try await f.advance(by: 5)
        let hit = try await f.get(path)
        #expect(hit.source == .cache)
        #expect((55 ... 55 + HTTPFixture.realSeconds(since: start)).contains(Int(hit.response.value(forHTTPHeaderField: "Age") ?? "") ?? -1))
        try await f.advance(by: 6)
        #expect(try await f.get(path).source == .network)
    }

    @Test func heuristicFreshnessIsATenthOfTheLastModifiedAgeByDefault() async throws {
        // Last-Modified 10,000 s before Date: fresh for 1,000 s, then revalidated.
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/heuristic?lm_age=10000"
        #expect(try await f.get(path).source == .network)
        try await f.advance(by: 990)
        #expect(try await f.get(path).source == .cache)
        try await f.advance(by: 20)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.requestCount("/r/heuristic") == 2)
    }

    @Test func thePolicyCanTurnHeuristicFreshnessOff() async throws {
        // Only Last-Modified: stale at once, so every use is revalidated.
        let f = try HTTPFixture(policy: CachePolicy(heuristicFreshness: .off))
        defer { f.stop() }
        let path = "/r/heuristic?lm_age=10000"
        #expect(try await f.get(path).source == .network)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.requestCount("/r/heuristic") == 2)
    }

    @Test func heuristicsNeverOverrideAnExpiresThatHasPassed() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/expired-lm?lm_age=10000&expires_delta=-10"
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.requestCount("/r/expired-lm") == 2)
    }

    /// Each malformed Expires, sent with a Last-Modified that would otherwise
    /// give a heuristic lifetime: already expired, so the second use revalidates.
    @Test(arguments: [
        "Sun 06 Nov 2044 08:49:37 GMT",       // missing comma
        "Sun,  06 Nov 2044 08:49:37 GMT",     // extra space
        "Sun, 06 Nov 2044 08:49:37 UTC",      // wrong time zone
        "Sun, 06 Nov 2044 08:49:37 +0000",
        "Sun, 06 Nov 44 08:49:37 GMT",        // two-digit year in IMF-fixdate
        "0",
    ])
    func aMalformedExpiresMeansAlreadyExpired(expires: String) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/malformed?lm_age=10000&expires=" + HTTPFixture.query(expires)
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.requestCount("/r/malformed") == 2)
    }

    @Test(arguments: ["Sun, 06 Nov 2044 08:49:37 GMT", "sun, 06 nov 2044 08:49:37 gmt", "SUNDAY, 06-NOV-44 08:49:37 GMT", "sun nov  6 08:49:37 2044"])
    func aValidExpiresInAnyLetterCaseKeepsTheResponseFresh(expires: String) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/valid-expires?expires=" + HTTPFixture.query(expires)
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .cache)
        #expect(try await f.server.requestCount("/r/valid-expires") == 1)
    }

    @Test func twoExpiresLinesMeanStale() async throws {
        // RFC 9111 section 4.2.1: with two Expires, use the first or consider the
        // response stale; Foundation joins the lines, so this cache does the latter.
        let f = try HTTPFixture()
        defer { f.stop() }
        let date = HTTPFixture.query("Expires:Sun, 06 Nov 2044 08:49:37 GMT")
        let path = "/r/two-expires?etag=auto&header=\(date)&header=\(date)"
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .revalidated)
    }

    @Test func ofTwoCacheControlLinesTheFirstMaxAgeCounts() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/two-cc?header=Cache-Control:max-age%3D60&header=Cache-Control:max-age%3D0"
        _ = try await f.get(path)
        try await f.advance(by: 30)
        #expect(try await f.get(path).source == .cache)
        #expect(try await f.server.requestCount("/r/two-cc") == 1)
    }

    /// RFC 9111 section 5.1: an `Age` that is not delta-seconds is ignored,
    /// so the response is fresh for its `max-age`, validator or not.
    @Test(arguments: ["old, 0", "-7200", "7200.5"])
    func anInvalidAgeIsIgnoredAndTheResponseIsFresh(age: String) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        for (path, validator) in [("/r/bad-age", "&etag=auto"), ("/r/bad-age-plain", "")] {
            let url = "\(path)?cc=max-age%3D3600\(validator)&age=" + HTTPFixture.query(age)
            _ = try await f.get(url)
            try await f.advance(by: 30)
            #expect(try await f.get(url).source == .cache, "\(path), Age: \(age)")
            #expect(try await f.server.requestCount(path) == 1)
        }
    }

    @Test func anAgeWhoseFirstMemberIsValidCounts() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/age-list?cc=max-age%3D60&age=" + HTTPFixture.query("50, old")
        _ = try await f.get(path)
        try await f.advance(by: 5)
        #expect(try await f.get(path).source == .cache)
        try await f.advance(by: 6)
        #expect(try await f.get(path).source == .network)
    }

    @Test func aFreshImmutableResponseSkipsTheRevalidationOfAReload() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let immutable = "/r/immutable?cc=max-age%3D60,%20immutable&etag=auto"
        let mutable = "/r/mutable?cc=max-age%3D60&etag=auto"
        _ = try await f.get(immutable)
        _ = try await f.get(mutable)
        try await f.advance(by: 5)
        let reload = ["Cache-Control": "max-age=0"]
        #expect(try await f.get(immutable, fields: reload).source == .cache)
        #expect(try await f.get(mutable, fields: reload).source == .revalidated)
        // A forced reload still asks.
        #expect(try await f.get(immutable, fields: ["Cache-Control": "no-cache"]).source == .revalidated)
    }

    @Test func aStaleImmutableResponseIsRevalidated() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/immutable-stale?cc=max-age%3D60,%20immutable&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 61)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.stats("/r/immutable-stale").last["if-none-match"] == "\"v1\"")
    }

    @Test func heuristicFreshnessWhenEnabledIsAFractionOfTheLastModifiedAgeWithinItsLimit() async throws {
        let f = try HTTPFixture(policy: CachePolicy(heuristicFreshness: .fractionOfAge(0.1, limit: .seconds(500))))
        defer { f.stop() }
        // 10 % of 10,000 s is 1,000 s, capped at 500 s.
        let path = "/r/heuristic?lm_age=10000"
        _ = try await f.get(path)
        try await f.advance(by: 490)
        #expect(try await f.get(path).source == .cache)
        try await f.advance(by: 12)
        #expect(try await f.get(path).source == .revalidated)
        #expect(try await f.server.requestCount("/r/heuristic") == 2)
    }
}
