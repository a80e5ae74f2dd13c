import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CachePolicy.shared`: the rules RFC 9111 gives a shared cache, each checked
/// against the private default on the same server script, so that a rule
/// applied in the wrong mode fails too.
@Suite struct SharedCacheTests {
    static let cdn: CachePolicy = {
        var policy = CachePolicy.shared
        policy.targetedCacheControlFields = ["CDN-Cache-Control"]
        return policy
    }()

    /// Two requests for `path` through a client of `policy`; the second's source.
    func secondSource(_ path: String, policy: CachePolicy, fields: [String: String] = [:], advance: Int = 0) async throws -> CachingClient.Source {
        let f = try HTTPFixture(policy: policy)
        defer { f.stop() }
        _ = try await f.get(path, fields: fields)
        if advance > 0 { try await f.advance(by: advance) }
        return try await f.get(path, fields: fields).source
    }

    func cc(_ value: String) -> String { "cc=" + HTTPFixture.query(value) }
    func header(_ name: String, _ value: String) -> String { "header=" + HTTPFixture.query("\(name):\(value)") }

    // MARK: - s-maxage and proxy-revalidate

    @Test func sharedMaxAgeWinsOverMaxAgeOnlyInSharedMode() async throws {
        let longer = "/r/s-longer?" + cc("max-age=0, s-maxage=600")
        #expect(try await secondSource(longer, policy: .shared, advance: 10) == .cache)
        #expect(try await secondSource(longer, policy: CachePolicy(), advance: 10) == .network)

        let shorter = "/r/s-shorter?" + cc("max-age=600, s-maxage=5")
        #expect(try await secondSource(shorter, policy: .shared, advance: 10) == .network)
        #expect(try await secondSource(shorter, policy: CachePolicy(), advance: 10) == .cache)
    }

    @Test func sharedMaxAgeWinsOverAPastExpiresInSharedMode() async throws {
        let path = "/r/s-expires?expires_delta=-10&" + cc("s-maxage=600")
        #expect(try await secondSource(path, policy: .shared, advance: 10) == .cache)
        #expect(try await secondSource(path, policy: CachePolicy(), advance: 10) == .network)
    }

    /// `s-maxage` carries `proxy-revalidate` (RFC 9111 section 5.2.2.10): once
    /// stale, a shared cache must not serve the response on an error.
    @Test func sharedMaxAgeForbidsServingStaleOnErrorOnlyInSharedMode() async throws {
        let path = "/r/s-stale?fail_after=1&" + cc("max-age=10, s-maxage=10, stale-if-error=600")
        let shared = try await secondSource(path, policy: .shared, advance: 20)
        #expect(shared == .network)
        #expect(try await secondSource(path, policy: CachePolicy(), advance: 20) == .staleOnError)
    }

    @Test func proxyRevalidateActsAsMustRevalidateOnlyInSharedMode() async throws {
        let path = "/r/proxy-revalidate?fail_after=1&" + cc("max-age=10, proxy-revalidate, stale-if-error=600")
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        _ = try await f.get(path)
        try await f.advance(by: 20)
        let failed = try await f.get(path)
        #expect(failed.source == .network)
        #expect(failed.response.statusCode == 503)
        #expect(try await secondSource(path, policy: CachePolicy(), advance: 20) == .staleOnError)
    }

    // MARK: - private

    @Test func privateResponseIsStoredInPrivateModeButNotInSharedMode() async throws {
        let path = "/r/private?" + cc("private, max-age=60")
        #expect(try await secondSource(path, policy: CachePolicy()) == .cache)
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .network)
        #expect(f.client.statistics.stores == 0)
        #expect(try await f.server.requestCount("/r/private") == 2)
    }

    /// RFC 9111 section 5.2.2.7: a shared cache must not store the named
    /// fields, and may store the rest; the requester of the first response still gets them.
    @Test func qualifiedPrivateFieldsAreLeftOutOfTheSharedCopyOnly() async throws {
        let path = "/r/private-field?" + cc(#"private="X-User", max-age=60"#) + "&" + header("X-User", "alice") + "&" + header("X-Public", "yes")
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        let first = try await f.get(path)
        #expect(first.response.value(forHTTPHeaderField: "X-User") == "alice")
        let reused = try await f.get(path)
        #expect(reused.source == .cache)
        #expect(reused.response.value(forHTTPHeaderField: "X-User") == nil)
        #expect(reused.response.value(forHTTPHeaderField: "X-Public") == "yes")

        let p = try HTTPFixture()
        defer { p.stop() }
        _ = try await p.get(path)
        let own = try await p.get(path)
        #expect(own.source == .cache)
        #expect(own.response.value(forHTTPHeaderField: "X-User") == "alice")
    }

    /// A field the cache's own decisions read can't be left out; the response is not stored.
    @Test func qualifiedPrivateNamingCacheControlIsNotStoredInSharedMode() async throws {
        let path = "/r/private-cc?" + cc(#"private="Cache-Control", max-age=60"#)
        #expect(try await secondSource(path, policy: .shared) == .network)
        #expect(try await secondSource(path, policy: CachePolicy()) == .cache)
    }

    // MARK: - Authorization

    @Test func authorizedRequestIsNeitherStoredNorServedInSharedModeWithoutPermission() async throws {
        let path = "/r/auth?" + cc("max-age=60")
        let alice = ["Authorization": "Bearer alice"]
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        _ = try await f.get(path, fields: alice)
        #expect(try await f.get(path, fields: alice).source == .network)
        #expect(f.client.statistics.stores == 0)
        // A response stored for an anonymous request is not served to an authorized one either.
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .cache)
        #expect(try await f.get(path, fields: alice).source == .network)
        #expect(try await f.server.requestCount("/r/auth") == 4)
        // They are cacheable GETs that went to the network: misses, not bypasses.
        #expect(f.client.statistics.misses == 4)
        #expect(f.client.statistics.bypassed == 0)

        #expect(try await secondSource(path, policy: CachePolicy(), fields: alice) == .cache)
    }

    @Test(arguments: ["public, max-age=60", "must-revalidate, max-age=60", "s-maxage=60"])
    func authorizedResponseIsSharedWhenTheResponseAllowsIt(directives: String) async throws {
        let path = "/r/auth-allowed?" + cc(directives)
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        _ = try await f.get(path, fields: ["Authorization": "Bearer alice"])
        #expect(try await f.get(path, fields: ["Authorization": "Bearer bob"]).source == .cache)
        #expect(try await f.get(path).source == .cache)
        #expect(try await f.server.requestCount("/r/auth-allowed") == 1)
    }

    @Test func proxyRevalidateDoesNotAllowSharingAnAuthorizedResponse() async throws {
        let path = "/r/auth-proxy?" + cc("proxy-revalidate, max-age=60")
        #expect(try await secondSource(path, policy: .shared, fields: ["Authorization": "Bearer alice"]) == .network)
    }

    // MARK: - CDN-Cache-Control (RFC 9213)

    @Test func targetedFieldReplacesCacheControlOnlyWhenTheCacheIsTargeted() async throws {
        let longer = "/r/cdn-longer?" + cc("max-age=1") + "&" + header("CDN-Cache-Control", "max-age=600")
        #expect(try await secondSource(longer, policy: Self.cdn, advance: 10) == .cache)
        #expect(try await secondSource(longer, policy: .shared, advance: 10) == .network)

        let noStore = "/r/cdn-no-store?" + cc("max-age=600") + "&" + header("CDN-Cache-Control", "no-store")
        #expect(try await secondSource(noStore, policy: Self.cdn) == .network)
        #expect(try await secondSource(noStore, policy: .shared) == .cache)

        // CDN-Cache-Control: private keeps a targeted shared cache out, whatever Cache-Control says.
        let privateCDN = "/r/cdn-private?" + cc("max-age=600") + "&" + header("CDN-Cache-Control", "private")
        #expect(try await secondSource(privateCDN, policy: Self.cdn) == .network)
    }

    @Test func targetedFieldOverridesExpiresToo() async throws {
        let path = "/r/cdn-expires?expires_delta=600&" + header("CDN-Cache-Control", "public")
        #expect(try await secondSource(path, policy: Self.cdn, advance: 10) == .network)
        #expect(try await secondSource(path, policy: .shared, advance: 10) == .cache)
    }

    @Test(arguments: ["max-age=600, &&&", "MaX-aGe=600", "max-age =600", ""])
    func invalidTargetedFieldIsIgnored(cdnValue: String) async throws {
        let path = "/r/cdn-invalid?" + cc("max-age=5") + "&" + header("CDN-Cache-Control", cdnValue)
        // Cache-Control decides: stale after 5 s, where a valid max-age=600 would keep it fresh.
        #expect(try await secondSource(path, policy: Self.cdn, advance: 10) == .network)
        #expect(try await secondSource(path, policy: Self.cdn, advance: 1) == .cache)
    }

    // MARK: - Via (RFC 9110 section 7.6.3)

    static func via(_ role: CachePolicy.Role, _ pseudonym: String? = "kache") -> CachePolicy {
        var policy = CachePolicy(role: role)
        policy.viaPseudonym = pseudonym
        return policy
    }

    @Test(arguments: Transport.allCases)
    func viaIsAddedToRequestsAndResponsesOnlyByANamedSharedCache(over transport: Transport) async throws {
        let path = "/r/via?" + cc("max-age=60")
        let f = try HTTPFixture(policy: Self.via(.shared), transport: transport)
        defer { f.stop() }
        let miss = try await f.get(path)
        #expect(miss.response.value(forHTTPHeaderField: "Via") == "1.1 kache")
        #expect(try await f.server.stats("/r/via").last["via"] == "1.1 kache")
        let hit = try await f.get(path)
        #expect(hit.source == .cache)
        #expect(hit.response.value(forHTTPHeaderField: "Via") == "1.1 kache")

        for policy in [Self.via(.private), Self.via(.shared, nil), Self.via(.shared, "two words")] {
            let other = try HTTPFixture(policy: policy, transport: transport)
            defer { other.stop() }
            #expect(try await other.get(path).response.value(forHTTPHeaderField: "Via") == nil)
            #expect(try await other.server.stats("/r/via").last["via"] == nil)
        }
    }

    @Test func viaIsAppendedToTheViaOfTheRequestAndOfTheResponse() async throws {
        let path = "/r/via-chain?" + cc("max-age=60") + "&" + header("Via", "1.1 origin-balancer")
        let f = try HTTPFixture(policy: Self.via(.shared))
        defer { f.stop() }
        let answer = try await f.get(path, fields: ["Via": "1.0 downstream"])
        #expect(answer.response.value(forHTTPHeaderField: "Via") == "1.1 origin-balancer, 1.1 kache")
        #expect(try await f.server.stats("/r/via-chain").last["via"] == "1.0 downstream, 1.1 kache")
        // The stored response keeps the server's Via alone: this cache's is added on the way out.
        #expect(try await f.get(path).response.value(forHTTPHeaderField: "Via") == "1.1 origin-balancer, 1.1 kache")
    }
}
