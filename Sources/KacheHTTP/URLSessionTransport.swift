import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default ``HTTPTransport``: a `URLSession` (on Linux,
/// `FoundationNetworking`'s, over libcurl).
///
/// ```swift
/// let transport = URLSessionTransport(session: CachingClient.makeSession(configuration: .ephemeral))
/// ```
public struct URLSessionTransport: HTTPTransport {
    /// The session requests go out through; it should have no `URLCache`.
    public let session: URLSession

    /// A transport over `session` (by default one made by ``CachingClient/makeSession(configuration:)``).
    public init(session: URLSession = CachingClient.makeSession()) {
        self.session = session
    }

    /// Sends `request` through the session.
    /// - Throws: ``HTTPTransportError/undecodableContentEncoding(url:detail:)``
    ///   when the body's `Content-Encoding` is one the session can't decode (on
    ///   Linux, libcurl knows gzip, deflate, br and zstd); ``HTTPTransportError/notHTTP(url:)``
    ///   for an answer that is not HTTP; otherwise the session's `URLError`.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError where URLSessionTransport.isContentDecodingFailure(error) {
            throw HTTPTransportError.undecodableContentEncoding(url: request.url, detail: URLSessionTransport.detail(of: error))
        }
        guard let http = response as? HTTPURLResponse else { throw HTTPTransportError.notHTTP(url: request.url) }
        return (data, http)
    }

    /// The session's additional header fields.
    public var additionalHeaderFields: [String: String] {
        var fields: [String: String] = [:]
        for (key, value) in session.configuration.httpAdditionalHeaders ?? [:] {
            if let name = key as? String { fields[name] = "\(value)" }
        }
        return fields
    }

    /// Apple's Foundation says `.cannotDecodeContentData`; FoundationNetworking
    /// passes libcurl's error on as `.unknown` with curl's message, which names
    /// the content encoding ("Unrecognized content encoding type", "Error while
    /// processing content unencoding").
    private static func isContentDecodingFailure(_ error: URLError) -> Bool {
        if error.code == .cannotDecodeContentData || error.code == .cannotDecodeRawData { return true }
        let text = detail(of: error).lowercased()
        return text.contains("content encoding") || text.contains("content unencoding")
    }

    private static func detail(of error: URLError) -> String {
        let underlying = (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.userInfo[NSLocalizedDescriptionKey] as? String
        return underlying ?? (error.userInfo[NSLocalizedDescriptionKey] as? String) ?? "\(error.code)"
    }
}
