import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CachingClient {
    /// A response whose body is read as it arrives, from ``stream(for:)``.
    public struct StreamingResponse: Sendable {
        /// The body, chunk by chunk; read it once. A response from the cache
        /// comes as one chunk.
        public var body: HTTPResponseBody
        /// The status and header fields. A response from the cache carries an
        /// `Age` field with its age in seconds.
        public var response: HTTPURLResponse
        /// Where it came from.
        public var source: Source
    }

    /// Loads `url` with a GET request as ``stream(for:)`` does.
    ///
    /// ```swift
    /// let answer = try await client.stream(from: videoURL)
    /// for try await chunk in answer.body { try file.write(contentsOf: chunk) }
    /// ```
    public func stream(from url: URL) async throws -> StreamingResponse {
        try await stream(for: URLRequest(url: url))
    }

    /// Loads `request` as ``response(for:)`` does, and returns as soon as the
    /// status and header fields are known, with a body that is read as it
    /// arrives, so that a body of any length passes through without being
    /// held in memory whole.
    ///
    /// A response from the cache (fresh, revalidated, or stale standing in)
    /// has its stored body as one chunk. A body from the network reaches the
    /// reader chunk by chunk, through the transport's ``HTTPTransport/stream(_:)``,
    /// and is kept in memory beside it for the cache until it grows longer
    /// than the cache stores (its `maximumValueSize`):
    ///
    /// - read to its end within that limit, a response the rules allow is
    ///   stored, before the reader's last `next()` returns nil;
    /// - longer than the limit, it is passed on and not stored (counted in
    ///   ``HTTPCacheStatistics/tooLargeToStore``), and a response stored
    ///   before for the request, now outdated, is removed;
    /// - cut off (the connection broke: the reader gets the transport's
    ///   error, ``HTTPTransportError/network(url:detail:)`` from
    ///   `AsyncHTTPClientTransport`) or left unread (the reader stopped
    ///   early, or was cancelled), nothing of it is stored.
    ///
    /// ```swift
    /// let answer = try await client.stream(for: URLRequest(url: archiveURL))
    /// var received = 0
    /// for try await chunk in answer.body {
    ///     received += chunk.count
    ///     try file.write(contentsOf: chunk)
    /// }
    /// ```
    ///
    /// Unlike ``response(for:)``, concurrent streams of one URL each send
    /// their own request (a stream joins a ``response(for:)`` already on its
    /// way, and gets its body as one chunk); an error while the body is read
    /// comes too late for a stale response to stand in (`stale-if-error`
    /// applies to a failure before the status arrives); and the `Cache-Status`
    /// of a response from the network (``CachePolicy/cacheStatusName``)
    /// can't yet say `stored` or `ttl`, which are known only at the body's end.
    /// - Throws: as ``data(from:)``, for a failure before the status arrives.
    public func stream(for request: URLRequest) async throws -> StreamingResponse {
        let preconditions = ClientPreconditions(request)
        let pending = try await answer(to: request, preconditions: preconditions, delivery: .streamed)
        let answer = finished(pending.head, preconditions: preconditions, request: request)
        guard let received = pending.body else {
            return StreamingResponse(body: HTTPResponseBody(answer.data), response: answer.response, source: answer.source)
        }
        let limit = cache.configuration.maximumValueSize
        let body = pending.keep.map { BodyKeeper.body(received, limit: limit, keep: $0) } ?? received
        if answer.response.statusCode == 304, pending.head.response.statusCode != 304 {
            // The caller's own conditions turned the answer into a 304 without a
            // body: read it here when the cache keeps it, so that it is stored as
            // `response(for:)` would, up to the limit (past it, nothing would be).
            if pending.keep != nil {
                var read = 0
                for try await chunk in body {
                    read += chunk.count
                    if read > limit { break }
                }
            }
            return StreamingResponse(body: HTTPResponseBody(Data()), response: answer.response, source: answer.source)
        }
        return StreamingResponse(body: body, response: answer.response, source: answer.source)
    }

    // MARK: - Bodies still on their way

    /// How the network's body reaches the client: collected whole by the
    /// transport (``HTTPTransport/send(_:)``), or read as it arrives
    /// (``HTTPTransport/stream(_:)``).
    enum BodyDelivery {
        case whole
        case streamed
    }

    /// An answer whose body may still be on the network.
    struct PendingAnswer: Sendable {
        /// The answer; its `data` is the whole body when `body` is nil, else empty.
        var head: Response
        /// The body still to be read, or nil when `head` holds it.
        var body: HTTPResponseBody?
        /// What the cache does with `body` once it was read to its end: stores
        /// it, given the whole body, or notes that it was too long (given nil).
        /// Returns the answer's `Cache-Status` after it (nil: unchanged). Nil
        /// when the cache has no use for the body.
        var keep: (@Sendable (Data?) async -> CacheStatus?)?

        init(head: Response, body: HTTPResponseBody?, keep: (@Sendable (Data?) async -> CacheStatus?)? = nil) {
            self.head = head
            self.body = body
            self.keep = keep
        }

        /// An answer whose body is already whole.
        init(_ answer: Response) {
            self.init(head: answer, body: nil)
        }

        /// The answer with its whole body, after the cache kept what it keeps of it.
        func collected() async throws -> Response {
            guard let body else { return head }
            var answer = head
            answer.data = try await body.collected()
            if let keep, let status = await keep(answer.data) { answer.cacheStatus = status }
            return answer
        }
    }
}
