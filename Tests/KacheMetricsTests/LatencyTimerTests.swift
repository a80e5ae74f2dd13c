import Foundation
import Kache
import KacheMetrics
import MetricsTestKit
import Testing

/// A wall clock at the real time whose every reading takes `delay`: a get
/// reads it once, so a get takes at least that long.
final class SlowClock: WallClock {
    let delay: Duration

    init(delay: Duration) {
        self.delay = delay
    }

    func now() -> Date {
        Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
        return Date()
    }
}

@Suite struct LatencyTimerTests {
    static let dimensions = [("cache", "test")]

    func timer(_ metrics: TestMetrics, _ operation: String) throws -> TestTimer {
        try metrics.expectTimer("kache_latency", Self.dimensions + [("operation", operation)])
    }

    @Test func timersRecordEachSampledGetAndSetForAsLongAsItTook() throws {
        let cache = try Kache(inMemory: Kache.Configuration(clock: SlowClock(delay: .milliseconds(2))))
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, dimensions: Self.dimensions, latencySampling: 1, factory: metrics)
        #expect(reporter.latencySampling == 1)
        for index in 0 ..< 5 { try cache.set(Data("v".utf8), forKey: "k\(index)", ttl: .seconds(60)) }
        for index in 0 ..< 8 { _ = cache.data(forKey: "k\(index)") }  // 5 hits, 3 misses: both are gets

        let gets = try timer(metrics, "get").values
        let sets = try timer(metrics, "set").values
        #expect(gets.count == 8 && sets.count == 5)
        // Each call read the slow clock at least once (2 ms), and none took a second.
        for nanoseconds in gets + sets {
            #expect(nanoseconds >= 2_000_000 && nanoseconds < 1_000_000_000, "\(nanoseconds) ns")
        }
        try cache.close()
    }

    @Test func asyncGetsAndSetsOfAPoolAreTimedToo() async throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let metrics = TestMetrics()
        _ = KacheMetricsReporter(cache: cache, dimensions: Self.dimensions, latencySampling: 1, factory: metrics)
        let pool = try cache.pool(named: "p", capacity: 10)
        try await pool.set(Data("v".utf8), forKey: "a", ttl: .seconds(60))
        _ = await pool.data(forKey: "a")
        _ = await cache.data(forKey: "a")
        #expect(try timer(metrics, "set").values.count == 1)
        #expect(try timer(metrics, "get").values.count == 2)
        // Real durations of an in-memory cache: above zero, far under a second.
        for nanoseconds in try timer(metrics, "get").values { #expect(nanoseconds > 0 && nanoseconds < 1_000_000_000) }
        try await cache.close()
    }

    @Test func oneGetInTheIntervalIsTimedOnEachThread() throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, dimensions: Self.dimensions, latencySampling: 64, factory: metrics)
        try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
        for _ in 0 ..< 64 * 100 { _ = cache.data(forKey: "k") }
        #expect(reporter.latencySampling == 64)
        #expect(try timer(metrics, "get").values.count == 100)
        // The first set of a thread is timed; the next 63 are not.
        #expect(try timer(metrics, "set").values.count == 1)

        // On several threads at once, whichever counters they share: 1 in 64
        // still (each thread's gets are a multiple of 64, so each counter's are).
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0 ..< 64 * 50 { _ = cache.data(forKey: "k") }
        }
        #expect(try timer(metrics, "get").values.count == 100 + 4 * 50)
        try cache.close()
    }

    @Test func anIntervalIsRoundedUpToAPowerOfTwo() throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let metrics = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, dimensions: Self.dimensions, latencySampling: 100, factory: metrics)
        #expect(reporter.latencySampling == 128)
        for _ in 0 ..< 128 * 3 { _ = cache.data(forKey: "k") }
        #expect(try timer(metrics, "get").values.count == 3)
        try cache.close()
    }

    @Test func withoutSamplingNoTimerIsMadeAndStoppingStopsTheTiming() throws {
        let cache = try Kache(inMemory: Kache.Configuration())
        let untimed = TestMetrics()
        let reporter = KacheMetricsReporter(cache: cache, latencySampling: nil, factory: untimed)
        #expect(reporter.latencySampling == nil)
        _ = cache.data(forKey: "k")
        #expect(untimed.timers.isEmpty)

        let metrics = TestMetrics()
        _ = KacheMetricsReporter(cache: cache, dimensions: Self.dimensions, latencySampling: 1, factory: metrics)
        _ = cache.data(forKey: "k")
        cache.stopSamplingLatencies()
        _ = cache.data(forKey: "k")
        try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
        #expect(try timer(metrics, "get").values.count == 1)
        #expect(try timer(metrics, "set").values.isEmpty)
        try cache.close()
    }
}
