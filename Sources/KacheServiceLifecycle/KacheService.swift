import Kache
import ServiceLifecycle

/// Runs a `Kache` cache as a `Service` of a swift-service-lifecycle
/// `ServiceGroup`: when the group shuts down, the cache is saved and closed.
///
/// ``run()`` waits, doing nothing, until the group shuts down gracefully (a
/// signal such as SIGTERM, or `triggerGracefulShutdown()`) or its task is
/// cancelled. Then it calls `save()`, which makes every set acknowledged so
/// far durable, whatever the durability mode, and `close()`, which releases
/// the directory's lock.
///
/// A group shuts its services down in reverse order, each after the one
/// listed after it has returned: list the cache before the services that
/// use it, so that their last sets come before the save.
///
/// ```swift
/// let cache = try Kache(directory: URL(fileURLWithPath: "/var/cache/myapp"))
/// let group = ServiceGroup(
///     services: [KacheService(cache: cache), server],   // the cache is shut down last
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// Run one service per cache: a second one's save finds the cache closed and
/// throws `KacheError.closed`. A `TieredCacheService` (product
/// `KacheRedisServiceLifecycle`) saves and closes its local cache itself.
public struct KacheService: Service {
    /// The cache this service saves and closes when the group shuts down.
    public let cache: Kache

    /// A service that saves and closes `cache` when its group shuts down.
    public init(cache: Kache) {
        self.cache = cache
    }

    /// Waits for the group's graceful shutdown or the task's cancellation,
    /// then saves and closes the cache; the save and the close run to their
    /// end even when the task is cancelled.
    ///
    /// - Throws: the error of `save()` when it fails (the cache is closed all
    ///   the same, and a failure of the close is then only logged, through the
    ///   cache's `configuration.logger`); else the error of `close()` when it fails.
    public func run() async throws {
        // Cancellation ends the wait as shutdown does; it is not an error of the
        // service, whose work (saving) still lies ahead.
        try? await gracefulShutdown()
        try await Self.saveThenClose(cache)
    }

    /// Saves `cache`, then closes it even when the save failed; throws the
    /// save's error first, else the close's.
    package static func saveThenClose(_ cache: Kache) async throws {
        var saveError: (any Error)?
        do {
            try await cache.save()
        } catch {
            saveError = error
        }
        do {
            try await cache.close()
        } catch {
            guard let saveError else { throw error }
            cache.configuration.logger.error(
                "Kache could not close \(cache.directory?.path ?? "the cache") after a failed save: \(error)"
            )
            throw saveError
        }
        if let saveError { throw saveError }
    }
}
