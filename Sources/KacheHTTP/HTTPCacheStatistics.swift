/// What a ``CachingClient`` did with the requests it was given, read through
/// ``CachingClient/statistics``. Counters start at zero with the client.
///
/// ```swift
/// let stats = client.statistics
/// print("\(stats.freshHits) fresh, \(stats.revalidations) revalidated, \(stats.bytesSaved) bytes saved")
/// ```
public struct HTTPCacheStatistics: Sendable, Equatable, Codable {
    /// GET requests answered from the cache without touching the network.
    public var freshHits: UInt64 = 0
    /// GET requests whose stored response a `304 Not Modified` confirmed: one
    /// conditional request, and no body downloaded.
    public var revalidations: UInt64 = 0
    /// Cacheable GET requests whose body came from the network: nothing usable
    /// was stored, or the stored response was stale and had no validator, or
    /// the server sent a new representation on revalidation.
    public var misses: UInt64 = 0
    /// Requests answered with a stale response because the server could not be
    /// reached or answered 500, 502, 503 or 504 (`stale-if-error`).
    public var staleOnError: UInt64 = 0
    /// Requests answered at once with a stale response within its
    /// `stale-while-revalidate` window, while a revalidation ran in the background.
    public var staleWhileRevalidating: UInt64 = 0
    /// Responses written to the cache (new ones and ones refreshed by a `304`).
    public var stores: UInt64 = 0
    /// Responses the cache engine refused to store (too large, disk full…);
    /// the caller still got the response.
    public var storeFailures: UInt64 = 0
    /// Responses ``CachingClient/stream(for:)`` passed through without storing
    /// them, because their body grew longer than the cache stores (the cache's
    /// `maximumValueSize`) and was no longer kept in memory for it. The caller
    /// still got the whole body.
    public var tooLargeToStore: UInt64 = 0
    /// Requests that went to the network without the cache: other methods than
    /// GET, URLs the policy excludes, requests with their own conditional fields
    /// or with `Cache-Control: no-store`.
    public var bypassed: UInt64 = 0
    /// Requests that found nothing usable while the same request was already
    /// on its way, and shared its answer instead of sending another.
    public var coalesced: UInt64 = 0
    /// Body bytes served from the cache instead of being downloaded: fresh hits,
    /// `304` revalidations and stale-while-revalidate answers.
    public var bytesSaved: UInt64 = 0

    /// Creates statistics with every counter at zero.
    public init() {}

    /// Fresh hits, revalidations and stale-while-revalidate answers over the
    /// cacheable GET requests that were answered.
    public var hitRatio: Double {
        let served = freshHits + revalidations + staleWhileRevalidating
        let answered = served + misses + staleOnError
        return answered == 0 ? 0 : Double(served) / Double(answered)
    }
}
