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
public struct CachePolicy: Sendable {
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

    /// The heuristically cacheable status codes of RFC 9110 section 15.1.
    public static let defaultHeuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Creates a policy; every argument has a default.
    public init(
        fixedTTL: Duration? = nil,
        maximumTTL: Duration? = nil,
        pool: Kache.Pool? = nil,
        shouldCache: @escaping @Sendable (URL) -> Bool = { _ in true },
        heuristicallyCacheableStatusCodes: Set<Int> = CachePolicy.defaultHeuristicallyCacheableStatusCodes,
        heuristicFreshness: HeuristicFreshness = .browserDefault,
        staleIfError: StaleIfError = .asResponseAllows,
        revalidationWindow: Duration = .seconds(7 * 86_400)
    ) {
        self.fixedTTL = fixedTTL
        self.maximumTTL = maximumTTL
        self.pool = pool
        self.shouldCache = shouldCache
        self.heuristicallyCacheableStatusCodes = heuristicallyCacheableStatusCodes
        self.heuristicFreshness = heuristicFreshness
        self.staleIfError = staleIfError
        self.revalidationWindow = revalidationWindow
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
