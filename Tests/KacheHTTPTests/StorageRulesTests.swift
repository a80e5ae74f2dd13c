import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What is stored, where, and what removes it.
@Suite struct StorageRulesTests {
    @Test(arguments: Transport.allCases) func noStoreResponsesNeverReachTheDisk(over transport: Transport) async throws {
        let f = try HTTPFixture(onDisk: true, transport: transport)
        defer { f.stop() }
        for _ in 0 ..< 2 {
            #expect(try await f.get("/r/secret?cc=no-store,%20max-age%3D60&size=4000").source == .network)
        }
        // A request's own no-store keeps even a cacheable response out.
        _ = try await f.get("/r/private-request?cc=max-age%3D60", fields: ["Cache-Control": "no-store"])
        #expect(try await f.server.requestCount("/r/secret") == 2)
        #expect(f.entryFiles().isEmpty)
        #expect(f.cache.statistics.entries == 0)

        // The same check sees a stored response's record, in a segment file (a small one).
        _ = try await f.get("/r/public?cc=max-age%3D60")
        let files = f.entryFiles()
        #expect(files.count == 1)
        #expect(files.allSatisfy { $0.contains("/segments/") })
    }

    /// `must-understand` with a status this cache implements: its `no-store`
    /// is ignored and the response reused; with an unknown status, nothing is stored.
    @Test func mustUnderstandStoresAnUnderstoodStatusDespiteNoStore() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let understood = "/r/understood?cc=no-store,%20must-understand,%20max-age%3D60"
        _ = try await f.get(understood)
        #expect(try await f.get(understood).source == .cache)
        #expect(try await f.server.requestCount("/r/understood") == 1)
        let unknown = "/r/unknown-status?status=299&cc=must-understand,%20max-age%3D60"
        _ = try await f.get(unknown)
        #expect(try await f.get(unknown).source == .network)
        #expect(try await f.server.requestCount("/r/unknown-status") == 2)
    }

    @Test(arguments: [200, 201, 299, 400, 403, 500, 503])
    func everyStatusWithAnExplicitLifetimeIsReused(status: Int) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        for path in ["/r/status?status=\(status)&cc=max-age%3D60", "/r/status-expires?status=\(status)&expires_delta=60"] {
            let first = try await f.get(path)
            #expect(first.response.statusCode == status)
            let second = try await f.get(path)
            #expect(second.source == .cache)
            #expect(second.response.statusCode == status)
            #expect(second.data == first.data)
        }
        #expect(try await f.server.requestCount("/r/status") == 1)
        #expect(try await f.server.requestCount("/r/status-expires") == 1)
    }

    @Test(arguments: [(200, true), (203, true), (204, true), (300, true), (404, true), (405, true), (410, true),
                      (414, true), (501, true), (201, false), (400, false), (403, false), (500, false), (503, false)])
    func withoutAnExplicitLifetimeOnlyHeuristicallyCacheableStatusesAreReused(status: Int, reused: Bool) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/heuristic-status?status=\(status)&lm_age=10000"
        _ = try await f.get(path)
        let second = try await f.get(path)
        #expect(second.source == (reused ? .cache : .network))
        #expect(second.response.statusCode == status)
        #expect(try await f.server.requestCount("/r/heuristic-status") == (reused ? 1 : 2))
    }

    @Test func connectionAndHopByHopFieldsAreNotStoredButContentEncodingIs() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/fields?cc=max-age%3D60&header=Connection:X-Per-Hop&header=X-Per-Hop:1&header=Keep-Alive:timeout%3D5"
            + "&header=X-Kept:2&chunked=1&gzip=1"
        let first = try await f.get(path)
        #expect(HTTPFixture.text(first).hasPrefix("path=/r/fields"))  // URLSession decoded it
        #expect(first.response.value(forHTTPHeaderField: "Transfer-Encoding") != nil)
        #expect(first.response.value(forHTTPHeaderField: "X-Per-Hop") == "1")
        let stored = try await f.get(path)
        #expect(stored.source == .cache)
        #expect(stored.data == first.data)
        #expect(stored.response.value(forHTTPHeaderField: "X-Kept") == "2")
        #expect(stored.response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        for name in ["X-Per-Hop", "Keep-Alive", "Connection", "Transfer-Encoding"] {
            #expect(stored.response.value(forHTTPHeaderField: name) == nil, "\(name) was stored")
        }
    }

    @Test(arguments: Transport.allCases) func statusHeadersAndBodySurviveReopeningTheCache(over transport: Transport) async throws {
        let f = try HTTPFixture(onDisk: true, transport: transport)
        defer { f.stop() }
        let path = "/r/durable?status=404&cc=max-age%3D60&header=X-Kind:gone"
        let first = try await f.get(path)
        try await f.cache.close()

        let directory = try #require(f.directory)
        let reopened = try Kache(directory: directory, configuration: Kache.Configuration(durability: .sync, clock: f.clock))
        defer { try? reopened.close() }
        let client = CachingClient(cache: reopened, session: HTTPFixture.session())
        let (data, response) = try await client.data(from: f.server.url(path))
        #expect(client.statistics.freshHits == 1)
        #expect(data == first.data)
        #expect(response.statusCode == 404)
        #expect(response.value(forHTTPHeaderField: "X-Kind") == "gone")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(try await f.server.requestCount("/r/durable") == 1)
    }

    @Test(arguments: Transport.allCases) func aSuccessfulUnsafeRequestRemovesTheStoredResponse(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/resource?cc=max-age%3D60"
        _ = try await f.get(path)
        #expect(try await f.get(path).source == .cache)

        var post = URLRequest(url: f.server.url(path))
        post.httpMethod = "POST"
        post.httpBody = Data("change".utf8)
        let (_, response) = try await f.client.data(for: post)
        #expect(response.statusCode == 200)
        #expect(try await f.server.requestCount("/r/resource") == 2)

        #expect(try await f.get(path).source == .network)
        #expect(try await f.server.requestCount("/r/resource") == 3)
    }

    @Test(arguments: Transport.allCases) func aPOSTResponseForItsOwnURLWithALifetimeAnswersALaterGET(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        func post(_ path: String) async throws -> CachingClient.Response {
            var request = URLRequest(url: f.server.url(path))
            request.httpMethod = "POST"
            request.httpBody = Data("new".utf8)
            return try await f.client.response(for: request)
        }
        let path = "/r/posted?cc=max-age%3D60&content_location=self"
        let posted = try await post(path)
        let get = try await f.get(path)
        #expect(get.source == .cache)
        #expect(get.data == posted.data)
        #expect(try await f.server.requestCount("/r/posted") == 1)

        // Without a lifetime of its own, or naming another URL, it is not stored.
        let noLifetime = "/r/posted-plain?content_location=self&lm_age=10000"
        _ = try await post(noLifetime)
        #expect(try await f.get(noLifetime).source == .network)
        let elsewhere = "/r/posted-elsewhere?cc=max-age%3D60&content_location=/r/other"
        _ = try await post(elsewhere)
        #expect(try await f.get(elsewhere).source == .network)
    }

    @Test(arguments: Transport.allCases) func aResponseThatMayNotBeStoredRemovesTheStoredOne(over transport: Transport) async throws {
        // Version 1 may be served stale for 10 minutes; version 2 says no-store.
        // After version 2 arrives, a failing server must not bring version 1 back.
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/flip?cc=max-age%3D10,%20stale-if-error%3D600&cc_v2=no-store&fail_after=2"
        _ = try await f.get(path)
        try await f.advance(by: 11)
        try await f.server.bump("/r/flip")
        let second = try await f.get(path)
        #expect(second.source == .network)
        #expect(HTTPFixture.text(second).contains("version=2"))
        let third = try await f.get(path)
        #expect(third.source == .network)
        #expect(third.response.statusCode == 503)
    }
}
