import Foundation
import Kache
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP client that answers GET requests from a `Kache` cache when it may,
/// following the caching rules of RFC 9111 for a private cache or, with
/// ``CachePolicy/shared``, for a shared one (a gateway's or a reverse proxy's).
///
/// A fresh stored response is returned without touching the network; a stale
/// one with an `ETag` or `Last-Modified` is revalidated with a conditional
/// request (a `304` costs no body), or within its `stale-while-revalidate`
/// window returned at once and revalidated in the background; a `Range`
/// request is answered from a stored complete response or stored parts; a
/// response that may be stored is kept, status, header fields and body
/// together, for as long as its headers (and the ``CachePolicy``) allow.
///
/// ```swift
/// let client = CachingClient(cache: try Kache(directory: cacheDirectory))
/// let (data, response) = try await client.data(from: URL(string: "https://api.example.com/users/42")!)
/// ```
///
/// Requests go out through an ``HTTPTransport``: a `URLSession` without
/// `URLCache` by default (see ``makeSession(configuration:)``), or any other
/// HTTP client a server-side user plugs in. Two caches must not interfere.
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
        /// The cache, stale within its `stale-while-revalidate` window; a
        /// revalidation runs in the background (``waitForBackgroundRevalidations()``).
        case staleWhileRevalidating
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
        /// Whether the caller's own `If-None-Match` or `If-Modified-Since` went
        /// to the server with the request, which answered them: the cache then
        /// leaves them alone.
        var preconditionsForwarded = false
        /// How the cache handled the request, for `Cache-Status`; nil for an
        /// answer the cache made up (the `504` of `only-if-cached`).
        var cacheStatus: CacheStatus?
    }

    /// The cache responses are stored in.
    public let cache: Kache
    /// How requests reach the network.
    public let transport: any HTTPTransport
    /// The overrides of the header rules.
    public let policy: CachePolicy

    private let store: ResponseStore
    private let counters = Mutex(HTTPCacheStatistics())
    /// The background revalidations running, by the key of the response they revalidate.
    private let revalidations = Mutex([String: Task<Void, Never>]())
    /// The fetches running for requests that found nothing usable, by
    /// `coalescingKey`: a request that finds one running waits for its answer.
    private let fetches = Mutex([String: Task<Response, any Error>]())

    /// Creates a client that stores into `cache` (into `policy.pool` when set).
    ///
    /// - Parameters:
    ///   - cache: the cache; its clock decides every question of time.
    ///   - session: the session to send requests through; nil (the default) for
    ///     one of the client's own, made by ``makeSession(configuration:)``. A
    ///     session you pass should have no `URLCache`.
    ///   - policy: overrides of the header rules (default: none).
    public convenience init(cache: Kache = .shared, session: URLSession? = nil, policy: CachePolicy = CachePolicy()) {
        self.init(cache: cache, transport: URLSessionTransport(session: session ?? CachingClient.makeSession()), policy: policy)
    }

    /// Creates a client that reaches the network through `transport`.
    ///
    /// ```swift
    /// let client = CachingClient(cache: cache, transport: AsyncHTTPClientTransport())   // import KacheHTTPAsyncHTTPClient
    /// ```
    public init(cache: Kache = .shared, transport: any HTTPTransport, policy: CachePolicy = CachePolicy()) {
        self.cache = cache
        self.transport = transport
        self.policy = policy
        store = ResponseStore(cache: cache, pool: policy.pool)
    }

    /// The session requests go out through, when the transport is a ``URLSessionTransport``.
    public var session: URLSession? {
        (transport as? URLSessionTransport)?.session
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
    /// - Throws: the transport's error (a `URLError` from the default one,
    ///   ``HTTPTransportError/network(url:detail:)`` from others) when
    ///   the network fails and no stale response may stand in;
    ///   ``HTTPTransportError`` for an answer that is not HTTP or can't be decoded.
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
    /// A request with its own `If-None-Match` or `If-Modified-Since` gets a
    /// `304 Not Modified` without a body when the answer the cache chose matches
    /// them (RFC 9111 section 4.3.2); with nothing stored for it, they go to the
    /// server, whose answer is passed on.
    ///
    /// ```swift
    /// let answer = try await client.response(for: URLRequest(url: url))
    /// if answer.source == .staleOnError { showOfflineBanner() }
    /// ```
    public func response(for request: URLRequest) async throws -> Response {
        let preconditions = ClientPreconditions(request)
        let answer = try await answer(to: request, preconditions: preconditions, delivery: .whole).collected()
        return finished(answer, preconditions: preconditions, request: request)
    }

    /// The answer to `request` before the caller's own preconditions are
    /// evaluated, its body from the network still to be read when `delivery`
    /// is ``BodyDelivery/streamed``.
    func answer(to request: URLRequest, preconditions: ClientPreconditions, delivery: BodyDelivery) async throws -> PendingAnswer {
        let method = (request.httpMethod ?? "GET").uppercased()
        let requestDirectives = CacheControl(request: request)
        // The cache looks up, coalesces and revalidates without the caller's
        // conditional fields; they are evaluated against the answer at the end.
        let unconditional = preconditions.removed(from: request)
        if method == "HEAD", !preconditions.areForTheServer,
           let answer = await headFromStoredGET(unconditional, directives: requestDirectives) {
            return PendingAnswer(answer)
        }
        guard method == "GET", let url = request.url, policy.shouldCache(url),
              !preconditions.areForTheServer, !requestDirectives.noStore,
              let primary = CacheKey(method: "GET", url: url)
        else {
            return try await passThrough(request, method: method, delivery: delivery)
        }
        var range: ByteRange?
        if let field = request.value(forHTTPHeaderField: "Range") {
            // Several ranges, or another unit: the server answers it, the cache stays out.
            guard let single = ByteRange(field) else { return try await passThrough(request, method: method, delivery: delivery) }
            range = single
        }
        let value = fieldValues(of: unconditional)
        var exchange = Exchange(
            request: unconditional, primary: primary, value: value, directives: requestDirectives, range: range,
            authorized: value("Authorization") != nil
        )
        let lookup = await store.lookup(primary, value: exchange.value)
        let found = shareable(lookup, with: exchange)
        let now = cache.configuration.clock.now()

        if let stored = found.response, isUsable(stored, for: exchange, at: now) {
            if let range {
                if let part = stored.partialResponse(for: range, at: now) {
                    count { $0.freshHits += 1; $0.bytesSaved += UInt64(part.data.count) }
                    return PendingAnswer(Response(data: part.data, response: part.response, source: .cache, cacheStatus: .hit(stored, at: now)))
                }
            } else {
                count { $0.freshHits += 1; $0.bytesSaved += UInt64(stored.body.count) }
                return PendingAnswer(
                    Response(data: stored.body, response: stored.httpResponse(at: now), source: .cache, cacheStatus: .hit(stored, at: now))
                )
            }
        }
        let parts = range == nil ? nil : shareable(await store.lookup(primary.partsKey, value: { _ in nil }), with: exchange).response
        if let range, let parts, isUsable(parts, for: exchange, at: now), let part = parts.partialResponse(for: range, at: now) {
            count { $0.freshHits += 1; $0.bytesSaved += UInt64(part.data.count) }
            return PendingAnswer(Response(data: part.data, response: part.response, source: .cache, cacheStatus: .hit(parts, at: now)))
        }
        if range == nil, let stored = found.response, stored.canServeWhileRevalidating(at: now, policy: policy),
           !requestDirectives.noCache, requestDirectives.maxAge == nil, requestDirectives.minFresh == nil {
            revalidateInBackground(exchange, found: found)
            count { $0.staleWhileRevalidating += 1; $0.bytesSaved += UInt64(stored.body.count) }
            return PendingAnswer(Response(
                data: stored.body, response: stored.httpResponse(at: now), source: .staleWhileRevalidating, cacheStatus: .hit(stored, at: now)
            ))
        }
        if requestDirectives.onlyIfCached {
            // RFC 9111 section 5.2.1.7: nothing usable is stored, and the network is off limits.
            let timeout = HTTPURLResponse(url: url, statusCode: 504, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "0"])!
            return PendingAnswer(Response(data: Data(), response: timeout, source: .cache))
        }
        let reason = forwardReason(found: found, hidden: lookup.response != nil && found.response == nil, parts: parts, exchange: exchange, at: now)
        if found.response == nil, !preconditions.isEmpty {
            // Nothing stored to evaluate the caller's conditions against: RFC 9111
            // section 4.3.2 leaves them to the server, and its 304 is passed on.
            exchange.request = request
            var answer = try await networkAnswer(exchange, found: found, reason: reason, delivery: delivery)
            answer.head.preconditionsForwarded = true
            return answer
        }
        return try await networkAnswer(exchange, found: found, reason: reason, delivery: delivery)
    }

    /// The network's answer for `exchange`. A whole body is fetched once for
    /// concurrent requests alike (``coalescedFetch(_:found:reason:)``); a
    /// streamed one can't be shared, since its chunks go to one reader: a
    /// stream joins a fetch already running (and gets its body whole), but
    /// starts none that others could join.
    private func networkAnswer(
        _ exchange: Exchange, found: ResponseStore.Lookup, reason: CacheStatus.Forward, delivery: BodyDelivery
    ) async throws -> PendingAnswer {
        switch delivery {
        case .whole:
            return PendingAnswer(try await coalescedFetch(exchange, found: found, reason: reason))
        case .streamed:
            if let running = fetches.withLock({ $0[Self.coalescingKey(exchange)] }) {
                count { $0.coalesced += 1 }
                var answer = try await running.value
                answer.cacheStatus?.collapsed = true
                return PendingAnswer(answer)
            }
            return try await fetch(exchange, found: found, reason: reason, delivery: .streamed)
        }
    }

    /// Why a request that found nothing it may use goes to the server, for `Cache-Status`.
    private func forwardReason(
        found: ResponseStore.Lookup, hidden: Bool, parts: CachedResponse?, exchange: Exchange, at now: Date
    ) -> CacheStatus.Forward {
        guard let stored = found.response else {
            // A stored response a shared cache may not give to this request (Authorization).
            if hidden { return .request }
            if parts != nil { return .partial }
            return found.key == exchange.primary ? .uriMiss : .varyMiss
        }
        if !stored.isFresh(at: now, policy: policy) { return .stale }
        // Fresh, yet not used: the request's directives refused it, or it can't give the range.
        return exchange.range == nil ? .request : .miss
    }

    /// `answer` as the caller gets it: a `304 Not Modified` instead when it is a
    /// `2xx` the caller's own `If-None-Match` or `If-Modified-Since` says it has.
    func finished(_ answer: Response, preconditions: ClientPreconditions, request: URLRequest) -> Response {
        var answer = answer
        if !answer.preconditionsForwarded, !preconditions.isEmpty, let url = request.url, preconditions.selectNotModified(answer.response) {
            answer.response = ClientPreconditions.notModified(insteadOf: answer.response, url: url)
            answer.data = Data()
        }
        // RFC 9211 section 2: added to what came from the server or the store, not
        // to an answer the cache made up (no cacheStatus); Via likewise marks a
        // message that passed through.
        guard let status = answer.cacheStatus, let url = request.url else { return answer }
        if let name = policy.cacheStatusName,
           let value = status.appended(to: answer.response.value(forHTTPHeaderField: "Cache-Status"), cacheName: name) {
            answer.response = answer.response.settingField("Cache-Status", to: value, url: url)
        }
        if let member = policy.viaMember {
            let value = HeaderFields.appending(member, to: answer.response.value(forHTTPHeaderField: "Via"))
            answer.response = answer.response.settingField("Via", to: value, url: url)
        }
        return answer
    }

    /// Removes the stored response (every variant of it, and any stored parts) for a GET of `url`.
    ///
    /// ```swift
    /// await client.removeCachedResponse(for: profileURL)   // after the user edits the profile
    /// ```
    public func removeCachedResponse(for url: URL) async {
        guard let key = CacheKey(method: "GET", url: url) else { return }
        await store.remove(key)
        await store.remove(key.partsKey)
    }

    /// Returns once every background revalidation started so far (for
    /// `stale-while-revalidate`) has finished and stored its result.
    ///
    /// ```swift
    /// await client.waitForBackgroundRevalidations()   // before closing the cache
    /// ```
    public func waitForBackgroundRevalidations() async {
        // Each task removes itself when done; a round waits for those running now.
        while let running = revalidations.withLock({ $0.values.first }) {
            await running.value
        }
    }

    // MARK: - Exchanges

    /// A cacheable GET and what the cache needs to know about it.
    private struct Exchange: Sendable {
        var request: URLRequest
        var primary: CacheKey
        var value: @Sendable (String) -> String?
        var directives: CacheControl
        var range: ByteRange?
        /// Whether the request carries `Authorization` (its own, or the transport's).
        var authorized: Bool
    }

    /// `found` as `exchange` may use it: a shared cache forgets a response to
    /// be shared with a request that carries `Authorization` unless the response
    /// allows it (RFC 9111 section 3.5), so the request goes to the network
    /// unconditionally and nothing stored stands in for an error.
    private func shareable(_ found: ResponseStore.Lookup, with exchange: Exchange) -> ResponseStore.Lookup {
        guard exchange.authorized, let stored = found.response, !policy.mayShareAuthorizedResponse(stored.headers) else { return found }
        return ResponseStore.Lookup(key: found.key, response: nil)
    }

    /// Whether `stored` may answer `exchange` at `now` without a request: fresh,
    /// and the request's `no-cache` and `max-age` allow it. A fresh `immutable`
    /// response skips the revalidation a reload asks for with `max-age=0`; a
    /// forced reload (`no-cache`) still revalidates it.
    ///
    /// The request's `min-fresh=N` asks for N more seconds of freshness; its
    /// `max-stale[=N]` accepts a response stale for up to N seconds, unless the
    /// response says `must-revalidate` or `no-cache`, or its age is unknown.
    private func isUsable(_ stored: CachedResponse, for exchange: Exchange, at now: Date) -> Bool {
        isUsable(stored, directives: exchange.directives, at: now)
    }

    private func isUsable(_ stored: CachedResponse, directives request: CacheControl, at now: Date) -> Bool {
        let response = stored.directives(policy)
        guard !request.noCache, !response.noCache else { return false }
        let remaining = stored.freshUntil.timeIntervalSince(now)
        if let minFresh = request.minFresh, remaining < TimeInterval(minFresh) { return false }
        if remaining <= 0 {
            guard let maxStale = request.maxStale, !response.mustRevalidate, -remaining <= TimeInterval(maxStale)
            else { return false }
        }
        return response.immutable && remaining > 0 || request.maxAge.map { stored.age(at: now) <= TimeInterval($0) } ?? true
    }

    /// A HEAD request answered from the stored GET response of its URL, when
    /// that one may be used: its status and header fields, without the body.
    private func headFromStoredGET(_ request: URLRequest, directives: CacheControl) async -> Response? {
        guard let url = request.url, policy.shouldCache(url), !directives.noStore,
              request.value(forHTTPHeaderField: "Range") == nil, let primary = CacheKey(method: "GET", url: url),
              let stored = await store.lookup(primary, value: fieldValues(of: request)).response,
              fieldValues(of: request)("Authorization") == nil || policy.mayShareAuthorizedResponse(stored.headers)
        else { return nil }
        let now = cache.configuration.clock.now()
        guard isUsable(stored, directives: directives, at: now) else { return nil }
        count { $0.freshHits += 1 }
        return Response(data: Data(), response: stored.httpResponse(at: now), source: .cache, cacheStatus: .hit(stored, at: now))
    }

    /// Asks the server: conditionally when a stored response can be
    /// revalidated, and stores what comes back.
    /// `fetch`, shared by concurrent requests alike in every field: one
    /// request goes out, and each caller gets its response or its error.
    ///
    /// The fetch runs in a task of its own, so a caller's cancellation does
    /// not cancel it for the others; the caller that started it removes it
    /// once it is done (it alone knows the task went into the table).
    private func coalescedFetch(_ exchange: Exchange, found: ResponseStore.Lookup, reason: CacheStatus.Forward) async throws -> Response {
        let key = Self.coalescingKey(exchange)
        let (task, started) = fetches.withLock { running -> (Task<Response, any Error>, Bool) in
            if let task = running[key] { return (task, false) }
            let task = Task { try await self.fetch(exchange, found: found, reason: reason, delivery: .whole).collected() }
            running[key] = task
            return (task, true)
        }
        guard started else {
            count { $0.coalesced += 1 }
            var answer = try await task.value
            answer.cacheStatus?.collapsed = true
            return answer
        }
        defer { fetches.withLock { if $0[key] == task { $0[key] = nil } } }
        return try await task.value
    }

    /// What makes two requests the same: the cache key and every request
    /// field (any of them may be one the response varies on), and the range.
    private static func coalescingKey(_ exchange: Exchange) -> String {
        let fields = (exchange.request.allHTTPHeaderFields ?? [:]).map { ($0.key.lowercased(), $0.value) }.sorted { $0 < $1 }
        var key = exchange.primary.full
        for (name, value) in fields { key += "\u{0}\(name):\(value)" }
        return key
    }

    private func fetch(
        _ exchange: Exchange, found: ResponseStore.Lookup, reason: CacheStatus.Forward, delivery: BodyDelivery
    ) async throws -> PendingAnswer {
        let stored = found.response
        var status = CacheStatus(forward: reason)
        var conditional = exchange.request
        // A range the stored body can't give is asked for as it is; a 304 would not help.
        if let stored, exchange.range.map({ stored.partialResponse(for: $0, at: stored.responseTime) != nil }) ?? true {
            if let etag = stored.headers["ETag"] { conditional.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let lastModified = stored.headers["Last-Modified"] {
                conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
            }
        }
        var answer = try await send(conditional, fallback: stored, delivery: delivery)
        if case let .answered(_, response, requestTime, responseTime) = answer, response.statusCode == 304,
           let stored, stored.hasValidator {
            let notModified = HeaderFields(response)
            if CachingClient.selects(notModified, stored) {
                let refreshed = stored.refreshed(by: notModified, requestTime: requestTime, responseTime: responseTime, policy: policy)
                status.forwardStatus = 304
                status.stored = await keep(refreshed, exchange: exchange, found: found, now: responseTime, variant: found.key)
                status.ttl = CacheStatus.ttl(of: refreshed, at: responseTime)
                if let range = exchange.range, let part = refreshed.partialResponse(for: range, at: responseTime) {
                    count { $0.revalidations += 1; $0.bytesSaved += UInt64(part.data.count) }
                    return PendingAnswer(Response(data: part.data, response: part.response, source: .revalidated, cacheStatus: status))
                }
                count { $0.revalidations += 1; $0.bytesSaved += UInt64(stored.body.count) }
                return PendingAnswer(
                    Response(data: refreshed.body, response: refreshed.httpResponse(at: responseTime), source: .revalidated, cacheStatus: status)
                )
            }
            // The 304 names another representation than the stored one: ask again, unconditionally.
            answer = try await send(exchange.request, fallback: stored, delivery: delivery)
        }
        switch answer {
        case let .stale(response, forwardStatus):
            count { $0.staleOnError += 1 }
            let now = cache.configuration.clock.now()
            status.forwardStatus = forwardStatus
            status.ttl = stored.map { CacheStatus.ttl(of: $0, at: now) }
            if let range = exchange.range, let stored, let part = stored.partialResponse(for: range, at: now) {
                return PendingAnswer(Response(data: part.data, response: part.response, source: .staleOnError, cacheStatus: status))
            }
            var response = response
            response.cacheStatus = status
            return PendingAnswer(response)
        case let .answered(body, response, requestTime, responseTime):
            count { $0.misses += 1 }
            let headers = HeaderFields(response)
            let url = response.url ?? exchange.request.url!
            status.forwardStatus = response.statusCode
            var pending = PendingAnswer(
                head: Response(data: Data(), response: response, source: .network, cacheStatus: status), body: body
            )
            if exchange.range != nil, response.statusCode == 206 {
                pending.keep = { [self, status] data in
                    var status = status
                    if let data {
                        status.stored = await keepPart(
                            data, headers: headers, url: url, exchange: exchange, requestTime: requestTime, responseTime: responseTime
                        )
                    } else {
                        count { $0.tooLargeToStore += 1 }
                    }
                    return status
                }
            } else if exchange.range == nil || response.statusCode == 200 {
                // A 200 to a Range request is the complete representation: the server ignored the range.
                let policy = self.policy
                let record = { @Sendable (body: Data) in
                    CachedResponse(
                        key: exchange.primary.full, url: url, status: response.statusCode, headers: headers,
                        body: body, requestTime: requestTime, responseTime: responseTime, policy: policy
                    )
                }
                if CachedResponse.isStorable(
                    status: response.statusCode, headers: headers, request: exchange.directives, authorized: exchange.authorized, policy: policy
                ) {
                    pending.keep = { [self, status] data in
                        var status = status
                        guard let data else {
                            // Too long to store: what was stored is outdated all the same.
                            count { $0.tooLargeToStore += 1 }
                            if found.response != nil { await store.remove(found.key) }
                            return status
                        }
                        let record = record(data)
                        status.stored = await keep(record, exchange: exchange, found: found, now: responseTime)
                        if status.stored { status.ttl = CacheStatus.ttl(of: record, at: responseTime) }
                        return status
                    }
                } else {
                    // Never stored, whatever its body: `keep` removes what was stored at
                    // once, and nobody needs to wait for the body.
                    await keep(record(Data()), exchange: exchange, found: found, now: responseTime)
                }
            }
            return pending
        }
    }

    /// Revalidates `found`'s response for `exchange` in the background, unless
    /// a revalidation of the same key is already running.
    private func revalidateInBackground(_ exchange: Exchange, found: ResponseStore.Lookup) {
        let key = found.key.full
        revalidations.withLock { running in
            guard running[key] == nil else { return }
            running[key] = Task { [self] in
                _ = try? await fetch(exchange, found: found, reason: .stale, delivery: .whole).collected()
                _ = revalidations.withLock { $0.removeValue(forKey: key) }
            }
        }
    }

    // MARK: - Network

    /// What the network gave: a response, or a stale stored one standing in for an error.
    private enum Answer {
        /// The body is still to be read when it was asked for as ``BodyDelivery/streamed``.
        case answered(HTTPResponseBody, HTTPURLResponse, requestTime: Date, responseTime: Date)
        /// `forwardStatus`: the server's error status, nil when it could not be reached.
        case stale(Response, forwardStatus: Int?)
    }

    /// The status codes RFC 5861 counts as errors for `stale-if-error`.
    private static let serverErrors: Set<Int> = [500, 502, 503, 504]

    /// Sends `request`; when the network fails, or the server answers with an
    /// error, `fallback` stands in if it may still be served stale.
    /// An error while a streamed body is read comes later, to its reader: by
    /// then the status is out, and no stale response can stand in.
    private func send(_ request: URLRequest, fallback: CachedResponse?, delivery: BodyDelivery) async throws -> Answer {
        let requestTime = cache.configuration.clock.now()
        let body: HTTPResponseBody
        let response: HTTPURLResponse
        do {
            (body, response) = try await transmit(forwarded(request), delivery: delivery)
        } catch where HTTPTransportError.isNetworkFailure(error) {
            let now = cache.configuration.clock.now()
            if let fallback, fallback.canServeStale(at: now, policy: policy) {
                return .stale(Response(data: fallback.body, response: fallback.httpResponse(at: now), source: .staleOnError), forwardStatus: nil)
            }
            throw error
        }
        let responseTime = cache.configuration.clock.now()
        if CachingClient.serverErrors.contains(response.statusCode), let fallback, fallback.canServeStale(at: responseTime, policy: policy) {
            return .stale(
                Response(data: fallback.body, response: fallback.httpResponse(at: responseTime), source: .staleOnError),
                forwardStatus: response.statusCode
            )
        }
        return .answered(body, response, requestTime: requestTime, responseTime: responseTime)
    }

    /// `request` through the transport: its whole body at once, or a body still to be read.
    private func transmit(_ request: URLRequest, delivery: BodyDelivery) async throws -> (HTTPResponseBody, HTTPURLResponse) {
        switch delivery {
        case .whole:
            let (data, response) = try await transport.send(request)
            return (HTTPResponseBody(data), response)
        case .streamed:
            return try await transport.stream(request)
        }
    }

    /// A request the cache stays out of. A successful unsafe method
    /// invalidates the stored GET response of its URL; a POST response that
    /// names its own URL in `Content-Location` and states its lifetime then
    /// answers later GETs of that URL (RFC 9111 section 4).
    private func passThrough(_ request: URLRequest, method: String, delivery: BodyDelivery) async throws -> PendingAnswer {
        count { $0.bypassed += 1 }
        let requestTime = cache.configuration.clock.now()
        let (body, response) = try await transmit(forwarded(request), delivery: delivery)
        let responseTime = cache.configuration.clock.now()
        let reason: CacheStatus.Forward = method == "GET" || method == "HEAD" ? .bypass : .method
        var pending = PendingAnswer(
            head: Response(
                data: Data(), response: response, source: .network, preconditionsForwarded: true,
                cacheStatus: CacheStatus(forward: reason, forwardStatus: response.statusCode)
            ),
            body: body
        )
        if !CachingClient.safeMethods.contains(method), (200 ..< 400).contains(response.statusCode), let url = request.url {
            await removeCachedResponse(for: url)
            // RFC 9111 section 4.4: the URLs in Location and Content-Location too,
            // when they share the request's origin (another origin can't be trusted with it).
            for name in ["Location", "Content-Location"] {
                guard let value = response.value(forHTTPHeaderField: name),
                      let target = URL(string: value.trimmingHTTPWhitespace, relativeTo: url)?.absoluteURL,
                      target.scheme == url.scheme, target.host == url.host, target.port == url.port
                else { continue }
                await removeCachedResponse(for: target)
            }
            if method == "POST" {
                pending.keep = { [self] data in
                    // One too long to store is not counted: most POST responses are never meant for storing.
                    if let data { await keepPOSTResponse(data, response, request: request, requestTime: requestTime, responseTime: responseTime) }
                    return nil
                }
            }
        }
        return pending
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// `request` as it goes upstream: with this cache's member appended to its
    /// `Via` when a shared cache has a pseudonym (RFC 9110 section 7.6.3: a
    /// gateway must send `Via` in each request it forwards).
    private func forwarded(_ request: URLRequest) -> URLRequest {
        guard let member = policy.viaMember else { return request }
        var request = request
        request.setValue(HeaderFields.appending(member, to: request.value(forHTTPHeaderField: "Via")), forHTTPHeaderField: "Via")
        return request
    }

    // MARK: - Storing

    /// Stores `record` if the rules allow it, else removes what was stored
    /// for the request, so that an outdated response is never served again.
    /// A refreshed response passes the `variant` it was found under, so that
    /// one found by its `Content-Language` is refreshed where it lives.
    /// - Returns: whether it was stored.
    @discardableResult
    private func keep(_ record: CachedResponse, exchange: Exchange, found: ResponseStore.Lookup, now: Date, variant: CacheKey? = nil) async -> Bool {
        guard CachedResponse.isStorable(
                  status: record.status, headers: record.headers, request: exchange.directives, authorized: exchange.authorized, policy: policy
              ),
              let record = record.storedForm(policy: policy),
              let fields = CacheKey.varyingFields(record.headers["Vary"])
        else {
            if found.response != nil { await store.remove(found.key) }
            return false
        }
        do {
            if try await store.save(
                record, primary: exchange.primary, varyingFields: fields, value: exchange.value, variant: variant, now: now, policy: policy
            ) {
                count { $0.stores += 1 }
                return true
            } else if found.response != nil {
                await store.remove(found.key)
            }
        } catch {
            count { $0.storeFailures += 1 }
            if found.response != nil { await store.remove(found.key) }
        }
        return false
    }

    /// Keeps a `206` part: combined with the stored parts when they are of the
    /// same representation (else replacing them), and once the parts join into
    /// the whole representation, stored as a complete `200` instead (RFC 9111
    /// sections 3.3 and 3.4). A part with `Vary` is not kept.
    /// - Returns: whether it was stored (as a part, or as the complete response).
    @discardableResult
    private func keepPart(_ data: Data, headers: HeaderFields, url: URL, exchange: Exchange, requestTime: Date, responseTime: Date) async -> Bool {
        let partsKey = exchange.primary.partsKey
        guard let field = headers["Content-Range"], let contentRange = ContentRange(field), let length = contentRange.completeLength,
              contentRange.range.count == data.count, headers["Vary"] == nil,
              CachedResponse.isStorablePart(
                  headers: headers, contentRange: contentRange, request: exchange.directives, authorized: exchange.authorized, policy: policy
              )
        else { return false }
        let stored = await store.lookup(partsKey, value: { _ in nil }).response
        var parts = RangeParts(completeLength: length, offset: contentRange.range.lowerBound, bytes: data)
        if let stored, let storedParts = stored.parts, CachedResponse.partsCombine(stored, with: headers, completeLength: length) {
            parts = storedParts
            parts.insert(offset: contentRange.range.lowerBound, bytes: data)
        }
        var partHeaders = headers
        partHeaders["Content-Range"] = nil
        partHeaders["Content-Length"] = nil
        if let complete = parts.complete {
            partHeaders["Content-Length"] = String(complete.count)
            let record = CachedResponse(
                key: exchange.primary.full, url: url, status: 200, headers: partHeaders, body: complete,
                requestTime: requestTime, responseTime: responseTime, policy: policy
            )
            var whole = exchange
            whole.range = nil
            let kept = await keep(record, exchange: whole, found: await store.lookup(exchange.primary, value: exchange.value), now: responseTime)
            await store.remove(partsKey)
            return kept
        }
        guard let record = CachedResponse(
            key: partsKey.full, url: url, status: 206, headers: partHeaders, body: Data(),
            requestTime: requestTime, responseTime: responseTime, policy: policy, parts: parts
        ).storedForm(policy: policy) else {
            await store.remove(partsKey)
            return false
        }
        do {
            if try await store.save(record, primary: partsKey, varyingFields: [], value: { _ in nil }, now: responseTime, policy: policy) {
                count { $0.stores += 1 }
                return true
            } else {
                await store.remove(partsKey)
            }
        } catch {
            count { $0.storeFailures += 1 }
            await store.remove(partsKey)
        }
        return false
    }

    /// Stores a POST response for later GETs of the same URL when it says it
    /// is that URL's representation (`Content-Location` equal to the request
    /// URL) and states its lifetime (`max-age` or `Expires`).
    private func keepPOSTResponse(_ data: Data, _ response: HTTPURLResponse, request: URLRequest, requestTime: Date, responseTime: Date) async {
        let headers = HeaderFields(response)
        guard let url = request.url, let location = headers["Content-Location"],
              let resolved = URL(string: location.trimmingHTTPWhitespace, relativeTo: url)?.absoluteURL,
              let primary = CacheKey(method: "GET", url: url), CacheKey(method: "GET", url: resolved) == primary,
              Freshness.hasExplicitLifetime(headers: headers, directives: policy.responseDirectives(headers))
        else { return }
        let directives = CacheControl(request.value(forHTTPHeaderField: "Cache-Control"))
        let value = fieldValues(of: request)
        let exchange = Exchange(
            request: request, primary: primary, value: value, directives: directives, range: nil, authorized: value("Authorization") != nil
        )
        let record = CachedResponse(
            key: primary.full, url: url, status: response.statusCode, headers: headers, body: data,
            requestTime: requestTime, responseTime: responseTime, policy: policy
        )
        await keep(record, exchange: exchange, found: ResponseStore.Lookup(key: primary, response: nil), now: responseTime)
    }

    // MARK: - Helpers

    /// Whether a `304` applies to the stored response (RFC 9111 section 4.3.4):
    /// when it carries an entity tag, that tag must match the stored one (weak comparison).
    private static func selects(_ notModified: HeaderFields, _ stored: CachedResponse) -> Bool {
        guard let tag = notModified["ETag"] else { return true }
        guard let storedTag = stored.headers["ETag"] else { return false }
        if let new = EntityTag(tag), let old = EntityTag(storedTag) { return new.weaklyMatches(old) }
        // A tag outside the grammar (unquoted, as some servers send it) is compared as text.
        return tag.trimmingHTTPWhitespace == storedTag.trimmingHTTPWhitespace
    }

    /// The request's field values as the server will see them for `Vary`: the
    /// request's own, else the session's additional header fields.
    private func fieldValues(of request: URLRequest) -> @Sendable (String) -> String? {
        let additional = transport.additionalHeaderFields.map { ($0.key, $0.value) }
        return { name in
            request.value(forHTTPHeaderField: name)
                ?? additional.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    private func count(_ update: (inout HTTPCacheStatistics) -> Void) {
        counters.withLock { update(&$0) }
    }
}
