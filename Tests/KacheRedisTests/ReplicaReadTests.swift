import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct ReplicaReadTests {
        /// With `readFrom: .replicaPreferred`, a command marked read-only is
        /// answered by a replica (over a `READONLY` connection); writes, and
        /// reads not marked read-only, go to the master.
        @Test(.timeLimit(.minutes(1))) func readOnlyCommandsGoToAReplicaAndWritesToTheMaster() async throws {
            try await LiveCluster.with(replicas: true) { cluster in
                let client = cluster.client(readFrom: .replicaPreferred)
                let map = try await Self.topologyWithReplicas(client)
                for index in 0..<30 {
                    try await client.send(RedisCommand(["SET", "replica:\(index)", "value \(index)"], keyIndex: 1))
                }
                #expect(client.statistics.replicaReads == 0)
                // The replicas apply the writes a moment later.
                try await waitUntil("every replica serves every write", timeout: .seconds(10)) {
                    var served = 0
                    for index in 0..<30 {
                        let reply = try await client.send(RedisCommand(["GET", "replica:\(index)"], keyIndex: 1, isReadOnly: true))
                        if reply.string == "value \(index)" { served += 1 }
                    }
                    return served == 30
                }
                #expect(client.statistics.replicaReads >= 30)
                #expect(client.statistics.movedRedirections == 0, "a replica without READONLY answers MOVED")
                let replicaReads = client.statistics.replicaReads
                #expect(try await client.send(RedisCommand(["GET", "replica:0"], keyIndex: 1)).string == "value 0")
                #expect(client.statistics.replicaReads == replicaReads, "a read not marked read-only went to a replica")
                // A write marked read-only by mistake is redirected by the replica and lands on the master.
                try await client.send(RedisCommand(["SET", "replica:0", "changed"], keyIndex: 1, isReadOnly: true))
                let master = try #require(map.master(for: HashSlot(key: "replica:0")))
                #expect(try await cluster.cli(master.port, ["get", "replica:0"]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "changed")
                await client.shutdown()
            }
        }

        /// The same client with the default `readFrom: .master` never reads from a replica.
        @Test(.timeLimit(.minutes(1))) func theDefaultReadsFromMastersOnly() async throws {
            try await LiveCluster.with(replicas: true) { cluster in
                let client = cluster.client()
                #expect(client.configuration.readFrom == .master)
                try await client.send(RedisCommand(["SET", "k", "v"], keyIndex: 1))
                for _ in 0..<20 {
                    #expect(try await client.send(RedisCommand(["GET", "k"], keyIndex: 1, isReadOnly: true)).string == "v")
                }
                #expect(client.statistics.replicaReads == 0)
                await client.shutdown()
            }
        }

        /// A write on the master, then its invalidation arrives here: a read
        /// through the tier returns the new value, never the old one, although
        /// the replica it would read from still holds the old one (its link to
        /// the master was cut just before the write: `CLIENT KILL TYPE master`,
        /// with a `masterauth` the master refuses so that it can't reconnect).
        /// Once the replica replicates again, reads go to it again.
        @Test(.timeLimit(.minutes(2))) func afterAnInvalidationAReadNeverReturnsTheOldValueFromALaggingReplica() async throws {
            try await LiveCluster.with(replicas: true) { cluster in
                let client = cluster.client(readFrom: .replicaPreferred)
                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                let writerClient = cluster.client()
                let writer = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), client: writerClient,
                    configuration: TieredCacheConfiguration(tracksInvalidations: false)
                )
                let map = try await Self.topologyWithReplicas(client)
                for round in 0..<4 {
                    let key = "lagging:\(round)"
                    let slot = HashSlot(key: "kache:" + key)
                    let replica = try #require(map.replicas(for: slot).first)
                    let heard = cache.statistics.invalidationsReceived
                    try await writer.set(Data("old".utf8), forKey: key, ttl: .seconds(120))
                    // The write's invalidation drops any copy read before it arrives: wait for it first.
                    try await waitUntil("the invalidation of the write of \(key) arrives", timeout: .seconds(5)) {
                        cache.statistics.invalidationsReceived > heard
                    }
                    // Reads of the key go to the replica once it has caught up with the write.
                    try await waitUntil("a read of \(key) is answered by its replica", timeout: .seconds(10)) {
                        await cache.local.removeValue(forKey: key)
                        let reads = client.statistics.replicaReads
                        #expect(await cache.data(forKey: key) == Data("old".utf8))
                        return client.statistics.replicaReads > reads
                    }
                    await #expect(cache.local.data(forKey: key) == Data("old".utf8))

                    _ = try await cluster.cli(replica.port, ["config", "set", "masterauth", "refused-by-the-master"])
                    _ = try await cluster.cli(replica.port, ["client", "kill", "type", "master"])
                    try await writer.set(Data("new".utf8), forKey: key, ttl: .seconds(120))
                    try await waitUntil("the invalidation of \(key) arrives", timeout: .seconds(5)) { await cache.local.data(forKey: key) == nil }
                    #expect(try await Self.replicaHoldsOld(key, at: replica), "the replica was not behind: the round proves nothing")
                    let value = await cache.data(forKey: key)
                    #expect(value == Data("new".utf8), "round \(round): read \(value.map { String(decoding: $0, as: UTF8.self) } ?? "nil")")
                    await #expect(cache.local.data(forKey: key) == Data("new".utf8))
                    // Let the replica's link come back before the next round.
                    _ = try await cluster.cli(replica.port, ["config", "set", "masterauth", ""])
                    try await waitUntil("\(replica) replicates again", timeout: .seconds(10)) {
                        try await !Self.replicaHoldsOld(key, at: replica)
                    }
                }
                print("lagging replica: \(client.statistics.replicaReads) replica reads over 4 rounds")
                #expect(cache.statistics.readErrors == 0)
                await writer.close()
                await writerClient.shutdown()
                await cache.close()
                await client.shutdown()
            }
        }

        /// The slot map once every master has its replica in it: a replica
        /// is listed by `CLUSTER SLOTS` a moment after the cluster is created.
        private static func topologyWithReplicas(_ client: RedisClusterClient) async throws -> SlotMap {
            try await waitUntil("every master has a replica in CLUSTER SLOTS", timeout: .seconds(20)) {
                let map = try await client.refreshTopology()
                return map.shards.count == 3 && map.shards.allSatisfy { $0.replicas.count == 1 }
            }
            return client.slotMap
        }

        /// Whether `replica` still answers a read of `key` with the record of "old".
        private static func replicaHoldsOld(_ key: String, at replica: NodeAddress) async throws -> Bool {
            let connection = try await RedisConnection.connect(to: replica, options: RedisConnection.Options())
            defer { connection.close() }
            try await connection.send(["READONLY"])
            guard let bytes = try await connection.send(["GET", RESPArgument("kache:" + key)]).bytes else { return false }
            return try SharedTierRecord.decode(Data(bytes)).value == Data("old".utf8)
        }
    }
}
