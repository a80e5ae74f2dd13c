import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct FailoverTests {
        /// A master is killed (SIGKILL, by its pid). The local tier answers
        /// throughout; once its replica takes over, the client finds it and
        /// the shared tier works again for the slots the dead master held.
        @Test(.timeLimit(.minutes(2))) func killingAMaster_localTierServesAndSharedTierResumesWithin10s() async throws {
            try await LiveCluster.with(replicas: true) { cluster in
                let client = cluster.client()
                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                let map = try await client.refreshTopology()
                let victim = map.shards.first { $0.slots.contains(0) }!
                let keys = (0..<300).map { "failover:\($0)" }
                for key in keys { try await cache.set(Data(key.utf8), forKey: key, ttl: .seconds(120)) }
                let doomedKey = try #require(keys.first { map.master(for: HashSlot(key: "kache:" + $0)) == victim.master })
                #expect(cache.statistics.writeErrors == 0)

                let pid = try #require(zip(cluster.ports, cluster.pids).first { $0.0 == victim.master.port }?.1)
                kill(pid, SIGKILL)
                let killedAt = ContinuousClock.now

                // Until the shared tier takes writes for the dead master's slots again,
                // every local read is still answered.
                // Never a wrong value. A miss is possible in one case: on a loaded
                // machine a tracking link to a surviving master can drop and come
                // back before the failover, and that gap flushes the local tier
                // (invalidations may have been missed), so the dead master's keys
                // miss until its replica serves them (docs/REDIS.md, known gaps).
                var localReads = 0
                var misses = 0
                var resumedAfter: Duration?
                while ContinuousClock.now - killedAt < .seconds(20) {
                    for key in keys.prefix(50) {
                        let value = await cache.data(forKey: key)
                        #expect(value == nil || value == Data(key.utf8))
                        if value == nil { misses += 1 }
                        localReads += 1
                    }
                    let probe = RedisCommand(["SET", RESPArgument("kache:" + doomedKey), "after failover"], keyIndex: 1)
                    if (try? await client.send(probe, policy: RetryPolicy(maximumAttempts: 2, budget: .milliseconds(200)))) != nil {
                        resumedAfter = ContinuousClock.now - killedAt
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                if resumedAfter == nil {
                    // What the cluster itself thought, for the failure report.
                    let survivor = try #require(cluster.ports.first { $0 != victim.master.port })
                    let nodes = (try? await cluster.cli(survivor, ["cluster", "nodes"]).output) ?? "(no answer)"
                    let logs = cluster.ports.dropFirst(3).map { port in
                        let log = (try? String(contentsOfFile: "\(cluster.state)/\(port)/redis.log", encoding: .utf8)) ?? ""
                        return "replica \(port):\n" + log.split(separator: "\n").suffix(15).joined(separator: "\n")
                    }
                    Issue.record("cluster nodes from \(survivor):\n\(nodes)\n\(logs.joined(separator: "\n"))\nclient: \(client.statistics)")
                }
                let resumed = try #require(resumedAfter, "the shared tier did not resume within 20 s")
                print("failover: shared tier resumed \(resumed) after the master was killed; \(localReads) local reads meanwhile, \(misses) misses, \(client.statistics.retries) retries")
                #expect(misses == 0 || cache.statistics.localFlushes > 0, "a miss without a gap flush")
                #expect(resumed < .seconds(10))
                let newMaster = try await client.refreshTopology().master(for: HashSlot(key: "kache:" + doomedKey))
                // A node started as a replica (the script creates masters first).
                #expect(newMaster != victim.master && newMaster.map { cluster.ports.dropFirst(3).contains($0.port) } == true)
                // The tiered cache reads through to Redis again.
                await cache.local.removeValue(forKey: doomedKey)
                #expect(await cache.data(forKey: doomedKey) == nil, "the probe overwrote the record with bytes that are not one")
                await cache.local.removeValue(forKey: keys[1])
                try await waitUntil("the tiered cache reads through to the new master", timeout: .seconds(10)) {
                    await cache.data(forKey: keys[1]) == Data(keys[1].utf8)
                }
                await cache.close()
                await client.shutdown()
            }
        }
    }
}
