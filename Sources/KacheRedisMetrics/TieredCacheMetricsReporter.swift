import CoreMetrics
import KacheMetrics
import KacheRedis

/// Reports a `TieredCache`'s `SharedTierStatistics`
/// through swift-metrics, as `KacheMetricsReporter` does a cache's.
///
/// It reads `cache.statistics` when asked (``report()``) or on a schedule
/// (``run(every:)``); each counter gains what its figure gained since the
/// last reading. Gets and sets pay nothing for it.
///
/// ```swift
/// let tiered = try await TieredCache(local: local, seeds: ["10.0.0.1:6379"])
/// let reporters = (
///     TieredCacheMetricsReporter(cache: tiered),
///     RedisClusterMetricsReporter(client: tiered.client),
///     KacheMetricsReporter(cache: tiered.local)
/// )
/// ```
///
/// Counters (each the total since the reporter started):
/// - `kache_tier_hits` by `tier` (`local`, `shared`), `kache_tier_misses`;
/// - `kache_tier_read_errors`, `kache_tier_write_errors`, `kache_tier_damaged_records`;
/// - `kache_tier_invalidations_received`, `kache_tier_local_copies_dropped`,
///   `kache_tier_own_writes_checked`, `kache_tier_local_flushes`.
///
/// Gauge: `kache_tier_tracking_invalidations`, 1 while invalidations come
/// from every master, else 0.
///
/// The local tier and the cluster client have reporters of their own
/// (`KacheMetricsReporter`, ``RedisClusterMetricsReporter``): a client shared
/// by several tiered caches is then counted once.
public final class TieredCacheMetricsReporter: Sendable {
    private let statistics: StatisticsReporter<(SharedTierStatistics, tracking: Bool)>

    /// A reporter of `cache`'s statistics, its metrics labelled `prefix_…`
    /// with `dimensions` added to each (to tell several caches apart).
    public init(
        cache: TieredCache, prefix: String = "kache_tier", dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        typealias Reading<Value> = StatisticsReporter<(SharedTierStatistics, tracking: Bool)>.Reading<Value>
        func count(_ name: String, _ figure: KeyPath<SharedTierStatistics, Int> & Sendable, by dimensions: [(String, String)] = [])
            -> Reading<UInt64>
        {
            Reading(name, dimensions) { UInt64(clamping: $0.0[keyPath: figure]) }
        }
        statistics = StatisticsReporter(
            prefix: prefix, dimensions: dimensions, factory: factory,
            snapshot: { (cache.statistics, cache.isTrackingInvalidations) },
            counters: [
                count("hits", \.localHits, by: [("tier", "local")]),
                count("hits", \.sharedHits, by: [("tier", "shared")]),
                count("misses", \.misses),
                count("read_errors", \.readErrors),
                count("write_errors", \.writeErrors),
                count("damaged_records", \.damagedRecords),
                count("invalidations_received", \.invalidationsReceived),
                count("local_copies_dropped", \.localCopiesDropped),
                count("own_writes_checked", \.ownWritesChecked),
                count("local_flushes", \.localFlushes),
            ],
            gauges: [Reading<Int>("tracking_invalidations") { $0.tracking ? 1 : 0 }]
        )
    }

    /// Reads the statistics once: each counter gains what its figure gained
    /// since the last report, the gauge records whether invalidations are tracked.
    public func report() {
        statistics.report()
    }

    /// Reports every `interval` until the task is cancelled, and once more then.
    public func run(every interval: Duration = .seconds(10)) async {
        await statistics.run(every: interval)
    }
}
