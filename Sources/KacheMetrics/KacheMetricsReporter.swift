import CoreMetrics
import Kache
import Synchronization

/// Reports a cache's ``Statistics`` through swift-metrics, to whatever
/// backend the application bootstrapped (Prometheus, StatsD, OpenTelemetry…).
///
/// It reads `cache.statistics` when asked (``report()``) or on a schedule
/// (``run(every:)``), and reports what the counters gained since its last
/// reading and what the sizes are now. The cache's hot path pays nothing:
/// no metric is touched by a get or a set.
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
/// Gauges: `kache_entries`, `kache_entries_in_memory`, `kache_memory_bytes`,
/// `kache_disk_bytes` (what the disk budget counts: allocated plus reserved
/// bytes), `kache_dead_bytes`, `kache_pending_writes`.
public final class KacheMetricsReporter: Sendable {
    private let cache: Kache
    private let counters: [(metric: Counter, reading: @Sendable (Statistics) -> UInt64)]
    private let gauges: [(metric: Gauge, reading: @Sendable (Statistics) -> Int)]
    /// The counters' values at the last report.
    private let lastCounts: Mutex<[UInt64]>

    /// A reporter of `cache`'s statistics, its metrics labelled `prefix_…`
    /// with `dimensions` added to each (to tell several caches apart).
    public init(
        cache: Kache, prefix: String = "kache", dimensions: [(String, String)] = [],
        factory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.cache = cache
        func counter(_ name: String, _ extra: [(String, String)] = [], _ reading: @escaping @Sendable (Statistics) -> UInt64)
            -> (metric: Counter, reading: @Sendable (Statistics) -> UInt64)
        {
            (Counter(label: "\(prefix)_\(name)", dimensions: dimensions + extra, factory: factory), reading)
        }
        func gauge(_ name: String, _ reading: @escaping @Sendable (Statistics) -> Int) -> (metric: Gauge, reading: @Sendable (Statistics) -> Int) {
            (Gauge(label: "\(prefix)_\(name)", dimensions: dimensions, factory: factory), reading)
        }
        counters = [
            counter("hits", [("tier", "memory")]) { $0.memoryHits },
            counter("hits", [("tier", "disk")]) { $0.diskHits },
            counter("misses") { $0.misses },
            counter("sets") { $0.sets },
            counter("expirations") { $0.expirations },
            counter("evictions", [("cause", "capacity")]) { $0.evictions },
            counter("evictions", [("cause", "disk_budget")]) { $0.budgetEvictions },
            counter("evictions", [("cause", "memory_budget")]) { $0.memoryEvictions },
            counter("memory_ghost_hits") { $0.memoryGhostHits },
            counter("disk_budget_ghost_hits") { $0.budgetGhostHits },
            counter("quarantined") { $0.quarantined },
            counter("read_errors") { $0.readErrors },
            counter("write_errors") { $0.writeErrors },
            counter("compactions") { $0.compactions },
            counter("bytes_written") { $0.bytesWritten },
        ]
        gauges = [
            gauge("entries") { $0.entries },
            gauge("entries_in_memory") { $0.entriesInMemory },
            gauge("memory_bytes") { $0.bytesInMemory },
            gauge("disk_bytes") { $0.allocatedBytes + $0.reservedBytes },
            gauge("dead_bytes") { $0.deadBytes },
            gauge("pending_writes") { $0.pendingWrites },
        ]
        lastCounts = Mutex(Array(repeating: 0, count: counters.count))
    }

    /// Reads the statistics once: each counter gains what its figure gained
    /// since the last report, each gauge records its figure.
    public func report() {
        lastCounts.withLock { last in
            // Under the lock, so that two reports never count one gain twice.
            let statistics = cache.statistics
            for (index, counter) in counters.enumerated() {
                let now = counter.reading(statistics)
                // A figure only grows while the cache is open; one that went back is not counted again.
                if now > last[index] { counter.metric.increment(by: now - last[index]) }
                last[index] = now
            }
            for gauge in gauges { gauge.metric.record(gauge.reading(statistics)) }
        }
    }

    /// Reports every `interval` until the task is cancelled, and once more then.
    public func run(every interval: Duration = .seconds(10)) async {
        defer { report() }
        while !Task.isCancelled {
            report()
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
