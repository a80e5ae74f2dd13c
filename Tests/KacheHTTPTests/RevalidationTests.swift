import Foundation
import Kache
import Testing
@testable import KacheHTTP

/// Conditional requests with the stored validators, and what a `304` does.
@Suite struct RevalidationTests {
    @Test(arguments: Transport.allCases) func a304RefreshesHeadersAndLifetimeWithoutDownloadingTheBody(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/etag?cc=max-age%3D60&etag=auto&size=5000"
        let first = try await f.get(path)
        #expect(first.response.value(forHTTPHeaderField: "X-Request-Count") == "1")

        try await f.advance(by: 61)
        let second = try await f.get(path)
        #expect(second.source == .revalidated)
        #expect(second.data == first.data)  // the stored body, not a new one
        #expect(second.response.value(forHTTPHeaderField: "X-Request-Count") == "2")  // the 304's field
        let stats = try await f.server.stats("/r/etag")
        #expect(stats.count == 2)
        #expect(stats.last["if-none-match"] == "\"v1\"")

        // The 304 gave it another 60 s.
        try await f.advance(by: 50)
        let third = try await f.get(path)
        #expect(third.source == .cache)
        #expect(third.response.value(forHTTPHeaderField: "X-Request-Count") == "2")
        #expect(try await f.server.requestCount("/r/etag") == 2)

        let counters = f.client.statistics
        #expect(counters.revalidations == 1)
        #expect(counters.freshHits == 1)
        #expect(counters.misses == 1)
        #expect(counters.bytesSaved == 2 * UInt64(first.data.count))
        #expect(first.data.count >= 5000)
    }

    @Test(arguments: Transport.allCases) func lastModifiedIsRevalidatedWithIfModifiedSince(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/lm?cc=max-age%3D10&lm_age=500"
        let first = try await f.get(path)
        let lastModified = try #require(first.response.value(forHTTPHeaderField: "Last-Modified"))
        try await f.advance(by: 11)
        let second = try await f.get(path)
        #expect(second.source == .revalidated)
        #expect(second.data == first.data)
        let stats = try await f.server.stats("/r/lm")
        #expect(stats.count == 2)
        #expect(stats.last["if-modified-since"] == lastModified)
        #expect(stats.last["if-none-match"] == nil)
    }

    @Test func noCacheIsStoredButRevalidatedOnEveryUse() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/no-cache?cc=no-cache&etag=auto"
        let first = try await f.get(path)
        for round in 2 ... 3 {
            let again = try await f.get(path)
            #expect(again.source == .revalidated)
            #expect(again.data == first.data)
            let stats = try await f.server.stats("/r/no-cache")
            #expect(stats.count == round)
            #expect(stats.last["if-none-match"] == "\"v1\"")
        }
    }

    @Test func noCacheWithoutAValidatorIsNotKept() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/no-cache-plain?cc=no-cache")
        let second = try await f.get("/r/no-cache-plain?cc=no-cache")
        #expect(second.source == .network)
        #expect(try await f.server.stats("/r/no-cache-plain").last["if-none-match"] == nil)
    }

    @Test(arguments: Transport.allCases) func aChangedRepresentationReplacesTheStoredOne(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/changing?cc=max-age%3D10&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 11)
        try await f.server.bump("/r/changing")
        let changed = try await f.get(path)
        #expect(changed.source == .network)
        #expect(HTTPFixture.text(changed).contains("version=2"))
        #expect(try await f.server.stats("/r/changing").last["if-none-match"] == "\"v1\"")

        try await f.advance(by: 11)
        let revalidated = try await f.get(path)
        #expect(revalidated.source == .revalidated)
        #expect(HTTPFixture.text(revalidated).contains("version=2"))
        #expect(try await f.server.stats("/r/changing").last["if-none-match"] == "\"v2\"")
    }

    @Test func aRequestWithNoCacheRevalidatesEvenAFreshResponse() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/forced?cc=max-age%3D60&etag=auto"
        _ = try await f.get(path)
        let forced = try await f.get(path, fields: ["Cache-Control": "no-cache"])
        #expect(forced.source == .revalidated)
        #expect(try await f.server.requestCount("/r/forced") == 2)
    }
}
