import CoreMetrics
import Kache

/// Reports a cache's `Statistics` through swift-metrics, to whatever
/// backend the application bootstrapped (Prometheus, StatsD, OpenTelemetry…).
///
/// It reads `cache.statistics` when asked (``report()``) or on a schedule
/// (``run(every:)``), and reports what the counters gained since its last
/// reading and what the sizes are now: no counter or gauge is touched by a
/// get or a set. The timers are fed by the cache as it works, from a sample
/// (`Kache.sampleLatencies(every:_:)`): 1 in 1,024 gets and sets by default,
/// so that the hot path pays nothing measurable (kache-bench's W2 against
/// its dictionary floor: CHANGELOG.md, 0.3.0).
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory(...))
/// let reporter = KacheMetricsReporter(cache: cache, dimensions: [("cache", "responses")])
/// Task { try await reporter.run(every: .seconds(10)) }
/// ```
///
/// Counters (each the total since the reporter started):
/// - `kache_hits` by `tier` (`memory`, `disk`), `kache_misses`, `kache_sets`,
///   `kache_expirations`;
/// - `kache_evictions` by `cause`: `capacity` (a full Pool or Queue),
///   `disk_budget`, `memory_budget` (only the value leaves memory; in `memory`
///   durability the entry goes);
/// - `kache_memory_ghost_hits`, `kache_disk_budget_ghost_hits`, `kache_quarantined`, `kache_read_errors`,
///   `kache_write_errors`, `kache_compactions`, `kache_bytes_written`.
///
/// Timers: `kache_latency` by `operation` (`get`, `set`), the duration of
/// each sampled call until it returned to its caller.
///
/// Gauges: `kache_entries`, `kache_entries_in_memory`, `kache_memory_bytes`,
/// `kache_disk_bytes` (what the disk budget counts: allocated plus reserved
/// bytes), `kache_dead_bytes`, `kache_pending_writes`.
public final class KacheMetricsReporter: Sendable {
    private let statistics: StatisticsReporter<Statistics>
    /// The timers take 1 in this many gets and sets on each thread; nil: no timers.
    public let latencySampling: Int?

    /// A reporter of `cache`'s statistics, its metrics labelled `prefix_…`
    /// with `dimensions` added to each (to tell several caches apart).
    ///
    /// - Parameters:
    ///   - cache: the cache whose statistics are read, and which times the sampled calls.
    ///   - prefix: the start of every metric's label.
    ///   - dimensions: added to every metric's own, e.g. `[("cache", "responses")]`.
    ///   - latencySampling: the timers take 1 in this many gets, and 1 in this
    ///     many sets, on each thread (rounded up to a power of two); nil leaves
    ///     the timers out and the cache untimed. A cache times for one reporter
    ///     at a time: the last one made with timers.
    ///   - factory: where the metrics are made; the bootstrapped one by default.
    public init(
        cache: Kache, prefix: String = "kache", dimensions: [(String, String)] = [],
        latencySampling: Int? = 1024, factory: any MetricsFactory = MetricsSystem.factory
    ) {
        typealias Reading<Value> = StatisticsReporter<Statistics>.Reading<Value>
        statistics = StatisticsReporter(
            prefix: prefix, dimensions: dimensions, factory: factory, snapshot: { cache.statistics },
            counters: [
                Reading<UInt64>("hits", [("tier", "memory")]) { $0.memoryHits },
                Reading("hits", [("tier", "disk")]) { $0.diskHits },
                Reading("misses") { $0.misses },
                Reading("sets") { $0.sets },
                Reading("expirations") { $0.expirations },
                Reading("evictions", [("cause", "capacity")]) { $0.evictions },
                Reading("evictions", [("cause", "disk_budget")]) { $0.budgetEvictions },
                Reading("evictions", [("cause", "memory_budget")]) { $0.memoryEvictions },
                Reading("memory_ghost_hits") { $0.memoryGhostHits },
                Reading("disk_budget_ghost_hits") { $0.budgetGhostHits },
                Reading("quarantined") { $0.quarantined },
                Reading("read_errors") { $0.readErrors },
                Reading("write_errors") { $0.writeErrors },
                Reading("compactions") { $0.compactions },
                Reading("bytes_written") { $0.bytesWritten },
            ],
            gauges: [
                Reading<Int>("entries") { $0.entries },
                Reading("entries_in_memory") { $0.entriesInMemory },
                Reading("memory_bytes") { $0.bytesInMemory },
                Reading("disk_bytes") { $0.allocatedBytes + $0.reservedBytes },
                Reading("dead_bytes") { $0.deadBytes },
                Reading("pending_writes") { $0.pendingWrites },
            ]
        )
        guard let latencySampling else {
            self.latencySampling = nil
            return
        }
        let timers = Dictionary(uniqueKeysWithValues: Kache.TimedOperation.allCases.map { operation in
            (operation, CoreMetrics.Timer(label: "\(prefix)_latency", dimensions: dimensions + [("operation", operation.rawValue)], factory: factory))
        })
        self.latencySampling = cache.sampleLatencies(every: latencySampling) { operation, duration in
            timers[operation]?.recordNanoseconds(duration.nanoseconds)
        }
    }

    /// Reads the statistics once: each counter gains what its figure gained
    /// since the last report, each gauge records its figure.
    public func report() {
        statistics.report()
    }

    /// Reports every `interval` until the task is cancelled, and once more then.
    public func run(every interval: Duration = .seconds(10)) async {
        await statistics.run(every: interval)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, as swift-metrics' timers take it.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
