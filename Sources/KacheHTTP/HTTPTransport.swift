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
/// the server as a `URLError` (other than `.cancelled`): that is what lets a
/// stale response stand in (`stale-if-error`).
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and the response, with the body
    /// already decoded of any `Content-Encoding` the transport applied for itself.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)

    /// Header fields the transport adds to every request it sends (a
    /// session's `httpAdditionalHeaders`), so that `Vary` sees them. Default: none.
    var additionalHeaderFields: [String: String] { get }
}

extension HTTPTransport {
    /// None.
    public var additionalHeaderFields: [String: String] { [:] }
}

/// Why a transport could not produce a usable response.
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The answer was not an HTTP response.
    case notHTTP(url: URL?)
    /// The body came in a `Content-Encoding` the transport cannot decode; it is
    /// neither returned nor stored.
    case undecodableContentEncoding(url: URL?, detail: String)

    public var description: String {
        switch self {
        case let .notHTTP(url):
            return "The answer from \(url?.absoluteString ?? "the server") was not an HTTP response."
        case let .undecodableContentEncoding(url, detail):
            return "The response from \(url?.absoluteString ?? "the server") has a Content-Encoding that could not be decoded (\(detail))."
        }
    }
}
