import Foundation
import Kache

/// What a ``CachingClient`` caches and for how long, where the HTTP headers
/// should be overridden.
///
/// The default follows the response headers (RFC 9111, as a private cache),
/// with heuristic freshness on, as browsers have it:
///
/// ```swift
/// var policy = CachePolicy()
/// policy.maximumTTL = .seconds(3600)                          // trust no header beyond an hour
/// policy.pool = try cache.pool(named: "avatars", capacity: 500)
/// policy.shouldCache = { $0.host == "avatars.example.com" }
/// let client = CachingClient(cache: cache, policy: policy)
/// ```
///
/// A gateway or reverse proxy that serves many users from one cache starts
/// from ``shared`` instead:
///
/// ```swift
/// var policy = CachePolicy.shared
/// policy.targetedCacheControlFields = ["CDN-Cache-Control"]   // obey it over Cache-Control
/// ```
public struct CachePolicy: Sendable {
    /// Whose responses the cache holds (RFC 9111 section 1): one user's, or
    /// many users'. A few rules differ between the two.
    public enum Role: Sendable, Equatable {
        /// One user's cache, in a client (the default). `s-maxage` and
        /// `proxy-revalidate` are ignored, `private` responses are stored, and
        /// requests with `Authorization` are cached like others.
        case `private`
        /// A cache that answers many users, in a gateway or reverse proxy.
        /// `s-maxage` replaces `max-age` and `Expires` and forbids serving stale;
        /// `proxy-revalidate` acts as `must-revalidate`; a `private` response is
        /// not stored (with `private="field"`, it is stored without those fields);
        /// a request with `Authorization` is answered from and stored in the cache
        /// only when the response says `public`, `must-revalidate` or `s-maxage`.
        case shared
    }

    /// A policy for a shared cache (``Role/shared``), every other setting at its default.
    ///
    /// ```swift
    /// let client = CachingClient(cache: cache, transport: upstream, policy: .shared)
    /// ```
    public static let shared = CachePolicy(role: .shared)

    /// Whose responses the cache holds (default ``Role/private``).
    public var role: Role
    /// Targeted cache-control fields this cache obeys (RFC 9213), in priority
    /// order, such as `["CDN-Cache-Control"]` (default: none). The first of them
    /// that a response carries with a valid structured-dictionary value replaces
    /// its `Cache-Control` and `Expires` for every decision of this cache; an
    /// invalid one is ignored, as if absent. The fields are stored and passed on unchanged.
    public var targetedCacheControlFields: [String]
    /// When the server's freshness headers are missing, a response may be
    /// given a freshness lifetime from its `Last-Modified` (RFC 9111 section 4.2.2).
    public enum HeuristicFreshness: Sendable, Equatable {
        /// No heuristic: a response without `max-age` or `Expires` is stale at
        /// once (it is still kept for revalidation when it has a validator).
        case off
        /// A `fraction` of the time between `Date` and `Last-Modified` (0.1 is
        /// customary), never more than `limit`.
        case fractionOfAge(Double, limit: Duration)

        /// What browsers do: 10 % of the time since `Last-Modified`, here capped
        /// at 7 days so that a file untouched for years is still checked weekly. The default.
        public static let browserDefault = HeuristicFreshness.fractionOfAge(0.1, limit: .seconds(7 * 86_400))
    }

    /// Whether a stale response may be served when the server can't be
    /// reached or answers `500`, `502`, `503` or `504` (RFC 5861 `stale-if-error`).
    ///
    /// A response marked `must-revalidate` or `no-cache` is never served stale.
    public enum StaleIfError: Sendable, Equatable {
        /// Never: the error reaches the caller.
        case never
        /// Within the window the response's own `stale-if-error=N` allows. The default.
        case asResponseAllows
        /// Within the response's window or `window`, whichever is longer; every
        /// stored response is then kept that much longer after it goes stale.
        case atLeast(Duration)
    }

    /// A freshness lifetime that replaces the one from `max-age`, `Expires`
    /// or heuristics (nil, the default, takes the headers'). `no-store` and
    /// `no-cache` still apply.
    public var fixedTTL: Duration?
    /// The longest freshness lifetime any response gets, whatever its headers
    /// say (nil, the default, for no cap).
    public var maximumTTL: Duration?
    /// The Pool responses are stored into (nil, the default, for the cache's top
    /// level). It must come from the client's own cache:
    /// `try cache.pool(named: "avatars", capacity: 500)`.
    public var pool: Kache.Pool?
    /// Which URLs are cached; requests for the others go to the network and
    /// are neither looked up nor stored. The default caches every URL.
    public var shouldCache: @Sendable (URL) -> Bool
    /// The status codes whose responses are stored, and given a heuristic
    /// lifetime, without a `max-age` or `Expires` of their own (default: the
    /// heuristically cacheable codes of RFC 9110 section 15.1). A response of any
    /// final status that states its own lifetime is stored whatever this says.
    public var heuristicallyCacheableStatusCodes: Set<Int>
    /// Freshness from `Last-Modified` when the headers give none (default
    /// ``HeuristicFreshness/browserDefault``: 10 %, at most 7 days). It never applies
    /// to a response with `max-age`, `Expires` (even an invalid one) or `no-cache`.
    public var heuristicFreshness: HeuristicFreshness
    /// Serving stale responses on errors (default ``StaleIfError/asResponseAllows``).
    public var staleIfError: StaleIfError
    /// How long a stale response with an `ETag` or `Last-Modified` is kept so that
    /// it can be revalidated with a conditional request (default 7 days).
    public var revalidationWindow: Duration
    /// The name this cache gives itself in a `Cache-Status` field (RFC 9211) on
    /// every response it returns, after the members of caches nearer the server;
    /// nil (the default) sends none. A name that is an RFC 8941 token goes out as
    /// one (`kache;hit;ttl=42`), another as a string (`"edge 1";fwd=stale`).
    ///
    /// ```swift
    /// policy.cacheStatusName = "kache"
    /// ```
    public var cacheStatusName: String?
    /// The pseudonym a shared cache names itself by in `Via` (RFC 9110 section
    /// 7.6.3), such as `"kache"`: `1.1 kache` is appended to the `Via` of every
    /// request it sends upstream and of every response it returns. Nil (the
    /// default) adds nothing, and a private cache never adds it. Set it when the
    /// gateway built on the client does not write `Via` itself; a value that is
    /// not a token (RFC 9110 section 5.6.2: letters, digits and a few symbols) is not sent.
    ///
    /// ```swift
    /// var policy = CachePolicy.shared
    /// policy.viaPseudonym = "edge-cache"
    /// ```
    public var viaPseudonym: String?

    /// The heuristically cacheable status codes of RFC 9110 section 15.1.
    public static let defaultHeuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Creates a policy; every argument has a default.
    public init(
        role: Role = .private,
        targetedCacheControlFields: [String] = [],
        fixedTTL: Duration? = nil,
        maximumTTL: Duration? = nil,
        pool: Kache.Pool? = nil,
        shouldCache: @escaping @Sendable (URL) -> Bool = { _ in true },
        heuristicallyCacheableStatusCodes: Set<Int> = CachePolicy.defaultHeuristicallyCacheableStatusCodes,
        heuristicFreshness: HeuristicFreshness = .browserDefault,
        staleIfError: StaleIfError = .asResponseAllows,
        revalidationWindow: Duration = .seconds(7 * 86_400),
        cacheStatusName: String? = nil,
        viaPseudonym: String? = nil
    ) {
        self.role = role
        self.targetedCacheControlFields = targetedCacheControlFields
        self.fixedTTL = fixedTTL
        self.maximumTTL = maximumTTL
        self.pool = pool
        self.shouldCache = shouldCache
        self.heuristicallyCacheableStatusCodes = heuristicallyCacheableStatusCodes
        self.heuristicFreshness = heuristicFreshness
        self.staleIfError = staleIfError
        self.revalidationWindow = revalidationWindow
        self.cacheStatusName = cacheStatusName
        self.viaPseudonym = viaPseudonym
    }

    // MARK: - The directives this cache obeys

    /// A response's directives as stated for this cache: those of the first
    /// targeted field (``targetedCacheControlFields``) that is present and
    /// valid, else those of `Cache-Control`.
    func statedDirectives(_ headers: HeaderFields) -> CacheControl {
        for name in targetedCacheControlFields {
            if let value = headers[name], let directives = CacheControl(targetedField: value) { return directives }
        }
        return CacheControl(headers["Cache-Control"])
    }

    /// A response's directives as this cache acts on them. For a shared cache,
    /// `s-maxage` takes the place of `max-age` and (like `proxy-revalidate`)
    /// sets `must-revalidate` (RFC 9111 sections 5.2.2.8 and 5.2.2.10); a
    /// private cache takes the stated directives as they are.
    func responseDirectives(_ headers: HeaderFields) -> CacheControl {
        var directives = statedDirectives(headers)
        guard role == .shared else { return directives }
        if let sharedMaxAge = directives.sharedMaxAge {
            directives.maxAge = sharedMaxAge
            directives.mustRevalidate = true
        }
        if directives.proxyRevalidate { directives.mustRevalidate = true }
        return directives
    }

    /// Whether a response to a request with `Authorization` may be stored and
    /// reused by this cache (RFC 9111 section 3.5): always by a private cache;
    /// by a shared one only when the response says `public`, `must-revalidate` or `s-maxage`.
    func mayShareAuthorizedResponse(_ headers: HeaderFields) -> Bool {
        guard role == .shared else { return true }
        let stated = statedDirectives(headers)
        return stated.isPublic || stated.mustRevalidate || stated.sharedMaxAge != nil
    }

    /// This cache's `Via` member, `1.1 <pseudonym>`, or nil when it adds none:
    /// only a shared cache with a ``viaPseudonym`` that is a token adds one.
    /// Foundation does not say which HTTP version a message arrived in, so the
    /// member always names 1.1.
    var viaMember: String? {
        guard role == .shared, let viaPseudonym, viaPseudonym.isHTTPToken else { return nil }
        return "1.1 " + viaPseudonym
    }

    /// Seconds after going stale during which a response with these directives
    /// may be served on an error, or nil when it may not be.
    func staleIfErrorWindow(_ directives: CacheControl) -> TimeInterval? {
        guard !directives.mustRevalidate, !directives.noCache else { return nil }
        let stated = directives.staleIfError.map(TimeInterval.init)
        switch staleIfError {
        case .never: return nil
        case .asResponseAllows: return stated
        case let .atLeast(window): return max(stated ?? 0, window.seconds)
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
