import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request's own directives ask of the cache (RFC 9111 section 5.2.1),
/// and requests answered from a stored GET response other than a GET.
@Suite struct RequestDirectivesTests {
    @Test func maxStaleAcceptsAStaleResponseWithinItsBound() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        // The ETag keeps it stored once stale.
        let path = "/r/max-stale?cc=max-age%3D10&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 40)  // stale for 30 s
        #expect(try await f.get(path, fields: ["Cache-Control": "max-stale=60"]).source == .cache)
        #expect(try await f.get(path, fields: ["Cache-Control": "max-stale"]).source == .cache)
        #expect(try await f.get(path, fields: ["Cache-Control": "max-stale=20"]).source == .revalidated)
        #expect(try await f.server.requestCount("/r/max-stale") == 2)
    }

    @Test func maxStaleNeverOverridesMustRevalidate() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/max-stale-strict?cc=max-age%3D10,%20must-revalidate&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 40)
        #expect(try await f.get(path, fields: ["Cache-Control": "max-stale"]).source == .revalidated)
    }

    @Test func minFreshAsksForFreshnessLeftOver() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/min-fresh?cc=max-age%3D60"
        _ = try await f.get(path)
        try await f.advance(by: 30)  // 30 s of freshness left
        #expect(try await f.get(path, fields: ["Cache-Control": "min-fresh=20"]).source == .cache)
        #expect(try await f.get(path, fields: ["Cache-Control": "min-fresh=40"]).source == .network)
    }

    @Test func onlyIfCachedNeverReachesTheNetwork() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/offline?cc=max-age%3D60"
        let missing = try await f.get(path, fields: ["Cache-Control": "only-if-cached"])
        #expect(missing.response.statusCode == 504)
        #expect(try await f.server.requestCount("/r/offline") == 0)
        _ = try await f.get(path)
        let stored = try await f.get(path, fields: ["Cache-Control": "only-if-cached"])
        #expect(stored.response.statusCode == 200)
        #expect(stored.source == .cache)
        #expect(try await f.server.requestCount("/r/offline") == 1)
    }

    @Test func pragmaNoCacheCountsOnlyWithoutCacheControl() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/pragma?cc=max-age%3D60&etag=auto"
        _ = try await f.get(path)
        #expect(try await f.get(path, fields: ["Pragma": "no-cache"]).source == .revalidated)
        #expect(try await f.get(path, fields: ["Pragma": "no-cache", "Cache-Control": "max-age=600"]).source == .cache)
    }

    @Test func aHeadRequestIsAnsweredFromTheStoredGETResponse() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/head?cc=max-age%3D60&header=X-Kind:stored"
        _ = try await f.get(path)
        var head = URLRequest(url: f.server.url(path))
        head.httpMethod = "HEAD"
        let answer = try await f.client.response(for: head)
        #expect(answer.source == .cache)
        #expect(answer.data.isEmpty)
        #expect(answer.response.statusCode == 200)
        #expect(answer.response.value(forHTTPHeaderField: "X-Kind") == "stored")
        #expect(try await f.server.requestCount("/r/head") == 1)
        // Without a stored response it goes to the server, and stores nothing.
        var other = URLRequest(url: f.server.url("/r/head-only?cc=max-age%3D60"))
        other.httpMethod = "HEAD"
        #expect(try await f.client.response(for: other).source == .network)
        #expect(try await f.get("/r/head-only?cc=max-age%3D60").source == .network)
    }

    @Test func anUnsafeRequestAlsoInvalidatesItsLocationAndContentLocationOnTheSameOrigin() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let list = "/r/list?cc=max-age%3D60"
        let item = "/r/item?cc=max-age%3D60"
        _ = try await f.get(list)
        _ = try await f.get(item)
        var post = URLRequest(url: f.server.url("/r/create?header=Location:" + HTTPFixture.query(list)
            + "&header=Content-Location:" + HTTPFixture.query(f.server.url(item).absoluteString)))
        post.httpMethod = "POST"
        _ = try await f.client.response(for: post)
        #expect(try await f.get(list).source == .network)
        #expect(try await f.get(item).source == .network)
    }
}
