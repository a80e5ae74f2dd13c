import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stored response: status, header fields and body together in one cache
/// entry, with the times its freshness is computed from.
///
/// The cache engine never returns an expired entry, so the engine's TTL is
/// the time this record is *kept* (fresh, then stale but still useful for
/// revalidation or `stale-if-error`); whether it is *fresh* is decided here,
/// from ``freshUntil``.
struct CachedResponse: Sendable, Equatable {
    /// The full cache key (method, URL, varying request fields); compared on
    /// every read, so an over-long key shortened to a hash can't return another URL's response.
    var key: String
    /// The URL the response answered.
    var url: URL
    /// The HTTP status code.
    var status: Int
    /// The response's header fields (hop-by-hop ones excluded).
    var headers: HeaderFields
    /// When the request that produced this response (or its last `304`) was sent.
    var requestTime: Date
    /// When that response arrived.
    var responseTime: Date
    /// The age it had on arrival, in seconds (RFC 9111 `corrected_initial_age`).
    var initialAge: TimeInterval
    /// The instant it stops being fresh: response time + lifetime − initial age.
    var freshUntil: Date
    /// The body (empty for a record of ``parts``).
    var body: Data
    /// For a record of `206` responses, the parts received; nil for a complete response.
    var parts: RangeParts?

    /// A record of a response that just arrived, its freshness computed from
    /// its headers and the policy.
    init(
        key: String, url: URL, status: Int, headers: HeaderFields, body: Data,
        requestTime: Date, responseTime: Date, policy: CachePolicy, parts: RangeParts? = nil
    ) {
        let directives = policy.responseDirectives(headers)
        let initialAge = Freshness.correctedInitialAge(headers: headers, requestTime: requestTime, responseTime: responseTime)
        let lifetime = Freshness.lifetime(status: status, headers: headers, directives: directives, responseTime: responseTime, policy: policy)
        let freshUntil = responseTime.addingTimeInterval(lifetime - initialAge)
        self.init(
            key: key, url: url, status: status, headers: headers, body: body,
            requestTime: requestTime, responseTime: responseTime, initialAge: initialAge, freshUntil: freshUntil, parts: parts
        )
    }

    /// A record from its stored fields, as decoded.
    init(
        key: String, url: URL, status: Int, headers: HeaderFields, body: Data,
        requestTime: Date, responseTime: Date, initialAge: TimeInterval, freshUntil: Date, parts: RangeParts? = nil
    ) {
        self.key = key
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.initialAge = initialAge
        self.freshUntil = freshUntil
        self.parts = parts
    }

    // MARK: - Freshness

    /// The response's directives as a cache with `policy` acts on them.
    func directives(_ policy: CachePolicy) -> CacheControl { policy.responseDirectives(headers) }

    /// Whether a conditional request can revalidate it (it has an `ETag` or a `Last-Modified`).
    var hasValidator: Bool { headers["ETag"] != nil || headers["Last-Modified"] != nil }

    /// Its age at `now`, in seconds: the initial age plus the time since it arrived.
    func age(at now: Date) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// Whether it may be used at `now` without asking the server.
    func isFresh(at now: Date, policy: CachePolicy) -> Bool {
        now < freshUntil && !directives(policy).noCache
    }

    /// Whether it may stand in for a failed request at `now` (`stale-if-error`).
    func canServeStale(at now: Date, policy: CachePolicy) -> Bool {
        guard let window = policy.staleIfErrorWindow(directives(policy)) else { return false }
        return now.timeIntervalSince(freshUntil) <= window
    }

    /// Whether, stale at `now`, it may still be returned at once while it is
    /// revalidated in the background (RFC 5861 `stale-while-revalidate`): within
    /// its window, and unless `must-revalidate` or `no-cache` forbid serving it stale.
    func canServeWhileRevalidating(at now: Date, policy: CachePolicy) -> Bool {
        let stated = directives(policy)
        guard let window = stated.staleWhileRevalidate, !stated.mustRevalidate, !stated.noCache, now >= freshUntil
        else { return false }
        return now.timeIntervalSince(freshUntil) <= TimeInterval(window)
    }

    /// How long the cache engine should keep it from `now`: the rest of its
    /// freshness, plus the longest of its `stale-if-error` window, its
    /// `stale-while-revalidate` window and (when it has a validator) the
    /// policy's revalidation window. Nil when it is useless from now on.
    func retention(at now: Date, policy: CachePolicy) -> Duration? {
        let fresh = max(0, freshUntil.timeIntervalSince(now))
        let stated = directives(policy)
        var stale = max(policy.staleIfErrorWindow(stated) ?? 0, TimeInterval(stated.staleWhileRevalidate ?? 0))
        if hasValidator { stale = max(stale, policy.revalidationWindow.seconds) }
        let total = fresh + stale
        guard total > 0 else { return nil }
        // A century is forever for a cache, and keeps the value far from Duration's limits.
        return .seconds(min(total, 100 * 365 * 86_400))
    }

    // MARK: - Updating and serving

    /// This record after a `304 Not Modified`: the `304`'s header fields
    /// replace the stored ones (RFC 9111 section 4.3.4), and freshness is
    /// computed anew from the merged fields and the new request and response times.
    ///
    /// `Date` and `Age` describe the `304` itself, so they come from it alone:
    /// the stored response's would make the refreshed one look old from the start.
    func refreshed(by notModified: HeaderFields, requestTime: Date, responseTime: Date, policy: CachePolicy) -> CachedResponse {
        var merged = headers.updated(by: notModified)
        merged["Date"] = notModified["Date"]
        merged["Age"] = notModified["Age"]
        return CachedResponse(
            key: key, url: url, status: status, headers: merged, body: body,
            requestTime: requestTime, responseTime: responseTime, policy: policy
        )
    }

    /// The response as the caller sees it, with an `Age` field giving its
    /// current age in whole seconds (RFC 9111 section 5.1).
    func httpResponse(at now: Date) -> HTTPURLResponse {
        httpResponse(at: now, status: status, fields: headers)
    }

    /// The `206 Partial Content` answer to `range` (RFC 9110 section 15.3.7), or
    /// nil when this record can't give it: the range is unsatisfiable, its bytes
    /// are not all stored, or the body was decoded from a `Content-Encoding`
    /// (ranges count bytes of the encoded form, which is not kept).
    func partialResponse(for range: ByteRange, at now: Date) -> (data: Data, response: HTTPURLResponse)? {
        let coding = headers["Content-Encoding"]?.trimmingHTTPWhitespace.lowercased() ?? "identity"
        guard coding == "identity" || coding.isEmpty else { return nil }
        let length: Int
        let data: Data
        if let parts {
            guard let offsets = range.resolved(length: parts.completeLength), let bytes = parts.bytes(in: offsets) else { return nil }
            length = parts.completeLength
            data = bytes
            return (data, partialHTTPResponse(ContentRange(range: offsets, completeLength: length), count: data.count, at: now))
        }
        guard status == 200, let offsets = range.resolved(length: body.count) else { return nil }
        data = Data(body[body.startIndex + offsets.lowerBound ..< body.startIndex + offsets.upperBound])
        return (data, partialHTTPResponse(ContentRange(range: offsets, completeLength: body.count), count: data.count, at: now))
    }

    private func partialHTTPResponse(_ contentRange: ContentRange, count: Int, at now: Date) -> HTTPURLResponse {
        var fields = headers
        fields["Content-Range"] = contentRange.fieldValue
        fields["Content-Length"] = String(count)
        return httpResponse(at: now, status: 206, fields: fields)
    }

    private func httpResponse(at now: Date, status: Int, fields: HeaderFields) -> HTTPURLResponse {
        var fields = fields
        fields["Age"] = String(Int(age(at: now).rounded(.down)))
        // Foundation returns nil only for a malformed URL, which a stored response never has.
        return HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields.dictionary)!
    }

    // MARK: - Storage rules

    /// Whether a response may be stored at all (RFC 9111 section 3): neither
    /// the request nor the response says `no-store`, its status is final (not
    /// `1xx`; a `304` only refreshes, a `206` is stored as a part, see
    /// ``RangeParts``), and it either states its own lifetime (`max-age` or
    /// `Expires`; for a shared cache also `s-maxage`), is marked `public` (or,
    /// for a private cache, `private`), or has a status the policy lists as
    /// heuristically cacheable.
    ///
    /// A shared cache also refuses a response marked plain `private`, and the
    /// response to a request with `Authorization` (`authorized`) unless the
    /// response allows sharing it (RFC 9111 section 3.5).
    static func isStorable(status: Int, headers: HeaderFields, request: CacheControl, authorized: Bool = false, policy: CachePolicy) -> Bool {
        status != 206 && mayStore(status: status, headers: headers, request: request, authorized: authorized, policy: policy)
    }

    /// Whether a `206` may be kept as a part: as any response, and only with a
    /// known complete length and no `Content-Encoding` (the transport decoded
    /// it, so its bytes are no longer those the offsets count).
    static func isStorablePart(
        headers: HeaderFields, contentRange: ContentRange, request: CacheControl, authorized: Bool = false, policy: CachePolicy
    ) -> Bool {
        contentRange.completeLength != nil && headers["Content-Encoding"] == nil
            && mayStore(status: 206, headers: headers, request: request, authorized: authorized, policy: policy)
    }

    /// The final status codes HTTP defines (RFC 9110 section 15), whose
    /// caching rules this cache implements: what `must-understand` asks about.
    static let understoodStatusCodes: Set<Int> = [
        200, 201, 202, 203, 204, 205, 206,
        300, 301, 302, 303, 304, 305, 307, 308,
        400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426,
        500, 501, 502, 503, 504, 505,
    ]

    private static func mayStore(status: Int, headers: HeaderFields, request: CacheControl, authorized: Bool, policy: CachePolicy) -> Bool {
        let response = policy.responseDirectives(headers)
        // With `must-understand`, an understood status overrides `no-store`, and any other is not stored.
        let refused = response.mustUnderstand ? !understoodStatusCodes.contains(status) : response.noStore
        guard !refused, !request.noStore, status >= 200, status != 304 else { return false }
        let shared = policy.role == .shared
        if shared {
            guard !response.isPrivate || response.privateFields != nil else { return false }
            guard !authorized || policy.mayShareAuthorizedResponse(headers) else { return false }
        }
        return Freshness.hasExplicitLifetime(headers: headers, directives: response) || response.isPublic
            || response.isPrivate && !shared || policy.heuristicallyCacheableStatusCodes.contains(status)
    }

    /// The fields a shared cache's own decisions read: a `private="…"` that
    /// names one of them can't be honoured by leaving the field out, so the
    /// response is not stored at all.
    private static let fieldsCachingReads: Set<String> = [
        "cache-control", "expires", "date", "age", "last-modified", "etag", "vary",
        "content-length", "content-range", "content-encoding",
    ]

    /// The record as a cache with `policy` stores it. A shared cache leaves out
    /// the fields a qualified `private="Set-Cookie"` names (RFC 9111 section
    /// 5.2.2.7: it must not store them, and may store the rest); nil when that
    /// directive names a field the cache's own decisions read, and the response
    /// is then not stored. A private cache stores the record as it is.
    func storedForm(policy: CachePolicy) -> CachedResponse? {
        guard policy.role == .shared, let names = directives(policy).privateFields else { return self }
        let targeted = Set(policy.targetedCacheControlFields.map { $0.lowercased() })
        guard names.allSatisfy({ !CachedResponse.fieldsCachingReads.contains($0) && !targeted.contains($0) }) else { return nil }
        var stored = self
        for name in names { stored.headers[name] = nil }
        return stored
    }

    /// Whether the parts in `stored` and a new part with `headers` are of the
    /// same representation, so that they may be combined (RFC 9111 section 3.4):
    /// the same complete length, and the same strong `ETag`, or without entity
    /// tags, the same `Last-Modified`.
    static func partsCombine(_ stored: CachedResponse, with headers: HeaderFields, completeLength: Int) -> Bool {
        guard stored.parts?.completeLength == completeLength else { return false }
        switch (stored.headers["ETag"], headers["ETag"]) {
        case let (old?, new?):
            return !old.hasPrefix("W/") && old.trimmingHTTPWhitespace == new.trimmingHTTPWhitespace
        case (nil, nil):
            guard let old = stored.headers["Last-Modified"], let new = headers["Last-Modified"] else { return false }
            return old.trimmingHTTPWhitespace == new.trimmingHTTPWhitespace
        default:
            return false
        }
    }
}
