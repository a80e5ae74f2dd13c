import KacheStorage
import Foundation
import Kache
import KacheTestSupport
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
                let dropped = Locked<[String: Int64]>([:])
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
    

        /// Every connection to one master is killed (`CLIENT KILL TYPE normal`),
        /// its tracking link among them. When tracking resumes there, the local
        /// copies of keys in that master's slots are dropped (their changes may
        /// have been missed meanwhile) and read from Redis again; copies of the
        /// other masters' slots stay, and the local tier is never emptied whole.
        @Test(.timeLimit(.minutes(1))) func aGapOnOneNodesLinkDropsOnlyTheKeysOfItsSlots() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                #expect(cache.isTrackingInvalidations)
                let map = try await client.refreshTopology()
                let keys = (0..<90).map { "gap:\($0)" }
                for key in keys { try await cache.set(Data(key.utf8), forKey: key, ttl: .seconds(120)) }
                // Own writes come back as invalidations and are checked; let them settle first.
                try await waitUntil("the cache's own writes are checked", timeout: .seconds(10)) { cache.statistics.ownWritesChecked == keys.count }
                let node = try #require(map.masterNodes.first)
                let ofNode = Set(keys.filter { map.master(for: HashSlot(key: "kache:" + $0)) == node })
                #expect(!ofNode.isEmpty && ofNode.count < keys.count)

                let killed = try await cluster.cli(node.port, ["client", "kill", "type", "normal", "skipme", "yes"])
                #expect(killed.status == 0 && (Int(killed.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 1, "CLIENT KILL said \(killed.output)")
                try await waitUntil("tracking resumes on \(node)", timeout: .seconds(10)) { cache.statistics.trackingGaps >= 1 && cache.isTrackingInvalidations }

                for key in keys {
                    let local = await cache.local.data(forKey: key)
                    if ofNode.contains(key) {
                        #expect(local == nil, "\(key), in the slots of \(node), kept its local copy through the gap")
                    } else {
                        #expect(local == Data(key.utf8), "\(key), of another master, lost its local copy")
                    }
                }
                #expect(cache.statistics.trackingGaps == 1)
                #expect(cache.statistics.localCopiesDroppedAfterGaps == ofNode.count)
                #expect(cache.statistics.localFlushes == 0)
                // The dropped keys are read from Redis again.
                for key in ofNode { #expect(await cache.data(forKey: key) == Data(key.utf8)) }
                await cache.close()
                await client.shutdown()
            }
        }

        /// A key changed in Redis while the tracking link of its master was
        /// down (the change's invalidation was never sent to this cache) is not
        /// served from the old local copy once tracking resumes.
        @Test(.timeLimit(.minutes(1))) func aChangeMissedDuringAGapIsNotServedAfterIt() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                // Checks every 2 s, so the change below lands while the link is down.
                let cache = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), client: client,
                    configuration: TieredCacheConfiguration(trackingCheckInterval: .seconds(2))
                )
                let writer = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), client: cluster.client(),
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                try await writer.set(Data("old".utf8), forKey: "missed", ttl: .seconds(120))
                try await waitUntil("the first set is reported", timeout: .seconds(5)) { cache.statistics.invalidationsReceived == 1 }
                #expect(await cache.data(forKey: "missed") == Data("old".utf8))
                await #expect(cache.local.data(forKey: "missed") == Data("old".utf8))
                let node = try #require(try await client.refreshTopology().master(for: HashSlot(key: "kache:missed")))
                // Kill only the tracking connection (flag B: broadcast tracking), then write.
                let clients = try await cluster.cli(node.port, ["client", "list"]).output
                let trackingIDs = clients.split(separator: "\n").compactMap { line -> String? in
                    let fields = Dictionary(line.split(separator: " ").compactMap { field -> (String, String)? in
                        guard let equals = field.firstIndex(of: "=") else { return nil }
                        return (String(field[..<equals]), String(field[field.index(after: equals)...]))
                    }, uniquingKeysWith: { first, _ in first })
                    guard let flags = fields["flags"], flags.contains("B") else { return nil }
                    return fields["id"]
                }
                let trackingID = try #require(trackingIDs.first, "no tracking client on \(node):\n\(clients)")
                _ = try await cluster.cli(node.port, ["client", "kill", "id", trackingID])
                try await writer.set(Data("new".utf8), forKey: "missed", ttl: .seconds(120))
                try await waitUntil("tracking resumes on \(node)", timeout: .seconds(10)) { cache.statistics.trackingGaps >= 1 && cache.isTrackingInvalidations }
                #expect(cache.statistics.invalidationsReceived == 1, "the change was reported after all: the test missed the gap")
                #expect(await cache.data(forKey: "missed") == Data("new".utf8))
                await writer.close()
                await writer.client.shutdown()
                await cache.close()
                await client.shutdown()
            }
        }
    }
}
