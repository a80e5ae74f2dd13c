import Foundation
import Kache
import KacheRedis
import KacheRedisMetrics
import MetricsTestKit
import Testing

/// A tiered cache whose Redis tier is a port nothing listens on (1, which
/// only root may bind), one quick attempt per command: every Redis command
/// fails at once, so reads and writes of the shared tier count as errors,
/// and local hits still count, without a cluster.
func withUnreachableTier<T>(_ body: (TieredCache) async throws -> T) async throws -> T {
    let client = RedisClusterClient(configuration: RedisClusterConfiguration(
        seeds: [NodeAddress(host: "127.0.0.1", port: 1)],
        connection: RedisConnection.Options(commandTimeout: .milliseconds(150), connectTimeout: .milliseconds(150)),
        maximumAttempts: 1
    ))
    let policy = RetryPolicy(maximumAttempts: 1, budget: .milliseconds(150))
    let cache = await TieredCache(
        local: try Kache(inMemory: Kache.Configuration()), client: client,
        configuration: TieredCacheConfiguration(readPolicy: policy, writePolicy: policy, tracksInvalidations: false)
    )
    let result: Result<T, any Error>
    do { result = .success(try await body(cache)) } catch { result = .failure(error) }
    await cache.close()
    await client.shutdown()
    return try result.get()
}

@Suite struct RedisMetricsReporterTests {
    @Test(.timeLimit(.minutes(1))) func tierCountersMoveByWhatTheTieredCacheCounted() async throws {
        try await withUnreachableTier { cache in
            let metrics = TestMetrics()
            let reporter = TieredCacheMetricsReporter(cache: cache, dimensions: [("cache", "test")], factory: metrics)
            try await cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(60))  // local; Redis refuses: a write error
            _ = await cache.data(forKey: "a")  // a local hit
            _ = await cache.data(forKey: "b")  // not local; Redis fails: a read error
            reporter.report()
            var statistics = cache.statistics
            #expect(statistics.localHits == 1 && statistics.readErrors == 1 && statistics.writeErrors == 1)
            expectCounters(metrics, match: statistics)
            #expect(try metrics.expectGauge("kache_tier_tracking_invalidations", [("cache", "test")]).lastValue == 0)

            // A second report adds only what happened since the first.
            _ = await cache.data(forKey: "a")
            _ = await cache.data(forKey: "a")
            reporter.report()
            statistics = cache.statistics
            #expect(statistics.localHits == 3)
            expectCounters(metrics, match: statistics)
        }
    }

    @Test(.timeLimit(.minutes(1))) func clusterCountersMoveByWhatTheClientCounted() async throws {
        try await withUnreachableTier { cache in
            let metrics = TestMetrics()
            let reporter = RedisClusterMetricsReporter(client: cache.client, prefix: "app_redis", factory: metrics)
            _ = await cache.data(forKey: "b")
            _ = await cache.data(forKey: "c")
            reporter.report()
            let statistics = cache.client.statistics
            #expect(statistics.failures == 2)
            let expected: [(String, [(String, String)], Int)] = [
                ("app_redis_redirections", [("kind", "moved")], statistics.movedRedirections),
                ("app_redis_redirections", [("kind", "ask")], statistics.askRedirections),
                ("app_redis_retries", [], statistics.retries),
                ("app_redis_topology_refreshes", [], statistics.topologyRefreshes),
                ("app_redis_failures", [], statistics.failures),
            ]
            for (label, dimensions, value) in expected {
                #expect(metrics.counterTotal(label: label, dimensions: dimensions) == Int64(value), "\(label) \(dimensions)")
            }
        }
    }

    /// Every counter's total in the test backend against the tiered cache's own figure.
    func expectCounters(_ metrics: TestMetrics, match statistics: SharedTierStatistics, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected: [(String, [(String, String)], Int)] = [
            ("hits", [("tier", "local")], statistics.localHits), ("hits", [("tier", "shared")], statistics.sharedHits),
            ("misses", [], statistics.misses), ("read_errors", [], statistics.readErrors),
            ("write_errors", [], statistics.writeErrors), ("damaged_records", [], statistics.damagedRecords),
            ("invalidations_received", [], statistics.invalidationsReceived),
            ("local_copies_dropped", [], statistics.localCopiesDropped),
            ("own_writes_checked", [], statistics.ownWritesChecked), ("local_flushes", [], statistics.localFlushes),
        ]
        for (name, dimensions, value) in expected {
            let total = metrics.counterTotal(label: "kache_tier_\(name)", dimensions: [("cache", "test")] + dimensions)
            #expect(total == Int64(value), "kache_tier_\(name) \(dimensions)", sourceLocation: sourceLocation)
        }
    }
}
