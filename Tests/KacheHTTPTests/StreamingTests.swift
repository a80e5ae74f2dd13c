import Foundation
import Kache
import KacheHTTPAsyncHTTPClient
import Synchronization
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CachingClient.stream(for:)`: a body passes through chunk by chunk, and is
/// stored only when it was read whole and fits what the cache stores.
@Suite struct StreamingTests {
    /// What the cache stores in these tests: 64 KiB a value.
    static let limit = 64 << 10

    /// A test server and a client over `transport`, on an in-memory cache
    /// that stores values of up to ``limit`` bytes. The AsyncHTTPClient
    /// transport collects at most 1000 bytes for `send`, so that a stream that
    /// went through `send` instead of `stream` fails.
    struct Setup {
        let server: TestServer
        let cache: Kache
        let client: CachingClient

        init(_ transport: Transport = .asyncHTTPClient) throws {
            server = try TestServer()
            cache = try Kache(inMemory: Kache.Configuration(maximumValueSize: StreamingTests.limit, clock: ManualClock(Date())))
            switch transport {
            case .urlSession:
                client = CachingClient(cache: cache, session: HTTPFixture.session())
            case .asyncHTTPClient:
                client = CachingClient(
                    cache: cache, transport: AsyncHTTPClientTransport(client: HTTPFixture.streamingHTTPClient, maximumBodySize: 1000)
                )
            }
        }

        func stream(_ pathAndQuery: String) async throws -> CachingClient.StreamingResponse {
            try await client.stream(for: URLRequest(url: server.url(pathAndQuery)))
        }

        func stop() {
            server.stop()
            try? cache.close()
        }
    }

    /// The test server's `fixed=N` body.
    static func fixed(_ count: Int) -> Data {
        Data((0 ..< count).map { UInt8(65 + ($0 * 7) % 26) })
    }

    /// The chunks of `body`, read to the end.
    static func chunks(of body: HTTPResponseBody) async throws -> [Data] {
        var chunks: [Data] = []
        for try await chunk in body {
            chunks.append(chunk)
        }
        return chunks
    }

    @Test func aBodyLongerThanTheCacheStoresArrivesWholeAndIsNotStored() async throws {
        let s = try Setup()
        defer { s.stop() }
        let path = "/r/long?cc=max-age%3D60&fixed=200000"
        let answer = try await s.stream(path)
        #expect(answer.source == .network)
        let chunks = try await StreamingTests.chunks(of: answer.body)
        #expect(chunks.count > 1)
        #expect(Data(chunks.joined()) == StreamingTests.fixed(200_000))
        #expect(s.client.statistics.tooLargeToStore == 1)
        #expect(s.client.statistics.stores == 0)
        #expect(s.cache.statistics.entries == 0)

        let again = try await s.stream(path)
        #expect(again.source == .network)
        #expect(try await again.body.collected().count == 200_000)
        #expect(try await s.server.requestCount("/r/long") == 2)
    }

    /// Over both transports: URLSession's is the default, one chunk from `send`.
    @Test(arguments: Transport.allCases)
    func aBodyWithinTheLimitIsStoredAtItsEndAndThenServedFromTheCache(over transport: Transport) async throws {
        let s = try Setup(transport)
        defer { s.stop() }
        let path = "/r/short?cc=max-age%3D60&fixed=30000"
        let answer = try await s.stream(path)
        #expect(answer.source == .network)
        var received = Data()
        for try await chunk in answer.body {
            // Nothing is stored before the body's end.
            #expect(s.cache.statistics.entries == 0)
            received.append(chunk)
        }
        #expect(received == StreamingTests.fixed(30000))
        #expect(s.client.statistics.stores == 1)

        let cached = try await s.stream(path)
        #expect(cached.source == .cache)
        #expect(try await StreamingTests.chunks(of: cached.body) == [StreamingTests.fixed(30000)])
        #expect(try await s.client.response(for: URLRequest(url: s.server.url(path))).source == .cache)
        #expect(try await s.server.requestCount("/r/short") == 1)
        #expect(s.client.statistics.tooLargeToStore == 0)
    }

    /// A body cut off after 10,000 of its 30,000 bytes: the reader gets the
    /// network error (from the body with AsyncHTTPClient, from `stream` itself
    /// with URLSession, which reads the body whole first) and nothing is stored.
    @Test(arguments: Transport.allCases)
    func aBodyCutOffMidwayIsNotStoredAndTheReaderGetsTheNetworkError(over transport: Transport) async throws {
        let s = try Setup(transport)
        defer { s.stop() }
        let path = "/r/cut?cc=max-age%3D60&fixed=30000&cut_after=10000"
        var received = 0
        var failure: (any Error)?
        do {
            let answer = try await s.stream(path)
            for try await chunk in answer.body {
                received += chunk.count
            }
        } catch {
            failure = error
        }
        #expect(failure.map(HTTPTransportError.isNetworkFailure) == true, "\(String(describing: failure))")
        #expect(received < 30000)
        if transport == .asyncHTTPClient {
            #expect(received == 10000)
        }
        #expect(s.client.statistics.stores == 0)
        #expect(s.cache.statistics.entries == 0)
        // Nothing answers from the cache: the next request goes to the server (and is cut off again).
        _ = try? await s.stream(path).body.collected()
        #expect(try await s.server.requestCount("/r/cut") == 2)
    }

    /// The reader takes the first chunk and leaves while the server holds the
    /// rest back; once it is let go, nothing reads it on the reader's behalf.
    @Test func aReaderThatStopsEarlyLeavesNothingStored() async throws {
        let s = try Setup()
        defer { s.stop() }
        let path = "/r/early?cc=max-age%3D60&fixed=30000&stall_after=1000"
        let answer = try await s.stream(path)
        for try await chunk in answer.body {
            #expect(!chunk.isEmpty)
            break
        }
        try await s.server.release("/r/early")
        // A body read to its end in the background would be stored by now.
        try await Task.sleep(for: .seconds(2))
        #expect(s.client.statistics.stores == 0)
        #expect(s.cache.statistics.entries == 0)
        #expect(try await s.stream(path).source == .network)
    }

    /// A reader cancelled while the server holds the body back gets
    /// `CancellationError`, and nothing is stored.
    @Test func aCancelledReaderLeavesNothingStored() async throws {
        let s = try Setup()
        defer { s.stop() }
        let path = "/r/cancelled?cc=max-age%3D60&fixed=30000&stall_after=1000"
        let firstChunk = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            let answer = try await s.stream(path)
            var received = 0
            for try await chunk in answer.body {
                received += chunk.count
                firstChunk.continuation.yield()
            }
            return received
        }
        for await _ in firstChunk.stream { break }
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        try await s.server.release("/r/cancelled")
        try await Task.sleep(for: .seconds(2))
        #expect(s.client.statistics.stores == 0)
        #expect(s.cache.statistics.entries == 0)
    }

    /// A response that was stored and then outgrew the limit: the stored one,
    /// outdated, is removed while the new body passes through.
    @Test func aStoredResponseIsRemovedWhenItsNewVersionIsTooLongToStore() async throws {
        let s = try Setup()
        defer { s.stop() }
        // Version 1 has a short body, stored; version 2, which the stored
        // one's revalidation (max-age=0) gets, a long one.
        let path = "/r/grows?cc=max-age%3D0&etag=auto&fixed=1000&fixed_v2=100000"
        _ = try await s.stream(path).body.collected()
        #expect(s.client.statistics.stores == 1)
        #expect(s.cache.statistics.entries == 1)
        try await s.server.bump("/r/grows")
        let answer = try await s.stream(path)
        #expect(answer.source == .network)
        #expect(try await answer.body.collected().count == 100_000)
        #expect(s.client.statistics.tooLargeToStore == 1)
        #expect(s.cache.statistics.entries == 0)
    }

    /// After an error, the body is over: a reader that goes on can't make a
    /// cut-off body look whole to the cache.
    @Test func aBodyThatFailedNeverReachesTheCacheEvenIfReadOn() async throws {
        struct Broken: Error {}
        let calls = Mutex(0)
        let upstream = HTTPResponseBody(makeNext: { {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            switch call {
            case 1: return Data("part".utf8)
            case 2: throw Broken()
            default: return nil
            }
        } })
        let kept = Mutex<[Data?]>([])
        let body = BodyKeeper.body(upstream, limit: 100, keep: { data in
            kept.withLock { $0.append(data) }
            return nil
        })
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("part".utf8))
        await #expect(throws: Broken.self) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(kept.withLock { $0 }.isEmpty)
    }
}
