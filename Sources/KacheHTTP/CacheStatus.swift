import Foundation
import RawStructuredFieldValues

/// How this cache handled a request, as its member of the response's
/// `Cache-Status` field (RFC 9211) says it: `kache;hit;ttl=42`, or
/// `kache;fwd=stale;fwd-status=304;ttl=60;stored`.
///
/// Sent only when ``CachePolicy/cacheStatusName`` names the cache; a response
/// the cache makes up by itself (the `504` of `only-if-cached`) has none, as
/// RFC 9211 section 2 asks.
struct CacheStatus: Sendable, Equatable {
    /// Why the request went on to the server (RFC 9211 section 2.2).
    enum Forward: String, Sendable {
        /// The cache was set up to stay out of it (``CachePolicy/shouldCache``,
        /// a `no-store` request, several ranges, the caller's `If-Match`…).
        case bypass
        /// The method is not one the cache answers.
        case method
        /// Nothing was stored for the URL.
        case uriMiss = "uri-miss"
        /// Responses were stored for the URL, but none for this request's `Vary` fields.
        case varyMiss = "vary-miss"
        /// Nothing stored could answer the request (a range the stored response can't give).
        case miss
        /// A fresh response was stored, but the request did not allow its use
        /// (`no-cache`, `max-age`, `min-fresh`, or `Authorization` in a shared cache).
        case request
        /// The stored response was stale.
        case stale
        /// Stored parts did not hold the range asked for.
        case partial
    }

    /// The answer came from the cache without a request (a fresh response, or
    /// a stale one within `stale-while-revalidate`).
    var hit = false
    /// Why the request went to the server, when it did.
    var forward: Forward?
    /// The status the server answered the forwarded request with.
    var forwardStatus: Int?
    /// The answer's remaining freshness in seconds (negative when stale), when it is stored.
    var ttl: Int?
    /// The server's answer was stored (or, for a `304`, refreshed the stored one).
    var stored = false
    /// The request shared another's request to the server (request coalescing).
    var collapsed = false

    /// A hit on `response` at `now`.
    static func hit(_ response: CachedResponse, at now: Date) -> CacheStatus {
        CacheStatus(hit: true, ttl: ttl(of: response, at: now))
    }

    /// `response`'s remaining freshness at `now`, in whole seconds (rounded down).
    static func ttl(of response: CachedResponse, at now: Date) -> Int {
        let seconds = response.freshUntil.timeIntervalSince(now).rounded(.down)
        return Int(max(-Double(Int32.max), min(Double(Int32.max), seconds)))
    }

    /// `upstream`, the members of the caches nearer the server, followed by this
    /// cache's member under `cacheName` (RFC 9211 section 2: the last member is
    /// the cache nearest the user). The name goes out as a token when it is one,
    /// else as a string; nil when it is neither (not printable ASCII).
    func appended(to upstream: String?, cacheName: String) -> String? {
        var parameters = OrderedMap<String, RFC9651BareItem>()
        if hit { parameters["hit"] = .bool(true) }
        if let forward { parameters["fwd"] = .token(forward.rawValue) }
        if let forwardStatus { parameters["fwd-status"] = .integer(Int64(forwardStatus)) }
        if let ttl { parameters["ttl"] = .integer(Int64(ttl)) }
        if stored { parameters["stored"] = .bool(true) }
        if collapsed { parameters["collapsed"] = .bool(true) }
        var serialized: [UInt8]?
        for name in [RFC9651BareItem.token(cacheName), .string(cacheName)] where serialized == nil {
            var serializer = StructuredFieldValueSerializer()
            serialized = try? serializer.writeListFieldValue([.item(Item(bareItem: name, parameters: parameters))])
        }
        guard let serialized else { return nil }
        // A list may be split across field lines (RFC 8941 section 3.1), so joining
        // with a comma keeps the upstream members as they were sent, unparsed.
        return HeaderFields.appending(String(decoding: serialized, as: UTF8.self), to: upstream)
    }
}
