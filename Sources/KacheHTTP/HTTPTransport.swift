import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``CachingClient`` reaches the network: one request in, one response
/// out. ``URLSessionTransport`` is the default; a server-side user can plug in
/// another HTTP client by conforming to this.
///
/// ```swift
/// struct LoggingTransport: HTTPTransport {
///     let inner = URLSessionTransport()
///     func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
///         print(request.url!)
///         return try await inner.send(request)
///     }
/// }
/// let client = CachingClient(cache: cache, transport: LoggingTransport())
/// ```
///
/// A transport must not cache by itself, and should report a failure to reach
/// the server, or an exchange the connection broke off, as
/// ``HTTPTransportError/network(url:detail:)``: that is what lets a stale
/// response stand in (`stale-if-error`). A `URLError` other than `.cancelled`
/// counts as such a failure too, so URLSession's errors reach the caller as
/// they are. Cancellation is `CancellationError` (or `URLError.cancelled`).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and the response, with the body
    /// already decoded of any `Content-Encoding` the transport applied for itself.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)

    /// Sends `request` and returns as soon as the status and header fields
    /// are in, with the body still to be read, chunk by chunk, as it arrives
    /// (``CachingClient/stream(for:)`` goes through it). The body is as
    /// ``send(_:)`` would return it; an error while it is read is reported as
    /// ``send(_:)`` reports one.
    ///
    /// Default: ``send(_:)``, its whole body then handed over as one chunk. A
    /// transport that can read a body in parts (`AsyncHTTPClientTransport`
    /// does) implements this, so that a large body never has to fit in memory.
    func stream(_ request: URLRequest) async throws -> (HTTPResponseBody, HTTPURLResponse)

    /// Header fields the transport adds to every request it sends (a
    /// session's `httpAdditionalHeaders`), so that `Vary` sees them. Default: none.
    var additionalHeaderFields: [String: String] { get }
}

extension HTTPTransport {
    /// None.
    public var additionalHeaderFields: [String: String] { [:] }

    /// ``send(_:)``, its whole body as one chunk.
    public func stream(_ request: URLRequest) async throws -> (HTTPResponseBody, HTTPURLResponse) {
        let (data, response) = try await send(request)
        return (HTTPResponseBody(data), response)
    }
}

/// Why a transport could not produce a usable response.
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The answer was not an HTTP response.
    case notHTTP(url: URL?)
    /// The body came in a `Content-Encoding` the transport cannot decode; it is
    /// neither returned nor stored.
    case undecodableContentEncoding(url: URL?, detail: String)
    /// The server could not be reached, or the connection failed (was closed,
    /// timed out) before a whole response arrived. A stale response may stand
    /// in for it (`stale-if-error`).
    case network(url: URL?, detail: String)
    /// The body is longer than the transport collects in memory for ``HTTPTransport/send(_:)``
    /// (``HTTPTransport/stream(_:)`` has no such limit).
    case bodyTooLarge(url: URL?, limit: Int)

    /// A sentence that says what went wrong, naming the URL when it is known.
    public var description: String {
        switch self {
        case let .notHTTP(url):
            return "The answer from \(url?.absoluteString ?? "the server") was not an HTTP response."
        case let .undecodableContentEncoding(url, detail):
            return "The response from \(url?.absoluteString ?? "the server") has a Content-Encoding that could not be decoded (\(detail))."
        case let .network(url, detail):
            return "The exchange with \(url?.absoluteString ?? "the server") failed before a whole response arrived (\(detail))."
        case let .bodyTooLarge(url, limit):
            return "The response from \(url?.absoluteString ?? "the server") has a body over the transport's limit of \(limit) bytes."
        }
    }

    /// Whether `error`, thrown by a transport, says the network failed: this
    /// type's ``network(url:detail:)``, or a `URLError` other than `.cancelled`.
    static func isNetworkFailure(_ error: any Error) -> Bool {
        if case .network? = error as? HTTPTransportError { return true }
        if let error = error as? URLError { return error.code != .cancelled }
        return false
    }
}
