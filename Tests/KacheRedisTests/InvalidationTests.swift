import Foundation
import Kache
import KacheTestSupport
import Synchronization
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct InvalidationTests {
        /// Another process sets or removes a key; this one's local copy goes.
        /// The lag is from just before the peer's write to the moment this
        /// process dropped its copy, on the one wall clock both read.
        @Test(.timeLimit(.minutes(2))) func anotherProcessChangeDropsTheLocalCopyWithin100ms() async throws {
            try await LiveCluster.with { cluster in
                let seeds = cluster.seeds.map(\.description).joined(separator: ",")
                let dropped = Mutex<[String: Int64]>([:])
                let clock = SystemClock()
                let client = cluster.client()
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), client: client,
                    configuration: TieredCacheConfiguration(onInvalidation: { key in
                        let now = clock.nanosecondsSince1970()
                        dropped.withLock { $0[key] = now }
                    })
                )
                #expect(cache.isTrackingInvalidations)
                let peer = try PeerProcess(seeds: seeds)
                #expect(try await peer.nextLine() == "ready")
                var lags: [Double] = []
                for round in 0..<60 {
                    let key = "lag:\(round)"
                    _ = try await peer.ask("set \(key) first")
                    try await waitUntil("the peer's first set of \(key) drops it here", timeout: .seconds(5)) { dropped.withLock { $0[key] != nil } }
                    #expect(await cache.data(forKey: key) == Data("first".utf8))
                    await #expect(cache.local.data(forKey: key) != nil)
                    dropped.withLock { $0[key] = nil }
                    let answer = try await peer.ask(round % 4 == 3 ? "remove \(key)" : "set \(key) second")
                    let started = try #require(Int64(answer.split(separator: " ").last ?? ""), "peer said \(answer)")
                    try await waitUntil("the peer's change of \(key) drops it here", timeout: .seconds(2)) { dropped.withLock { $0[key] != nil } }
                    if let at = dropped.withLock({ $0[key] }) { lags.append(Double(at - started) / 1e6) }
                    await #expect(cache.local.data(forKey: key) == nil)
                    #expect(await cache.data(forKey: key) == (round % 4 == 3 ? nil : Data("second".utf8)))
                }
                await peer.stop()
                await cache.close()
                await client.shutdown()
                lags.sort()
                #expect(lags.count == 60)
                let p50 = lags[lags.count / 2], p99 = lags[min(lags.count - 1, Int(Double(lags.count) * 0.99))]
                print("invalidation lag between two processes over \(lags.count) changes: p50 \(String(format: "%.2f", p50)) ms, p99 \(String(format: "%.2f", p99)) ms, max \(String(format: "%.2f", lags.last ?? 0)) ms")
                #expect(p99 <= 100)
            }
        }
    }
}
