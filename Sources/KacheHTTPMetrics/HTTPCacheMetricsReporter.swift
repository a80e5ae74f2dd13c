import CoreMetrics
import KacheHTTP
import KacheMetrics

/// Reports a `CachingClient`'s `HTTPCacheStatistics`
/// through swift-metrics, as `KacheMetricsReporter` does a cache's.
///
/// It reads `client.statistics` when asked (``report()``) or on a schedule
/// (``run(every:)``); each counter gains what its figure gained since the
/// last reading. Requests pay nothing for it.
///
/// ```swift
/// let client = CachingClient(cache: cache)
/// let reporter = HTTPCacheMetricsReporter(client: client, dimensions: [("client", "api")])
/// Task { await reporter.run(every: .seconds(10)) }
/// ```
///
/// Counters (each the total since the reporter started), named after the
/// statistics' fields: `kache_http_fresh_hits`, `kache_http_revalidations`,
/// `kache_http_misses`, `kache_http_stale_on_error`,
/// `kache_http_stale_while_revalidating`, `kache_http_stores`,
/// `kache_http_store_failures`, `kache_http_too_large_to_store`, `kache_http_bypassed`, `kache_http_coalesced`,
/// `kache_http_bytes_saved`. The cache under the client has its own
/// reporter, `KacheMetricsReporter`.
public final class HTTPCacheMetricsReporter: Sendable {
    private let statistics: StatisticsReporter<HTTPCacheStatistics>

    /// A reporter of `client`'s statistics, its metrics labelled `prefix_…`
    /// with `dimensions` added to each (to tell several clients apart).
    public init(
        client: CachingClient, prefix: String = "kache_http", dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        typealias Reading = StatisticsReporter<HTTPCacheStatistics>.Reading<UInt64>
        statistics = StatisticsReporter(
            prefix: prefix, dimensions: dimensions, factory: factory, snapshot: { client.statistics },
            counters: [
                Reading("fresh_hits") { $0.freshHits },
                Reading("revalidations") { $0.revalidations },
                Reading("misses") { $0.misses },
                Reading("stale_on_error") { $0.staleOnError },
                Reading("stale_while_revalidating") { $0.staleWhileRevalidating },
                Reading("stores") { $0.stores },
                Reading("store_failures") { $0.storeFailures },
                Reading("too_large_to_store") { $0.tooLargeToStore },
                Reading("bypassed") { $0.bypassed },
                Reading("coalesced") { $0.coalesced },
                Reading("bytes_saved") { $0.bytesSaved },
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
