import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `Cache-Status` field (RFC 9211), sent when the policy names the cache.
@Suite struct CacheStatusTests {
    static let roles: [CachePolicy.Role] = [.private, .shared]

    static func named(_ role: CachePolicy.Role, _ name: String = "kache") -> CachePolicy {
        var policy = CachePolicy(role: role)
        policy.cacheStatusName = name
        return policy
    }

    /// The members of a `Cache-Status` value, each a name and its parameters
    /// (`true` for a flag): enough for the values this cache and the test server write.
    static func members(_ response: CachingClient.Response) -> [(name: String, parameters: [String: String])] {
        guard let value = response.response.value(forHTTPHeaderField: "Cache-Status") else { return [] }
        return value.split(separator: ",").map { member in
            let parts = member.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            var parameters: [String: String] = [:]
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
                parameters[pair[0]] = pair.count == 2 ? pair[1] : "true"
            }
            return (parts[0], parameters)
        }
    }

    /// This cache's member: the last one.
    static func own(_ response: CachingClient.Response) throws -> [String: String] {
        let member = try #require(members(response).last)
        #expect(member.name == "kache")
        return member.parameters
    }

    @Test func noCacheStatusUnlessTheCacheIsNamed() async throws {
        let f = try HTTPFixture(policy: .shared)
        defer { f.stop() }
        let path = "/r/cs-off?cc=max-age%3D60"
        #expect(try await f.get(path).response.value(forHTTPHeaderField: "Cache-Status") == nil)
        #expect(try await f.get(path).response.value(forHTTPHeaderField: "Cache-Status") == nil)
    }

    @Test(arguments: roles, Transport.allCases)
    func aMissIsForwardedAndStoredThenAHitSaysItsTTL(role: CachePolicy.Role, over transport: Transport) async throws {
        let f = try HTTPFixture(policy: Self.named(role), transport: transport)
        defer { f.stop() }
        let path = "/r/cs-miss?cc=max-age%3D60"
        // The fixture's clocks run on in real time beside what a test
        // advances, and a loaded machine can take seconds over a request:
        // each range below is widened by the real seconds since the start.
        let start = Date()
        let miss = try Self.own(try await f.get(path))
        #expect(miss["fwd"] == "uri-miss")
        #expect(miss["fwd-status"] == "200")
        #expect(miss["stored"] == "true")
        #expect(miss["hit"] == nil)
        #expect((58 - HTTPFixture.realSeconds(since: start) ... 60).contains(Int(miss["ttl"] ?? "") ?? 0))

        try await f.advance(by: 10)
        let hit = try Self.own(try await f.get(path))
        #expect(hit["hit"] == "true")
        #expect(hit["fwd"] == nil)
        #expect((48 - HTTPFixture.realSeconds(since: start) ... 50).contains(Int(hit["ttl"] ?? "") ?? 0))
    }

    @Test(arguments: roles)
    func aRevalidationSaysStaleAnd304(role: CachePolicy.Role) async throws {
        let f = try HTTPFixture(policy: Self.named(role))
        defer { f.stop() }
        let path = "/r/cs-stale?cc=max-age%3D10&etag=auto"
        // Widened by the real seconds a loaded machine takes, as above.
        let start = Date()
        _ = try await f.get(path)
        try await f.advance(by: 11)
        let revalidated = try Self.own(try await f.get(path))
        #expect(revalidated["fwd"] == "stale")
        #expect(revalidated["fwd-status"] == "304")
        #expect(revalidated["stored"] == "true")
        #expect((9 - HTTPFixture.realSeconds(since: start) ... 10).contains(Int(revalidated["ttl"] ?? "") ?? 0))
    }

    @Test func aVariantNotStoredIsAVaryMiss() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        let path = "/r/cs-vary?cc=max-age%3D60&vary=Accept-Language"
        _ = try await f.get(path, fields: ["Accept-Language": "en"])
        #expect(try Self.own(try await f.get(path, fields: ["Accept-Language": "fr"]))["fwd"] == "vary-miss")
        #expect(try Self.own(try await f.get(path, fields: ["Accept-Language": "en"]))["hit"] == "true")
    }

    @Test func aFreshResponseTheRequestRefusesIsForwardedForTheRequest() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        let path = "/r/cs-request?cc=max-age%3D60"
        _ = try await f.get(path)
        let forced = try Self.own(try await f.get(path, fields: ["Cache-Control": "no-cache"]))
        #expect(forced["fwd"] == "request")
        #expect(forced["fwd-status"] == "200")
    }

    @Test func requestsTheCacheStaysOutOfSayBypassOrMethod() async throws {
        var policy = Self.named(.shared)
        policy.shouldCache = { !$0.path.hasPrefix("/live") }
        let f = try HTTPFixture(policy: policy)
        defer { f.stop() }
        let bypassed = try Self.own(try await f.get("/live/cs?cc=max-age%3D60"))
        #expect(bypassed["fwd"] == "bypass")
        #expect(bypassed["fwd-status"] == "200")
        #expect(bypassed["stored"] == nil)
        var post = URLRequest(url: f.server.url("/r/cs-post"))
        post.httpMethod = "POST"
        #expect(try Self.own(try await f.client.response(for: post))["fwd"] == "method")
    }

    @Test func aStaleResponseStandingInForAnErrorSaysStaleAndTheErrorStatus() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        let path = "/r/cs-error?fail_after=1&cc=max-age%3D10%2C%20stale-if-error%3D600"
        let start = Date()
        _ = try await f.get(path)
        try await f.advance(by: 30)
        let answer = try await f.get(path)
        #expect(answer.source == .staleOnError)
        let status = try Self.own(answer)
        #expect(status["fwd"] == "stale")
        #expect(status["fwd-status"] == "503")
        // max-age 10, 30 s later: 20 s stale, a second more for rounding
        // down, and the real seconds the requests took (2 once, with the whole suite running).
        #expect((-21 - HTTPFixture.realSeconds(since: start) ... -19).contains(Int(status["ttl"] ?? "") ?? 0))
    }

    @Test func aRequestThatSharedAnothersRequestSaysCollapsed() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        _ = try await f.get("/r/cs-collapsed?warm=1&delay_after_first=0.5")
        let path = "/r/cs-collapsed?cc=max-age%3D60&delay_after_first=0.5"
        let answers = try await withThrowingTaskGroup(of: CachingClient.Response.self) { group in
            for _ in 0 ..< 3 { group.addTask { try await f.get(path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let statuses = try answers.map(Self.own)
        #expect(statuses.filter { $0["collapsed"] == "true" }.count == 2)
        #expect(statuses.allSatisfy { $0["fwd"] == "uri-miss" })
    }

    /// RFC 9211 section 2: the member of the cache nearest the user comes last.
    @Test func theMemberFollowsThoseOfCachesNearerTheServer() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        let path = "/r/cs-upstream?cc=max-age%3D60&header=" + HTTPFixture.query("Cache-Status:origin-cache; hit; ttl=30")
        let members = Self.members(try await f.get(path))
        #expect(members.map(\.name) == ["origin-cache", "kache"])
        #expect(members.last?.parameters["fwd"] == "uri-miss")
    }

    @Test func aNameThatIsNoTokenGoesOutAsAString() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared, "Kache Gateway"))
        defer { f.stop() }
        let value = try await f.get("/r/cs-string?cc=max-age%3D60").response.value(forHTTPHeaderField: "Cache-Status")
        #expect(value?.hasPrefix(#""Kache Gateway";fwd=uri-miss"#) == true)
    }

    /// RFC 9211 section 2: a response the cache makes up has no member; a 304
    /// made from a stored response has one.
    @Test func onlyResponsesFromTheServerOrTheStoreCarryIt() async throws {
        let f = try HTTPFixture(policy: Self.named(.shared))
        defer { f.stop() }
        let timeout = try await f.get("/r/cs-504", fields: ["Cache-Control": "only-if-cached"])
        #expect(timeout.response.statusCode == 504)
        #expect(timeout.response.value(forHTTPHeaderField: "Cache-Status") == nil)
        let path = "/r/cs-304?cc=max-age%3D60&etag=auto"
        _ = try await f.get(path)
        let notModified = try await f.get(path, fields: ["If-None-Match": #""v1""#])
        #expect(notModified.response.statusCode == 304)
        #expect(try Self.own(notModified)["hit"] == "true")
    }
}
