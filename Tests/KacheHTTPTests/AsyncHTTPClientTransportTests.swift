import AsyncHTTPClient
import Foundation
import Kache
import NIOCore
import NIOHTTP1
import Testing
@testable import KacheHTTP
@testable import KacheHTTPAsyncHTTPClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The AsyncHTTPClient transport: what it hands the cache, and how its
/// failures read. The rules themselves run over both transports in the suites
/// of each rule (`@Test(arguments: Transport.allCases)`).
@Suite struct AsyncHTTPClientTransportTests {
    /// URLSession can't decode `x-unknown` and fails the request
    /// (`HTTPTransportTests.anUnknownContentEncodingIsAClearErrorAndNothingIsStored`);
    /// this transport never decodes, so the body and its encoding are kept as received.
    @Test func aContentEncodingNobodyHereKnowsIsStoredAsReceived() async throws {
        let f = try HTTPFixture(transport: .asyncHTTPClient)
        defer { f.stop() }
        let path = "/r/unknown-encoding?cc=max-age%3D60&header=Content-Encoding:x-unknown"
        let first = try await f.get(path)
        #expect(first.source == .network)
        #expect(HTTPFixture.text(first) == "path=/r/unknown-encoding count=1 version=1")
        let stored = try await f.get(path)
        #expect(stored.source == .cache)
        #expect(stored.data == first.data)
        #expect(stored.response.value(forHTTPHeaderField: "Content-Encoding") == "x-unknown")
        #expect(try await f.server.requestCount("/r/unknown-encoding") == 1)
    }

    /// A gzip body stays gzip: the stored bytes are the server's, under its `Content-Encoding`.
    @Test func aGzipBodyIsStoredAsReceivedNotDecoded() async throws {
        let f = try HTTPFixture(transport: .asyncHTTPClient)
        defer { f.stop() }
        let path = "/r/gzip?cc=max-age%3D60&gzip=1"
        let first = try await f.get(path)
        #expect(Array(first.data.prefix(2)) == [0x1F, 0x8B])
        let stored = try await f.get(path)
        #expect(stored.source == .cache)
        #expect(stored.data == first.data)
        #expect(stored.response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }

    /// The caller sees the fields as they arrived, `Transfer-Encoding` among
    /// them; the cache stores none of the hop-by-hop ones.
    @Test func transferEncodingAndOtherHopByHopFieldsAreNotStored() async throws {
        let f = try HTTPFixture(transport: .asyncHTTPClient)
        defer { f.stop() }
        let path = "/r/chunked?cc=max-age%3D60&chunked=1&header=Connection:X-Per-Hop&header=X-Per-Hop:1"
            + "&header=Keep-Alive:timeout%3D5&header=X-Kept:2"
        let first = try await f.get(path)
        #expect(first.response.value(forHTTPHeaderField: "Transfer-Encoding") == "chunked")
        #expect(first.response.value(forHTTPHeaderField: "X-Per-Hop") == "1")
        #expect(HTTPFixture.text(first) == "path=/r/chunked count=1 version=1")
        let stored = try await f.get(path)
        #expect(stored.source == .cache)
        #expect(stored.data == first.data)
        #expect(stored.response.value(forHTTPHeaderField: "X-Kept") == "2")
        for name in ["Transfer-Encoding", "Connection", "Keep-Alive", "X-Per-Hop"] {
            #expect(stored.response.value(forHTTPHeaderField: name) == nil, "\(name) was stored")
        }
    }

    /// A field sent twice reaches the cache as one, its values in the order received.
    @Test func repeatedFieldsAreCombinedInTheOrderReceived() async throws {
        let f = try HTTPFixture(transport: .asyncHTTPClient)
        defer { f.stop() }
        let path = "/r/repeated?cc=max-age%3D60&header=X-Multi:a&header=x-multi:b&header=X-Multi:c"
        #expect(try await f.get(path).response.value(forHTTPHeaderField: "X-Multi") == "a, b, c")
        #expect(try await f.get(path).response.value(forHTTPHeaderField: "X-Multi") == "a, b, c")

        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "Vary", value: "Accept")
        headers.add(name: "set-cookie", value: "b=2")
        #expect(AsyncHTTPClientTransport.combined(headers) == ["Set-Cookie": "a=1, b=2", "Vary": "Accept"])
    }

    /// The conformance suite's `stale-close-must-revalidate` and
    /// `stale-close-no-cache`: a stale response is revalidated over a
    /// connection the server closes after each answer (`Connection: close`);
    /// when the server then closes the connection without answering, that is
    /// a network failure, and the stale response is not served in its place.
    @Test(arguments: Transport.allCases, ["must-revalidate", "no-cache"])
    func aConnectionClosedWithoutAnAnswerFailsAndNeverServesAForbiddenStaleResponse(over transport: Transport, directive: String) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/close-\(directive)?cc=max-age%3D2,%20\(directive),%20stale-if-error%3D60&etag=auto&disconnect_after=2"
        let first = try await f.get(path)
        #expect(first.response.value(forHTTPHeaderField: "Connection") == "close")
        try await f.advance(by: 3)
        #expect(try await f.get(path).source == .revalidated)
        try await f.advance(by: 3)
        await #expect { try await f.get(path) } throws: { HTTPTransportError.isNetworkFailure($0) }
        #expect(try await f.server.requestCount("/r/close-\(directive)") == 3)
        #expect(f.client.statistics.staleOnError == 0)
    }

    /// The suite's `stale-sie-close`: without a directive that forbids it, a
    /// connection closed without an answer lets the stale response stand in.
    @Test(arguments: Transport.allCases)
    func aConnectionClosedWithoutAnAnswerLetsAStaleResponseStandIn(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/close-sie?cc=max-age%3D2,%20stale-if-error%3D60&disconnect_after=1"
        let first = try await f.get(path)
        try await f.advance(by: 3)
        let stale = try await f.get(path)
        #expect(stale.source == .staleOnError)
        #expect(stale.data == first.data)
        #expect(try await f.server.requestCount("/r/close-sie") == 2)
    }

    /// A server that is not there at all is a network failure too.
    @Test func anUnreachableServerIsANetworkFailure() async throws {
        let server = try TestServer()
        let url = server.url("/r/gone")
        server.stop()
        let error = await #expect(throws: HTTPTransportError.self) {
            try await AsyncHTTPClientTransport(client: HTTPFixture.httpClient).send(URLRequest(url: url))
        }
        guard case let .network(failed, _)? = error else {
            Issue.record("expected .network, got \(String(describing: error))")
            return
        }
        #expect(failed == url)
    }

    /// `send` collects bodies whole, up to the limit; a longer one fails the
    /// request and nothing is stored (`StreamingTests` streams them instead).
    @Test func aBodyOverTheLimitFailsTheRequest() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let cache = try Kache(inMemory: Kache.Configuration(clock: ManualClock(Date())))
        let client = CachingClient(cache: cache, transport: AsyncHTTPClientTransport(client: HTTPFixture.httpClient, maximumBodySize: 1000))
        let small = try await client.response(for: URLRequest(url: server.url("/r/small?cc=max-age%3D60&size=1000")))
        #expect(small.data.count == 1000)
        let error = await #expect(throws: HTTPTransportError.self) {
            try await client.response(for: URLRequest(url: server.url("/r/large?cc=max-age%3D60&size=1001")))
        }
        #expect(error == .bodyTooLarge(url: server.url("/r/large?cc=max-age%3D60&size=1001"), limit: 1000))
        #expect(cache.statistics.entries == 1)
    }

    /// `stream` hands the body over in the chunks it arrives in, as received
    /// (gzip stays gzip), past `maximumBodySize`.
    @Test func aStreamedBodyArrivesInChunksAsReceived() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let transport = AsyncHTTPClientTransport(client: HTTPFixture.streamingHTTPClient, maximumBodySize: 1000)
        let (body, response) = try await transport.stream(URLRequest(url: server.url("/r/streamed?fixed=200000&gzip=1")))
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        var received = Data()
        for try await chunk in body {
            received.append(chunk)
        }
        #expect(Array(received.prefix(2)) == [0x1F, 0x8B])
        #expect(received.count == Int(response.value(forHTTPHeaderField: "Content-Length") ?? ""))

        let (plain, _) = try await transport.stream(URLRequest(url: server.url("/r/streamed-plain?fixed=200000")))
        var chunks: [Data] = []
        for try await chunk in plain { chunks.append(chunk) }
        #expect(chunks.count > 1)
        #expect(chunks.reduce(0) { $0 + $1.count } == 200_000)
    }

    /// How AsyncHTTPClient's errors read to the cache.
    @Test func errorsAreMappedToWhatTheCacheActsOn() {
        let url = URL(string: "http://127.0.0.1:1/x")!
        func mapped(_ error: any Error) -> any Error { AsyncHTTPClientTransport.transportError(error, url: url, limit: 10) }
        for failure in [HTTPClientError.remoteConnectionClosed, .connectTimeout, .readTimeout, .deadlineExceeded] {
            #expect(HTTPTransportError.isNetworkFailure(mapped(failure)), "\(failure)")
        }
        #expect(HTTPTransportError.isNetworkFailure(mapped(ChannelError.ioOnClosedChannel)))
        #expect(mapped(HTTPClientError.invalidURL) as? HTTPClientError == .invalidURL)
        #expect(mapped(HTTPClientError.alreadyShutdown) as? HTTPClientError == .alreadyShutdown)
        #expect(mapped(HTTPClientError.cancelled) is CancellationError)
        #expect(mapped(CancellationError()) is CancellationError)
        #expect(mapped(NIOTooManyBytesError(maxBytes: 10)) as? HTTPTransportError == .bodyTooLarge(url: url, limit: 10))
    }

    /// The default transport's shared client does not decompress (AsyncHTTPClient's
    /// own `HTTPClient.shared` would).
    @Test func theSharedClientNeverDecompresses() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (data, response) = try await AsyncHTTPClientTransport().send(URLRequest(url: server.url("/r/shared?gzip=1")))
        #expect(Array(data.prefix(2)) == [0x1F, 0x8B])
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }

    /// `makeClient` turns decompression off whatever the configuration passed says.
    @Test func aClientMadeForTheTransportNeverDecompresses() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.decompression = .enabled(limit: .none)
        let http = AsyncHTTPClientTransport.makeClient(configuration: configuration)
        let server = try TestServer()
        defer { server.stop() }
        let (data, response) = try await AsyncHTTPClientTransport(client: http).send(URLRequest(url: server.url("/r/made?gzip=1")))
        try await http.shutdown()
        #expect(Array(data.prefix(2)) == [0x1F, 0x8B])
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }
}
