import AsyncHTTPClient
import Foundation
import KacheHTTP
import NIOCore
import NIOHTTP1
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPTransport`` over swift-server's AsyncHTTPClient: for servers,
/// gateways and Linux, where URLSession is FoundationNetworking's libcurl.
///
/// ```swift
/// let client = CachingClient(cache: cache, transport: AsyncHTTPClientTransport())
/// ```
///
/// It hands the cache the response as it arrived: the status, every header
/// field (a repeated one combined with commas, as ``HTTPTransport`` expects)
/// and the body, never decoded, so `Content-Encoding` is stored as received
/// and a body in an encoding nobody here knows still reaches the cache.
/// `Transfer-Encoding` and the other hop-by-hop fields are passed on too; the
/// cache leaves them out of what it stores.
///
/// **The client and who shuts it down.** By default the transport uses
/// ``sharedClient``, a process-wide `HTTPClient` made with `decompression:
/// .disabled` that lives as long as the process and is never shut down. A
/// client from ``makeClient(configuration:eventLoopGroup:)``, or one of your
/// own, is yours: shut it down (`try await client.shutdown()`) after the
/// last request of every transport that uses it. The transport never shuts a
/// client down. Don't pass `HTTPClient.shared`: it decompresses gzip and
/// deflate bodies, and the cache would store decoded bytes under the
/// server's `Content-Encoding`.
///
/// **Bodies, whole or streamed.** ``send(_:)`` (behind
/// ``CachingClient/response(for:)`` and ``CachingClient/data(for:)``)
/// collects the body in memory, up to ``maximumBodySize`` bytes; a longer
/// one fails the request with ``HTTPTransportError/bodyTooLarge(url:limit:)``.
/// ``stream(_:)`` (behind ``CachingClient/stream(for:)``) hands the body over
/// chunk by chunk as it arrives, whatever its length.
///
/// **Errors.** A failure to connect, a timeout, or a connection the server
/// closes before a whole response arrived is
/// ``HTTPTransportError/network(url:detail:)``, which is what lets a stale
/// response stand in (`stale-if-error`); cancellation is `CancellationError`;
/// AsyncHTTPClient's errors about the request itself (an invalid URL, a
/// client already shut down, a redirect loop) pass through as they are.
///
/// Redirects are followed as the client's configuration says (the shared
/// client follows up to 20); the final response is the one returned, and its
/// URL the response's.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The client requests go through.
    public let client: HTTPClient
    /// The longest body ``send(_:)`` collects, in bytes; ``stream(_:)`` has no limit.
    public let maximumBodySize: Int

    /// The default of ``maximumBodySize``: 64 MiB.
    public static let defaultMaximumBodySize = 64 << 20

    /// A transport over `client` (by default ``sharedClient``), collecting
    /// bodies of up to `maximumBodySize` bytes. The client must not decompress
    /// (see ``makeClient(configuration:eventLoopGroup:)``); whoever made it
    /// shuts it down.
    public init(client: HTTPClient = AsyncHTTPClientTransport.sharedClient, maximumBodySize: Int = AsyncHTTPClientTransport.defaultMaximumBodySize) {
        self.client = client
        self.maximumBodySize = maximumBodySize
    }

    /// A process-wide client for caching transports: AsyncHTTPClient's
    /// browser-like defaults (`singletonConfiguration`) with decompression
    /// turned off and a connect timeout of 10 seconds instead of 90, on
    /// `HTTPClient.defaultEventLoopGroup`. It is never shut down.
    ///
    /// AsyncHTTPClient retries a failed connection attempt until the connect
    /// timeout; the shorter one lets `stale-if-error` answer for a server
    /// that is gone within seconds rather than minutes. A client that should
    /// fail at the first refused connection sets
    /// `connectionPool.retryConnectionEstablishment = false`.
    public static var sharedClient: HTTPClient { sharedHTTPClient }

    /// A new client for a caching transport: `configuration` with
    /// decompression turned off, whatever it said. The caller owns it and shuts
    /// it down after the last request (`try await client.shutdown()`).
    ///
    /// ```swift
    /// var configuration = HTTPClient.Configuration()
    /// configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
    /// let http = AsyncHTTPClientTransport.makeClient(configuration: configuration)
    /// defer { try? http.syncShutdown() }
    /// let client = CachingClient(cache: cache, transport: AsyncHTTPClientTransport(client: http))
    /// ```
    public static func makeClient(
        configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
        eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup
    ) -> HTTPClient {
        var configuration = configuration
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }

    /// Sends `request` (its method, header fields, and body: `httpBody`, or
    /// `httpBodyStream` read whole first) with the request's
    /// `timeoutInterval` as the deadline of the whole exchange, body included,
    /// and collects the body, up to ``maximumBodySize`` bytes.
    /// - Throws: ``HTTPTransportError/network(url:detail:)`` when the server
    ///   can't be reached or the exchange breaks off;
    ///   ``HTTPTransportError/bodyTooLarge(url:limit:)``; `CancellationError`;
    ///   AsyncHTTPClient's errors about the request itself.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (response, http, url) = try await execute(request)
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maximumBodySize)
        } catch {
            throw AsyncHTTPClientTransport.transportError(error, url: url, limit: maximumBodySize)
        }
        return (Data(body.readableBytesView), http)
    }

    /// Sends `request` as ``send(_:)`` does, and returns once the status and
    /// header fields are in; the body is read from the connection as its
    /// reader asks for it, never collected, so ``maximumBodySize`` does not
    /// apply. The request's `timeoutInterval` is still the deadline of the
    /// whole exchange, reading included.
    ///
    /// AsyncHTTPClient reads from the connection only as the reader asks for
    /// chunks, and its read timeout (`configuration.timeout.read`) runs while
    /// the reader does not ask: a reader that pauses longer than that between
    /// chunks gets ``HTTPTransportError/network(url:detail:)`` (`readTimeout`).
    ///
    /// An error while the body is read reads as one from ``send(_:)``: a
    /// connection that broke off is ``HTTPTransportError/network(url:detail:)``,
    /// cancellation `CancellationError`. A reader that stops early ends the exchange.
    /// - Throws: as ``send(_:)``, except ``HTTPTransportError/bodyTooLarge(url:limit:)``.
    public func stream(_ request: URLRequest) async throws -> (HTTPResponseBody, HTTPURLResponse) {
        let (response, http, url) = try await execute(request)
        return (HTTPResponseBody(ReceivedChunks(body: response.body, url: url)), http)
    }

    /// Sends `request` and waits for the status and header fields.
    /// - Returns: AsyncHTTPClient's response, with its body still to be read;
    ///   the status and fields as Foundation's response; the request's URL.
    private func execute(_ request: URLRequest) async throws -> (HTTPClientResponse, HTTPURLResponse, URL) {
        guard let url = request.url else { throw HTTPTransportError.notHTTP(url: nil) }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            outgoing.headers.add(name: name, value: value)
        }
        if let body = request.httpBody ?? request.httpBodyStream.map(AsyncHTTPClientTransport.read) {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        // Clamped to a day, so that an infinite or huge interval does not overflow the nanoseconds.
        let seconds = request.timeoutInterval.isFinite ? min(max(request.timeoutInterval, 0), 86_400) : 86_400
        let deadline = NIODeadline.now() + .nanoseconds(Int64(seconds * 1e9))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, deadline: deadline)
        } catch {
            throw AsyncHTTPClientTransport.transportError(error, url: url, limit: maximumBodySize)
        }
        let version = "HTTP/\(response.version.major).\(response.version.minor)"
        guard let http = HTTPURLResponse(
            url: response.url ?? url, statusCode: Int(response.status.code), httpVersion: version,
            headerFields: AsyncHTTPClientTransport.combined(response.headers)
        ) else { throw HTTPTransportError.notHTTP(url: url) }
        return (response, http, url)
    }

    /// The whole of a request's body stream.
    private static func read(_ stream: InputStream) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        stream.open()
        defer { stream.close() }
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }

    /// The fields as Foundation takes them: one entry per name (the first
    /// spelling seen), the values of a repeated field joined with `, ` in
    /// the order received (RFC 9110 section 5.3).
    static func combined(_ headers: HTTPHeaders) -> [String: String] {
        var spelling: [String: String] = [:]
        var fields: [String: String] = [:]
        for (name, value) in headers {
            let lowercased = name.lowercased()
            if let first = spelling[lowercased] {
                fields[first]! += ", " + value
            } else {
                spelling[lowercased] = name
                fields[name] = value
            }
        }
        return fields
    }

    /// The error the cache sees for `error` from AsyncHTTPClient.
    static func transportError(_ error: any Error, url: URL, limit: Int) -> any Error {
        if error is CancellationError || (error as? HTTPClientError) == .cancelled { return CancellationError() }
        if error is NIOTooManyBytesError { return HTTPTransportError.bodyTooLarge(url: url, limit: limit) }
        if let error = error as? HTTPClientError {
            guard networkFailures.contains(error) else { return error }
        }
        return HTTPTransportError.network(url: url, detail: String(describing: error))
    }

    /// AsyncHTTPClient's errors that say the exchange with the server failed,
    /// rather than that the request could not be made. Errors of other types
    /// (NIO's connection errors, a response that does not parse, TLS) are
    /// network failures too.
    static let networkFailures: [HTTPClientError] = [
        .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .remoteConnectionClosed, .uncleanShutdown,
        .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout, .getConnectionFromPoolTimeout,
        .invalidProxyResponse,
    ]
}

/// AsyncHTTPClient's body as the cache reads it: each `ByteBuffer` as
/// `Data`, and an error while reading as ``AsyncHTTPClientTransport/send(_:)``
/// reports it.
private struct ReceivedChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: HTTPClientResponse.Body
    let url: URL

    struct AsyncIterator: AsyncIteratorProtocol {
        var buffers: HTTPClientResponse.Body.AsyncIterator
        let url: URL

        mutating func next() async throws -> Data? {
            do {
                guard let buffer = try await buffers.next() else { return nil }
                return Data(buffer.readableBytesView)
            } catch {
                // No limit applies while streaming, so the limit reported is never read.
                throw AsyncHTTPClientTransport.transportError(error, url: url, limit: 0)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffers: body.makeAsyncIterator(), url: url)
    }
}

/// The client behind ``AsyncHTTPClientTransport/sharedClient``; a global,
/// so it is never deinitialised and needs no shutdown.
private let sharedHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration.singletonConfiguration
    configuration.decompression = .disabled
    configuration.timeout.connect = .seconds(10)
    return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
}()
