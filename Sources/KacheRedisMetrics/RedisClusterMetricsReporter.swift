import CoreMetrics
import KacheMetrics
import KacheRedis

/// Reports a `RedisClusterClient`'s
/// `RedisClusterStatistics` through swift-metrics: how often the
/// cluster moved slots under it, and what failed.
///
/// It reads `client.statistics` when asked (``report()``) or on a schedule
/// (``run(every:)``); each counter gains what its figure gained since the
/// last reading. Commands pay nothing for it.
///
/// ```swift
/// let reporter = RedisClusterMetricsReporter(client: tiered.client)
/// Task { await reporter.run(every: .seconds(10)) }
/// ```
///
/// Counters (each the total since the reporter started):
/// `kache_redis_redirections` by `kind` (`moved`, `ask`), `kache_redis_retries`,
/// `kache_redis_topology_refreshes`, `kache_redis_failures` (commands that
/// failed in the end).
public final class RedisClusterMetricsReporter: Sendable {
    private let statistics: StatisticsReporter<RedisClusterStatistics>

    /// A reporter of `client`'s statistics, its metrics labelled `prefix_…`
    /// with `dimensions` added to each (to tell several clients apart).
    public init(
        client: RedisClusterClient, prefix: String = "kache_redis", dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        typealias Reading = StatisticsReporter<RedisClusterStatistics>.Reading<UInt64>
        func count(_ name: String, _ figure: KeyPath<RedisClusterStatistics, Int> & Sendable, by dimensions: [(String, String)] = [])
            -> Reading
        {
            Reading(name, dimensions) { UInt64(clamping: $0[keyPath: figure]) }
        }
        statistics = StatisticsReporter(
            prefix: prefix, dimensions: dimensions, factory: factory, snapshot: { client.statistics },
            counters: [
                count("redirections", \.movedRedirections, by: [("kind", "moved")]),
                count("redirections", \.askRedirections, by: [("kind", "ask")]),
                count("retries", \.retries),
                count("topology_refreshes", \.topologyRefreshes),
                count("failures", \.failures),
            ],
            gauges: []
        )
    }

    /// Reads the statistics once: each counter gains what its figure gained since the last report.
    public func report() {
        statistics.report()
    }

    /// Reports every `interval` until the task is cancelled, and once more then.
    public func run(every interval: Duration = .seconds(10)) async {
        await statistics.run(every: interval)
    }
}
