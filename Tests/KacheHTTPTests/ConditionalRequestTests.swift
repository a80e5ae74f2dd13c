import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A caller's own `If-None-Match` and `If-Modified-Since` (a browser behind a
/// gateway, or an app that keeps its own copy), answered by the cache from its
/// stored response (RFC 9111 section 4.3.2), in both roles.
@Suite struct ConditionalRequestTests {
    static let roles: [CachePolicy.Role] = [.private, .shared]

    func fixture(_ role: CachePolicy.Role, transport: Transport = .urlSession) throws -> HTTPFixture {
        try HTTPFixture(policy: CachePolicy(role: role), transport: transport)
    }

    @Test(arguments: roles, Transport.allCases)
    func aFreshStoredResponseAnswersAMatchingIfNoneMatchWithA304(role: CachePolicy.Role, over transport: Transport) async throws {
        let f = try fixture(role, transport: transport)
        defer { f.stop() }
        let path = "/r/inm?cc=max-age%3D60&etag=auto&expires_delta=60&vary=X-Nothing&content_location=%2Fr%2Fother&header=X-Extra%3Ayes"
        let first = try await f.get(path)
        #expect(first.response.statusCode == 200)
        try await f.advance(by: 5)

        let answer = try await f.get(path, fields: ["If-None-Match": #""v1""#])
        #expect(answer.response.statusCode == 304)
        #expect(answer.source == .cache)
        #expect(answer.data.isEmpty)
        // RFC 9110 section 15.4.5: the fields a 200 would have carried that a 304 must.
        for name in ["Cache-Control", "Content-Location", "Date", "ETag", "Expires", "Vary"] {
            #expect(answer.response.value(forHTTPHeaderField: name) == first.response.value(forHTTPHeaderField: name), "\(name)")
        }
        #expect(Int(answer.response.value(forHTTPHeaderField: "Age") ?? "") ?? 0 >= 5)
        // Representation metadata beyond those stays out (no Last-Modified is needed beside an ETag).
        #expect(answer.response.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(answer.response.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(answer.response.value(forHTTPHeaderField: "X-Extra") == nil)
        #expect(try await f.server.requestCount("/r/inm") == 1)
        #expect(f.client.statistics.bypassed == 0)
        #expect(f.client.statistics.freshHits == 1)
    }

    /// RFC 9110 section 13.1.2: weak comparison, a list, `*` for any current representation.
    @Test(arguments: [#""v1""#, #"W/"v1""#, #""x", "v1""#, #"W/"a,b", "v1""#, "*"])
    func ifNoneMatchComparesWeaklyAndTakesListsAndStar(field: String) async throws {
        for role in Self.roles {
            let f = try fixture(role)
            defer { f.stop() }
            let path = "/r/inm-forms?cc=max-age%3D60&etag=W%2F%22v1%22"
            _ = try await f.get(path)
            let answer = try await f.get(path, fields: ["If-None-Match": field])
            #expect(answer.response.statusCode == 304, "\(role) \(field)")
            #expect(try await f.server.requestCount("/r/inm-forms") == 1)
        }
    }

    @Test(arguments: roles, [#""v2""#, #""v1"x"#, "v1", ""])
    func aNonMatchingIfNoneMatchGetsTheStored200(role: CachePolicy.Role, field: String) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/inm-other?cc=max-age%3D60&etag=auto"
        let first = try await f.get(path)
        let answer = try await f.get(path, fields: ["If-None-Match": field])
        #expect(answer.response.statusCode == 200)
        #expect(answer.source == .cache)
        #expect(answer.data == first.data)
        #expect(try await f.server.requestCount("/r/inm-other") == 1)
    }

    @Test(arguments: roles)
    func ifModifiedSinceIsAnsweredFromTheStoredLastModified(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/ims?cc=max-age%3D60&lm_age=500"
        let first = try await f.get(path)
        let lastModifiedText = try #require(first.response.value(forHTTPHeaderField: "Last-Modified"))
        let lastModified = try #require(HTTPDate.parse(lastModifiedText))

        let same = try await f.get(path, fields: ["If-Modified-Since": lastModifiedText])
        #expect(same.response.statusCode == 304)
        #expect(same.response.value(forHTTPHeaderField: "Last-Modified") == lastModifiedText)  // no ETag: the validator it has
        let later = try await f.get(path, fields: ["If-Modified-Since": Self.httpDate(lastModified.addingTimeInterval(100))])
        #expect(later.response.statusCode == 304)
        let earlier = try await f.get(path, fields: ["If-Modified-Since": Self.httpDate(lastModified.addingTimeInterval(-1))])
        #expect(earlier.response.statusCode == 200)
        #expect(earlier.data == first.data)
        #expect(try await f.server.requestCount("/r/ims") == 1)
    }

    /// RFC 9111 section 4.3.2: without `Last-Modified`, the stored `Date` stands in.
    @Test(arguments: roles)
    func ifModifiedSinceWithoutLastModifiedComparesWithTheStoredDate(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/ims-date?cc=max-age%3D60"
        let first = try await f.get(path)
        let dateText = try #require(first.response.value(forHTTPHeaderField: "Date"))
        let date = try #require(HTTPDate.parse(dateText))
        #expect(try await f.get(path, fields: ["If-Modified-Since": dateText]).response.statusCode == 304)
        #expect(try await f.get(path, fields: ["If-Modified-Since": Self.httpDate(date.addingTimeInterval(-10))]).response.statusCode == 200)
    }

    /// RFC 9110 section 13.1.3: ignored beside `If-None-Match`, and when it is not a valid date.
    @Test(arguments: roles)
    func ifModifiedSinceIsIgnoredBesideIfNoneMatchAndWhenInvalid(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/ims-ignored?cc=max-age%3D60&lm_age=500&etag=auto"
        let first = try await f.get(path)
        let lastModified = try #require(first.response.value(forHTTPHeaderField: "Last-Modified"))
        let beside = try await f.get(path, fields: ["If-None-Match": #""other""#, "If-Modified-Since": lastModified])
        #expect(beside.response.statusCode == 200)
        let invalid = try await f.get(path, fields: ["If-Modified-Since": "yesterday"])
        #expect(invalid.response.statusCode == 200)
        #expect(invalid.source == .cache)
        #expect(try await f.server.requestCount("/r/ims-ignored") == 1)
    }

    /// A stale stored response is revalidated with the cache's own validators,
    /// never the caller's; the caller's are then evaluated against the result.
    @Test(arguments: roles, Transport.allCases)
    func aStaleResponseIsRevalidatedWithTheCachesValidatorsAndThenTheCallersAreEvaluated(
        role: CachePolicy.Role, over transport: Transport
    ) async throws {
        let f = try fixture(role, transport: transport)
        defer { f.stop() }
        let path = "/r/inm-stale?cc=max-age%3D10&etag=auto"
        let first = try await f.get(path)
        try await f.advance(by: 11)
        let other = try await f.get(path, fields: ["If-None-Match": #""v0""#])
        #expect(other.response.statusCode == 200)
        #expect(other.source == .revalidated)
        #expect(other.data == first.data)
        #expect(try await f.server.stats("/r/inm-stale").last["if-none-match"] == #""v1""#)

        try await f.advance(by: 11)
        let same = try await f.get(path, fields: ["If-None-Match": #""v1""#])
        #expect(same.response.statusCode == 304)
        #expect(same.source == .revalidated)
        #expect(try await f.server.requestCount("/r/inm-stale") == 3)
    }

    /// RFC 9111 section 4.3.2: a cache must not evaluate preconditions for a
    /// target it holds nothing for; they go to the server, whose `304` is passed on.
    @Test(arguments: roles, Transport.allCases)
    func onAMissTheCallersConditionalsGoToTheServerAndIts304IsPassedOn(role: CachePolicy.Role, over transport: Transport) async throws {
        let f = try fixture(role, transport: transport)
        defer { f.stop() }
        let path = "/r/inm-miss?cc=max-age%3D60&etag=auto"
        let answer = try await f.get(path, fields: ["If-None-Match": #""v1""#])
        #expect(answer.response.statusCode == 304)
        #expect(answer.source == .network)
        #expect(try await f.server.stats("/r/inm-miss").last["if-none-match"] == #""v1""#)
        #expect(f.client.statistics.stores == 0)
        // A full answer to a caller's conditional request is stored as usual.
        let changed = try await f.get(path, fields: ["If-None-Match": #""v0""#])
        #expect(changed.response.statusCode == 200)
        #expect(try await f.get(path).source == .cache)
        #expect(try await f.server.requestCount("/r/inm-miss") == 2)
    }

    @Test(arguments: roles)
    func aHEADWithAMatchingIfNoneMatchGetsA304FromTheStoredGET(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/inm-head?cc=max-age%3D60&etag=auto"
        _ = try await f.get(path)
        var head = URLRequest(url: f.server.url(path))
        head.httpMethod = "HEAD"
        head.setValue(#""v1""#, forHTTPHeaderField: "If-None-Match")
        let answer = try await f.client.response(for: head)
        #expect(answer.response.statusCode == 304)
        #expect(answer.source == .cache)
        #expect(try await f.server.requestCount("/r/inm-head") == 1)
    }

    /// RFC 9110 section 13.2.2: `If-None-Match` is evaluated before `Range`.
    @Test(arguments: roles)
    func aMatchingIfNoneMatchIsEvaluatedBeforeRange(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/inm-range?cc=max-age%3D60&etag=auto&fixed=100&ranges=1"
        _ = try await f.get(path)
        let matching = try await f.get(path, fields: ["Range": "bytes=0-9", "If-None-Match": #""v1""#])
        #expect(matching.response.statusCode == 304)
        #expect(matching.response.value(forHTTPHeaderField: "Content-Range") == nil)
        let other = try await f.get(path, fields: ["Range": "bytes=0-9", "If-None-Match": #""v0""#])
        #expect(other.response.statusCode == 206)
        #expect(other.data.count == 10)
        #expect(try await f.server.requestCount("/r/inm-range") == 1)
    }

    /// RFC 9110 section 13.2.1: preconditions don't apply when the answer would not be a 2xx.
    @Test(arguments: roles)
    func preconditionsAreIgnoredForAStoredResponseThatIsNotA2xx(role: CachePolicy.Role) async throws {
        let f = try fixture(role)
        defer { f.stop() }
        let path = "/r/inm-404?status=404&cc=max-age%3D60&etag=auto"
        _ = try await f.get(path)
        let answer = try await f.get(path, fields: ["If-None-Match": #""v1""#])
        #expect(answer.response.statusCode == 404)
        #expect(answer.source == .cache)
    }

    /// `If-Match` and `If-Unmodified-Since` are for the origin (RFC 9111 section
    /// 4.3.2), and `If-Range` stays with the server too: such a request goes out as it is.
    @Test(arguments: ["If-Match", "If-Unmodified-Since", "If-Range"])
    func preconditionsForTheOriginStillBypassTheCache(name: String) async throws {
        for role in Self.roles {
            let f = try fixture(role)
            defer { f.stop() }
            let path = "/r/origin-only?cc=max-age%3D60&etag=auto&lm_age=500&fixed=100&ranges=1"
            let first = try await f.get(path)
            let value = name == "If-Unmodified-Since" ? try #require(first.response.value(forHTTPHeaderField: "Last-Modified")) : #""v1""#
            var fields = [name: value]
            if name == "If-Range" { fields["Range"] = "bytes=0-9" }
            let answer = try await f.get(path, fields: fields)
            #expect(answer.source == .network)
            let stats = try await f.server.stats("/r/origin-only")
            #expect(stats.count == 2)
            #expect(stats.last[name.lowercased()] == value)
            #expect(f.client.statistics.bypassed == 1)
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
