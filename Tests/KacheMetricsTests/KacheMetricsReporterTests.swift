import Foundation
import Kache
import KacheMetrics
import MetricsTestKit
import Testing

@Suite struct KacheMetricsReporterTests {
    /// A cache on disk whose memory holds about 4 of its 1 KiB values, so
    /// that reads come from both tiers.
    func openCache(_ folder: URL, clock: ManualClock) throws -> Kache {
        var configuration = Kache.Configuration()
        configuration.durability = .sync
        configuration.memoryBudget = 4 * 1120
        configuration.clock = clock
        return try Kache(directory: folder, configuration: configuration)
    }

    func scratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kache-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Every counter's total, read from the test backend, against the cache's own figure.
    func expectCounters(_ metrics: TestMetrics, match statistics: Statistics, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected: [(String, [(String, String)], UInt64)] = [
            ("kache_hits", [("tier", "memory")], statistics.memoryHits),
            ("kache_hits", [("tier", "disk")], statistics.diskHits),
            ("kache_misses", [], statistics.misses),
            ("kache_sets", [], statistics.sets),
            ("kache_expirations", [], statistics.expirations),
            ("kache_evictions", [("cause", "capacity")], statistics.evictions),
            ("kache_evictions", [("cause", "disk_budget")], statistics.budgetEvictions),
            ("kache_evictions", [("cause", "memory_budget")], statistics.memoryEvictions),
            ("kache_memory_ghost_hits", [], statistics.memoryGhostHits),
            ("kache_disk_budget_ghost_hits", [], statistics.budgetGhostHits),
            ("kache_quarantined", [], statistics.quarantined),
            ("kache_read_errors", [], statistics.readErrors),
            ("kache_write_errors", [], statistics.writeErrors),
            ("kache_bytes_written", [], statistics.bytesWritten),
        ]
        for (label, dimensions, value) in expected {
            let total = metrics.counterTotal(label: label, dimensions: [("cache", "test")] + dimensions)
            #expect(total == Int64(value), "\(label) \(dimensions)", sourceLocation: sourceLocation)
        }
    }

    @Test func eachCounterMovesByWhatTheCacheCountedAndGaugesShowTheSizesNow() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = ManualClock()
        let cache = try openCache(folder, clock: clock)
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, dimensions: [("cache", "test")], factory: metrics)

        let value = Data(repeating: 7, count: 1024)
        for index in 0 ..< 12 { try cache.set(value, forKey: "key-\(index)", ttl: .seconds(index < 3 ? 60 : 3600)) }
        for index in 0 ..< 12 { _ = cache.data(forKey: "key-\(index)") }
        _ = cache.data(forKey: "never-set")
        let pool = try cache.pool(named: "avatars", capacity: 2)
        for index in 0 ..< 3 { try pool.set(value, forKey: "user-\(index)", ttl: .seconds(600 + index)) }
        reporter.report()
        var statistics = cache.statistics
        // The traffic above moved each of these, so a counter left out or crossed would show.
        #expect(statistics.memoryHits > 0 && statistics.diskHits > 0 && statistics.misses == 1)
        #expect(statistics.evictions == 1 && statistics.memoryEvictions > 0)
        expectCounters(metrics, match: statistics)
        #expect(try metrics.expectGauge("kache_entries", [("cache", "test")]).lastValue == Double(statistics.entries))
        #expect(try metrics.expectGauge("kache_memory_bytes", [("cache", "test")]).lastValue == Double(statistics.bytesInMemory))
        #expect(try metrics.expectGauge("kache_disk_bytes", [("cache", "test")]).lastValue
            == Double(statistics.allocatedBytes + statistics.reservedBytes))

        // A second report adds only what happened since the first.
        clock.advance(by: .seconds(120))
        try cache.set(value, forKey: "after", ttl: .seconds(60))
        _ = cache.data(forKey: "key-5")
        reporter.report()
        statistics = cache.statistics
        #expect(statistics.expirations == 3)
        expectCounters(metrics, match: statistics)
        #expect(try metrics.expectGauge("kache_entries", [("cache", "test")]).lastValue == Double(statistics.entries))
        try cache.close()
    }

    @Test func aReportWithNothingNewAddsNothing() throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, dimensions: [("cache", "test")], factory: metrics)
        try cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(60))
        reporter.report()
        reporter.report()
        #expect(metrics.counterTotal(label: "kache_sets", dimensions: [("cache", "test")]) == 1)
        try cache.close()
    }

    @Test func runReportsUntilItsTaskIsCancelledAndOnceMoreThen() async throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, prefix: "app_cache", factory: metrics)
        let task = Task { await reporter.run(every: .milliseconds(10)) }
        try await cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(60))
        // Waits for the state: the set reported, within a bounded number of tries.
        for _ in 0 ..< 500 where metrics.counterTotal(label: "app_cache_sets") == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(metrics.counterTotal(label: "app_cache_sets") == 1)
        try await cache.set(Data("b".utf8), forKey: "b", ttl: .seconds(60))
        task.cancel()
        await task.value
        // The report made as it stopped counts the last set.
        #expect(metrics.counterTotal(label: "app_cache_sets") == 2)
        try await cache.close()
    }
}
