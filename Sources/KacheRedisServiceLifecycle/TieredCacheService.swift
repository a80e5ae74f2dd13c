import Kache
import KacheRedis
import KacheServiceLifecycle
import ServiceLifecycle

/// Runs a `TieredCache` as a `Service` of a swift-service-lifecycle
/// `ServiceGroup`: when the group shuts down, the shared tier is let go and
/// the local cache is saved and closed.
///
/// ``run()`` waits until the group shuts down gracefully or its task is
/// cancelled. Then it closes the tiered cache (invalidation tracking stops,
/// and a client the tiered cache created is shut down), so that no
/// invalidation drops a local copy after the save; then it saves and closes
/// the local cache, as a `KacheService` does.
///
/// ```swift
/// let cache = try await TieredCache(local: Kache(directory: directory), seeds: seeds)
/// let group = ServiceGroup(
///     services: [TieredCacheService(cache: cache), server],   // the cache is shut down last
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// This service owns the local cache's shutdown: add no `KacheService` for
/// `cache.local` beside it. A `RedisClusterClient` passed to the tiered cache
/// by its creator stays open; shut it down after the group returns.
public struct TieredCacheService: Service {
    /// The tiered cache this service closes, with its local cache, when the group shuts down.
    public let cache: TieredCache

    /// A service that closes `cache`, then saves and closes `cache.local`,
    /// when its group shuts down.
    public init(cache: TieredCache) {
        self.cache = cache
    }

    /// Waits for the group's graceful shutdown or the task's cancellation,
    /// then closes the tiered cache, and saves and closes its local cache.
    ///
    /// - Throws: the error of the local cache's `save()` when it fails (the
    ///   local cache is closed all the same); else the error of its `close()`.
    ///   Closing the tiered cache itself never fails.
    public func run() async throws {
        try? await gracefulShutdown()
        await cache.close()
        try await KacheService.saveThenClose(cache.local)
    }
}
