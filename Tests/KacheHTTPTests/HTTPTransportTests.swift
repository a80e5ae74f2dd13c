import Foundation
import Kache
import Synchronization
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport seam, and what the default transport does with bodies it can't decode.
@Suite struct HTTPTransportTests {
    /// Another client, as a server-side user would plug in: here, one that
    /// counts and tags what it sends, over a session of its own.
    final class CountingTransport: HTTPTransport {
        let inner = URLSessionTransport(session: HTTPFixture.session())
        let sent = Mutex(0)

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            sent.withLock { $0 += 1 }
            var tagged = request
            tagged.setValue("counting", forHTTPHeaderField: "X-Transport")
            return try await inner.send(tagged)
        }

        var additionalHeaderFields: [String: String] { ["Accept-Language": "fr"] }
    }

    @Test func aPluggedTransportCarriesEveryRequestAndTheCacheWorksOverIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let cache = try Kache(inMemory: Kache.Configuration(clock: ManualClock(Date())))
        let transport = CountingTransport()
        let client = CachingClient(cache: cache, transport: transport)
        #expect(client.session == nil)
        let url = server.url("/r/plugged?cc=max-age%3D60&etag=auto&vary=Accept-Language")
        #expect(try await client.response(for: URLRequest(url: url)).source == .network)
        #expect(try await client.response(for: URLRequest(url: url)).source == .cache)
        // Its additional fields select the variant, as a session's would.
        var english = URLRequest(url: url)
        english.setValue("en", forHTTPHeaderField: "Accept-Language")
        #expect(try await client.response(for: english).source == .network)
        #expect(transport.sent.withLock { $0 } == 2)
        #expect(try await server.stats("/r/plugged").last["x-transport"] == "counting")
    }

    @Test func anUnknownContentEncodingIsAClearErrorAndNothingIsStored() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/encoded?cc=max-age%3D60&header=Content-Encoding:x-unheard-of"
        for _ in 0 ..< 2 {
            let error = await #expect(throws: HTTPTransportError.self) { try await f.get(path) }
            guard case let .undecodableContentEncoding(url, _)? = error else {
                Issue.record("expected undecodableContentEncoding, got \(String(describing: error))")
                return
            }
            #expect(url?.path == "/r/encoded")
            #expect(error?.description.contains("Content-Encoding") == true)
        }
        #expect(try await f.server.requestCount("/r/encoded") == 2)
        #expect(f.cache.statistics.entries == 0)
    }
}
