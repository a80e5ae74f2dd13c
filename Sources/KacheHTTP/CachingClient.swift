import Foundation
import Kache
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP client that answers GET requests from a ``Kache`` when it may,
/// following the caching rules of RFC 9111 for a private cache.
///
/// A fresh stored response is returned without touching the network; a stale
/// one with an `ETag` or `Last-Modified` is revalidated with a conditional
/// request (a `304` costs no body); a response that may be stored is kept,
/// status, header fields and body together, for as long as its headers (and the
/// ``CachePolicy``) allow.
///
/// ```swift
/// let client = CachingClient(cache: try Kache(directory: cacheDirectory))
/// let (data, response) = try await client.data(from: URL(string: "https://api.example.com/users/42")!)
/// ```
///
/// The client's own `URLSession` has no `URLCache`. If you pass a session of
/// your own, create it from a configuration whose `urlCache` is nil (see
/// ``makeSession(configuration:)``): two caches must not interfere.
public final class CachingClient: Sendable {
    /// Where a response came from.
    public enum Source: Sendable, Equatable {
        /// The network: there was nothing usable in the cache.
        case network
        /// The cache, fresh: no request was sent.
        case cache
        /// The cache, after the server confirmed it with a `304 Not Modified`.
        case revalidated
        /// The cache, stale, because the server could not be reached or
        /// answered with an error, within the `stale-if-error` window.
        case staleOnError
    }

    /// A response and where it came from, from ``response(for:)``.
    public struct Response: Sendable {
        /// The body.
        public var data: Data
        /// The status and header fields. A response from the cache carries an
        /// `Age` field with its age in seconds.
        public var response: HTTPURLResponse
        /// Where it came from.
        public var source: Source
    }

    /// The cache responses are stored in.
    public let cache: Kache
    /// The session requests go out through.
    public let session: URLSession
    /// The overrides of the header rules.
    public let policy: CachePolicy

    private let store: ResponseStore
    private let counters = Mutex(HTTPCacheStatistics())

    /// Creates a client that stores into `cache` (into `policy.pool` when set).
    ///
    /// - Parameters:
    ///   - cache: the cache; its clock decides every question of time.
    ///   - session: the session to send requests through; nil (the default) for
    ///     one of the client's own, made by ``makeSession(configuration:)``. A
    ///     session you pass should have no `URLCache`.
    ///   - policy: overrides of the header rules (default: none).
    public init(cache: Kache = .shared, session: URLSession? = nil, policy: CachePolicy = CachePolicy()) {
        self.cache = cache
        self.session = session ?? CachingClient.makeSession()
        self.policy = policy
        store = ResponseStore(cache: cache, pool: policy.pool)
    }

    /// A session for a caching client: `configuration` with its `URLCache`
    /// removed and local caching turned off (the configuration is changed in place).
    ///
    /// Foundation's `URLCache` on Linux reuses no response at all, and a second
    /// cache under this one would only confuse revalidation.
    ///
    /// ```swift
    /// let configuration = URLSessionConfiguration.default
    /// configuration.timeoutIntervalForRequest = 10
    /// let client = CachingClient(cache: cache, session: CachingClient.makeSession(configuration: configuration))
    /// ```
    public static func makeSession(configuration: URLSessionConfiguration = .default) -> URLSession {
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }

    /// What the client did so far.
    public var statistics: HTTPCacheStatistics {
        counters.withLock { $0 }
    }

    // MARK: - Requests

    /// Loads `url` with a GET request, from the cache when it may.
    ///
    /// ```swift
    /// let (data, response) = try await client.data(from: avatarURL)
    /// ```
    /// - Throws: the session's error (a `URLError`) when the network fails and no
    ///   stale response may stand in; `URLError(.badServerResponse)` for a response that is not HTTP.
    public func data(from url: URL) async throws -> (Data, HTTPURLResponse) {
        try await data(for: URLRequest(url: url))
    }

    /// Loads `request`: a GET from the cache when it may; any other method
    /// straight from the network (a successful unsafe method, such as POST, also
    /// removes the stored response for its URL, RFC 9111 section 4.4).
    /// - Throws: as ``data(from:)``.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let answer = try await response(for: request)
        return (answer.data, answer.response)
    }

    /// Loads `request` as ``data(for:)`` does, and says where the response came from.
    ///
    /// ```swift
    /// let answer = try await client.response(for: URLRequest(url: url))
    /// if answer.source == .staleOnError { showOfflineBanner() }
    /// ```
    public func response(for request: URLRequest) async throws -> Response {
        let method = (request.httpMethod ?? "GET").uppercased()
        let requestDirectives = CacheControl(request.value(forHTTPHeaderField: "Cache-Control"))
        guard method == "GET", let url = request.url, policy.shouldCache(url),
              !CachingClient.isConditional(request), !requestDirectives.noStore,
              let primary = CacheKey(method: "GET", url: url)
        else {
            return try await passThrough(request, method: method)
        }
        let value = fieldValues(of: request)
        let found = store.lookup(primary, value: value)
        let now = cache.configuration.clock.now()

        // A fresh immutable response skips the revalidation a reload asks for
        // with max-age=0; a forced reload (no-cache) still revalidates it.
        if let stored = found.response, stored.isFresh(at: now), !requestDirectives.noCache,
           stored.directives.immutable || requestDirectives.maxAge.map({ stored.age(at: now) <= TimeInterval($0) }) ?? true {
            count { $0.freshHits += 1; $0.bytesSaved += UInt64(stored.body.count) }
            return Response(data: stored.body, response: stored.httpResponse(at: now), source: .cache)
        }

        var conditional = request
        if let stored = found.response {
            if let etag = stored.headers["ETag"] { conditional.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let lastModified = stored.headers["Last-Modified"] {
                conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
            }
        }
        var exchange = try await send(conditional, fallback: found.response)
        if case let .answered(_, response, requestTime, responseTime) = exchange, response.statusCode == 304,
           let stored = found.response, stored.hasValidator {
            let notModified = HeaderFields(response)
            if CachingClient.selects(notModified, stored) {
                let refreshed = stored.refreshed(by: notModified, requestTime: requestTime, responseTime: responseTime, policy: policy)
                keep(refreshed, primary: primary, found: found, value: value, requestDirectives: requestDirectives, now: responseTime)
                count { $0.revalidations += 1; $0.bytesSaved += UInt64(stored.body.count) }
                return Response(data: refreshed.body, response: refreshed.httpResponse(at: responseTime), source: .revalidated)
            }
            // The 304 names another representation than the stored one: ask again, unconditionally.
            exchange = try await send(request, fallback: found.response)
        }
        switch exchange {
        case let .stale(response):
            count { $0.staleOnError += 1 }
            return response
        case let .answered(data, response, requestTime, responseTime):
            count { $0.misses += 1 }
            let record = CachedResponse(
                key: primary.full, url: response.url ?? url, status: response.statusCode, headers: HeaderFields(response),
                body: data, requestTime: requestTime, responseTime: responseTime, policy: policy
            )
            keep(record, primary: primary, found: found, value: value, requestDirectives: requestDirectives, now: responseTime)
            return Response(data: data, response: response, source: .network)
        }
    }

    /// Removes the stored response (every variant of it) for a GET of `url`.
    ///
    /// ```swift
    /// client.removeCachedResponse(for: profileURL)   // after the user edits the profile
    /// ```
    public func removeCachedResponse(for url: URL) {
        if let key = CacheKey(method: "GET", url: url) { store.remove(key) }
    }

    // MARK: - Network

    /// What the network gave: a response, or a stale stored one standing in for an error.
    private enum Exchange {
        case answered(Data, HTTPURLResponse, requestTime: Date, responseTime: Date)
        case stale(Response)
    }

    /// The status codes RFC 5861 counts as errors for `stale-if-error`.
    private static let serverErrors: Set<Int> = [500, 502, 503, 504]

    /// Sends `request`; when the network fails, or the server answers with an
    /// error, `fallback` stands in if it may still be served stale.
    private func send(_ request: URLRequest, fallback: CachedResponse?) async throws -> Exchange {
        let requestTime = cache.configuration.clock.now()
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError where error.code != .cancelled {
            let now = cache.configuration.clock.now()
            if let fallback, fallback.canServeStale(at: now, policy: policy) {
                return .stale(Response(data: fallback.body, response: fallback.httpResponse(at: now), source: .staleOnError))
            }
            throw error
        }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        let responseTime = cache.configuration.clock.now()
        if CachingClient.serverErrors.contains(http.statusCode), let fallback, fallback.canServeStale(at: responseTime, policy: policy) {
            return .stale(Response(data: fallback.body, response: fallback.httpResponse(at: responseTime), source: .staleOnError))
        }
        return .answered(data, http, requestTime: requestTime, responseTime: responseTime)
    }

    /// A request the cache stays out of; a successful unsafe method
    /// invalidates the stored GET response of its URL.
    private func passThrough(_ request: URLRequest, method: String) async throws -> Response {
        count { $0.bypassed += 1 }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        if !CachingClient.safeMethods.contains(method), (200 ..< 400).contains(http.statusCode), let url = request.url {
            removeCachedResponse(for: url)
        }
        return Response(data: data, response: http, source: .network)
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    // MARK: - Storing

    /// Stores `record` if the rules allow it, else removes what was stored
    /// for the request, so that an outdated response is never served again.
    private func keep(
        _ record: CachedResponse, primary: CacheKey, found: ResponseStore.Lookup,
        value: (String) -> String?, requestDirectives: CacheControl, now: Date
    ) {
        guard CachedResponse.isStorable(status: record.status, headers: record.headers, request: requestDirectives, policy: policy),
              let fields = CacheKey.varyingFields(record.headers["Vary"])
        else {
            if found.response != nil { store.remove(found.key) }
            return
        }
        do {
            if try store.save(record, primary: primary, varyingFields: fields, value: value, now: now, policy: policy) {
                count { $0.stores += 1 }
            } else if found.response != nil {
                store.remove(found.key)
            }
        } catch {
            count { $0.storeFailures += 1 }
            if found.response != nil { store.remove(found.key) }
        }
    }

    // MARK: - Helpers

    /// Whether the caller sent conditional fields of its own: it then expects
    /// to see the server's `304` itself, so the cache stays out.
    private static func isConditional(_ request: URLRequest) -> Bool {
        ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]
            .contains { request.value(forHTTPHeaderField: $0) != nil }
    }

    /// Whether a `304` applies to the stored response (RFC 9111 section 4.3.4):
    /// when it carries an entity tag, that tag must match the stored one (weak comparison).
    private static func selects(_ notModified: HeaderFields, _ stored: CachedResponse) -> Bool {
        guard let tag = notModified["ETag"] else { return true }
        guard let storedTag = stored.headers["ETag"] else { return false }
        func opaque(_ tag: String) -> Substring {
            let trimmed = Substring(tag.trimmingHTTPWhitespace)
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(tag) == opaque(storedTag)
    }

    /// The request's field values as the server will see them for `Vary`: the
    /// request's own, else the session's additional header fields.
    private func fieldValues(of request: URLRequest) -> (String) -> String? {
        let additional = (session.configuration.httpAdditionalHeaders ?? [:]).compactMap { key, value -> (String, String)? in
            (key as? String).map { ($0, "\(value)") }
        }
        return { name in
            request.value(forHTTPHeaderField: name)
                ?? additional.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    private func count(_ update: (inout HTTPCacheStatistics) -> Void) {
        counters.withLock { update(&$0) }
    }
}
