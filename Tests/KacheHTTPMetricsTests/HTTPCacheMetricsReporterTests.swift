import Foundation
import Kache
import KacheHTTP
import KacheHTTPMetrics
import MetricsTestKit
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server in a closure: every response is cacheable for 60 s and carries
/// an ETag; a request with `If-None-Match` gets `304 Not Modified`. Its
/// `Date` is the client's clock, so that a response is fresh when it arrives.
struct ScriptedTransport: HTTPTransport {
    let clock: ManualClock

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let conditional = request.value(forHTTPHeaderField: "If-None-Match") != nil
        let response = HTTPURLResponse(
            url: request.url!, statusCode: conditional ? 304 : 200, httpVersion: "HTTP/1.1",
            headerFields: ["Cache-Control": "max-age=60", "ETag": "\"v1\"", "Date": HTTPDate.string(from: clock.now())]
        )!
        return (conditional ? Data() : Data(String(repeating: "body ", count: 20).utf8), response)
    }
}

/// An HTTP `Date` field's value (RFC 9110's IMF-fixdate).
enum HTTPDate {
    static func string(from date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

@Suite struct HTTPCacheMetricsReporterTests {
    @Test func eachCounterMovesByWhatTheClientCounted() async throws {
        let clock = ManualClock(Date())
        let cache = try Kache(inMemory: Kache.Configuration(clock: clock))
        let client = CachingClient(cache: cache, transport: ScriptedTransport(clock: clock))
        let metrics = TestMetrics()
        let reporter = HTTPCacheMetricsReporter(client: client, dimensions: [("client", "test")], factory: metrics)
        let url = URL(string: "https://example.test/a")!

        _ = try await client.data(from: url)  // a miss, stored
        _ = try await client.data(from: url)  // a fresh hit
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        _ = try await client.data(for: post)  // bypassed
        reporter.report()
        var statistics = client.statistics
        #expect(statistics.misses == 1 && statistics.freshHits == 1 && statistics.bypassed == 1 && statistics.bytesSaved > 0)
        expectCounters(metrics, match: statistics)

        // Stale after 61 s: revalidated by a 304, and only that is added.
        clock.advance(by: .seconds(61))
        _ = try await client.data(from: URL(string: "https://example.test/b")!)
        _ = try await client.data(from: URL(string: "https://example.test/b")!)
        clock.advance(by: .seconds(61))
        _ = try await client.data(from: URL(string: "https://example.test/b")!)
        reporter.report()
        statistics = client.statistics
        #expect(statistics.revalidations == 1 && statistics.misses == 2 && statistics.freshHits == 2)
        expectCounters(metrics, match: statistics)
        try await cache.close()
    }

    @Test func runReportsUntilItsTaskIsCancelledAndOnceMoreThen() async throws {
        let clock = ManualClock(Date())
        let cache = try Kache(inMemory: Kache.Configuration(clock: clock))
        let client = CachingClient(cache: cache, transport: ScriptedTransport(clock: clock))
        let metrics = TestMetrics()
        let reporter = HTTPCacheMetricsReporter(client: client, prefix: "app_http", factory: metrics)
        let task = Task { await reporter.run(every: .milliseconds(10)) }
        _ = try await client.data(from: URL(string: "https://example.test/a")!)
        for _ in 0 ..< 500 where metrics.counterTotal(label: "app_http_misses") == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(metrics.counterTotal(label: "app_http_misses") == 1)
        _ = try await client.data(from: URL(string: "https://example.test/a")!)
        task.cancel()
        await task.value
        #expect(metrics.counterTotal(label: "app_http_fresh_hits") == 1)
        try await cache.close()
    }

    /// Every counter's total in the test backend against the client's own figure.
    func expectCounters(_ metrics: TestMetrics, match statistics: HTTPCacheStatistics, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected: [(String, UInt64)] = [
            ("fresh_hits", statistics.freshHits), ("revalidations", statistics.revalidations), ("misses", statistics.misses),
            ("stale_on_error", statistics.staleOnError), ("stale_while_revalidating", statistics.staleWhileRevalidating),
            ("stores", statistics.stores), ("store_failures", statistics.storeFailures),
            ("too_large_to_store", statistics.tooLargeToStore), ("bypassed", statistics.bypassed),
            ("coalesced", statistics.coalesced), ("bytes_saved", statistics.bytesSaved),
        ]
        for (name, value) in expected {
            let total = metrics.counterTotal(label: "kache_http_\(name)", dimensions: [("client", "test")])
            #expect(total == Int64(value), "kache_http_\(name)", sourceLocation: sourceLocation)
        }
    }
}

