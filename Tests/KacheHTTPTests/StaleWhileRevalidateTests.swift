import Foundation
import Kache
import Testing
@testable import KacheHTTP

/// `stale-while-revalidate` (RFC 5861): stale at once, revalidated behind.
@Suite struct StaleWhileRevalidateTests {
    @Test(arguments: Transport.allCases) func withinTheWindowTheStaleResponseComesAtOnceAndIsRevalidatedBehind(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/swr?cc=max-age%3D10,%20stale-while-revalidate%3D60&etag=auto"
        let first = try await f.get(path)
        try await f.advance(by: 30)
        let stale = try await f.get(path)
        #expect(stale.source == .staleWhileRevalidating)
        #expect(stale.data == first.data)
        await f.client.waitForBackgroundRevalidations()
        let stats = try await f.server.stats("/r/swr")
        #expect(stats.count == 2)
        #expect(stats.last["if-none-match"] == "\"v1\"")
        // The 304 made it fresh again.
        #expect(try await f.get(path).source == .cache)
        #expect(f.client.statistics.staleWhileRevalidating == 1)
        #expect(f.client.statistics.revalidations == 1)
    }

    @Test func aChangedRepresentationFromTheBackgroundReplacesTheStoredOne() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/swr-change?cc=max-age%3D10,%20stale-while-revalidate%3D60&etag=auto"
        _ = try await f.get(path)
        try await f.server.bump("/r/swr-change")
        try await f.advance(by: 20)
        #expect(HTTPFixture.text(try await f.get(path)).contains("version=1"))
        await f.client.waitForBackgroundRevalidations()
        let next = try await f.get(path)
        #expect(next.source == .cache)
        #expect(HTTPFixture.text(next).contains("version=2"))
    }

    @Test func afterTheWindowTheResponseIsNeverServedStale() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/swr-late?cc=max-age%3D10,%20stale-while-revalidate%3D60&etag=auto&fail_after=1"
        _ = try await f.get(path)
        try await f.advance(by: 71)
        let late = try await f.get(path)
        #expect(late.source == .network)
        #expect(late.response.statusCode == 503)
        #expect(f.client.statistics.staleWhileRevalidating == 0)
    }

    @Test func mustRevalidateForbidsIt() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/swr-strict?cc=max-age%3D10,%20stale-while-revalidate%3D60,%20must-revalidate&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 20)
        #expect(try await f.get(path).source == .revalidated)
    }

    @Test func onlyOneRevalidationPerKeyRunsAtATime() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        // Revalidations take half a second at the server; three stale answers come first.
        let path = "/r/swr-once?cc=max-age%3D10,%20stale-while-revalidate%3D60&etag=auto&delay_after_first=0.5"
        _ = try await f.get(path)
        try await f.advance(by: 20)
        for _ in 0 ..< 3 {
            #expect(try await f.get(path).source == .staleWhileRevalidating)
        }
        await f.client.waitForBackgroundRevalidations()
        #expect(try await f.server.requestCount("/r/swr-once") == 2)
        #expect(try await f.get(path).source == .cache)
    }
}
