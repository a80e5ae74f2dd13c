import Foundation
import Kache
@testable import KacheHTTP
import AsyncHTTPClient
import KacheHTTPAsyncHTTPClient
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transports a test can run over: `@Test(arguments: Transport.allCases)`
/// runs it once over each.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case asyncHTTPClient

    var testDescription: String { rawValue }
}

/// A running test server, a cache on a manual clock set to the real time (the
/// server's `Date` fields are real), and a client over both, through a
/// ``Transport`` (URLSession by default).
///
/// ```swift
/// let fixture = try HTTPFixture()
/// defer { fixture.stop() }
/// _ = try await fixture.get("/r/a?cc=max-age%3D60")
/// try await fixture.advance(by: 61)
/// ```
struct HTTPFixture {
    let server: TestServer
    let clock: ManualClock
    let cache: Kache
    let client: CachingClient
    let directory: URL?

    /// - Parameters:
    ///   - onDisk: a cache directory in `sync` durability (removed by ``stop()``),
    ///     else an in-memory cache.
    ///   - clockOffset: how far the client's clock is from the server's (both
    ///     stand at about the real time of the fixture's start, and move only by `advance`).
    ///   - policy: the client's policy; `makePolicy` builds it from the cache (for a Pool).
    ///   - transport: how the client reaches the server.
    init(
        onDisk: Bool = false, clockOffset: Duration = .zero,
        policy: CachePolicy = CachePolicy(), makePolicy: ((Kache) throws -> CachePolicy)? = nil,
        transport: Transport = .urlSession
    ) throws {
        server = try TestServer()
        clock = ManualClock(Date())
        clock.advance(by: clockOffset)
        do {
            if onDisk {
                let directory = FileManager.default.temporaryDirectory
                    .appendingPathComponent("kache-http-test-\(UUID().uuidString.prefix(8))", isDirectory: true)
                self.directory = directory
                cache = try Kache(directory: directory, configuration: Kache.Configuration(durability: .sync, clock: clock))
            } else {
                directory = nil
                cache = try Kache(inMemory: Kache.Configuration(clock: clock))
            }
            let policy = try makePolicy?(cache) ?? policy
            switch transport {
            case .urlSession:
                client = CachingClient(cache: cache, session: HTTPFixture.session(), policy: policy)
            case .asyncHTTPClient:
                client = CachingClient(cache: cache, transport: AsyncHTTPClientTransport(client: HTTPFixture.httpClient), policy: policy)
            }
        } catch {
            server.stop()
            throw error
        }
    }

    /// A session without URLCache and with short timeouts: everything is local.
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        return CachingClient.makeSession(configuration: configuration)
    }

    /// The AsyncHTTPClient of the tests: as the transport's shared client, but
    /// failing at once when a connection is refused (the tests stop servers on
    /// purpose) instead of retrying until the connect timeout. Never shut down.
    static let httpClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(10))
        return AsyncHTTPClientTransport.makeClient(configuration: configuration)
    }()

    /// ``httpClient`` without a read timeout, for tests that read a body in
    /// many chunks. AsyncHTTPClient reads a streamed body only as its reader
    /// asks, and its read timeout runs while the reader does not ask: with the
    /// whole suite running, a test's task can wait minutes for a thread
    /// (tests that block one, TestServer's start among them; a fresh-clone CI
    /// run saw a 200,000-byte body time out after 2 minutes). A server that
    /// stops sending still ends the read: the test server closes the
    /// connection when it exits, after 30 s idle or with the test process.
    static let streamingHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(5), read: nil)
        return AsyncHTTPClientTransport.makeClient(configuration: configuration)
    }()

    /// Moves time forward for both sides: the client's clock and the server's
    /// `Date`, as real time would.
    func advance(by seconds: Int) async throws {
        clock.advance(by: .seconds(seconds))
        try await server.advance(by: seconds)
    }

    /// Whole seconds of real time since `start`, rounded up: what the
    /// fixture's clocks moved on by, beside what a test advanced them. A
    /// loaded machine can take seconds over a request, so a test widens an
    /// age or a TTL it expects by this much.
    static func realSeconds(since start: Date) -> Int {
        Int(Date().timeIntervalSince(start).rounded(.up))
    }

    /// A GET of `pathAndQuery` through the client.
    func get(_ pathAndQuery: String, fields: [String: String] = [:]) async throws -> CachingClient.Response {
        var request = URLRequest(url: server.url(pathAndQuery))
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return try await client.response(for: request)
    }

    /// `value` percent-encoded for a query parameter of the test server.
    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    /// The body as text.
    static func text(_ response: CachingClient.Response) -> String {
        String(decoding: response.data, as: UTF8.self)
    }

    /// Every regular file in the cache directory except its bookkeeping
    /// (`lock`, `manifest`, `dirty`): entry files in `objects/`, and anything
    /// being written in `tmp/` or moved to `quarantine/`.
    func entryFiles() -> [String] {
        guard let directory else { return [] }
        let bookkeeping: Set<String> = ["lock", "manifest", "dirty"]
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return walker.compactMap { item -> String? in
            guard let url = item as? URL, !bookkeeping.contains(url.lastPathComponent),
                  (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
            else { return nil }
            return url.path
        }
    }

    /// Stops the server and removes the cache directory.
    func stop() {
        server.stop()
        try? cache.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}
