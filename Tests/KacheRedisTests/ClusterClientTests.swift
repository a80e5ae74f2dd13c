import KacheStorage
import Foundation
import KacheTestSupport
import NIOCore
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    @Suite struct ClusterClientTests {
        @Test(.timeLimit(.minutes(1))) func routesAndPipelinesAcrossMasters() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                defer { Task { await client.shutdown() } }
                let map = try await client.refreshTopology()
                #expect(map.coversAllSlots && map.masterNodes.count == 3)
                for index in 0..<200 {
                    try await client.send(RedisCommand(["SET", "key:\(index)", "value \(index)"], keyIndex: 1))
                }
                let gets = (0..<1000).map { RedisCommand(["GET", "key:\($0 % 200)"], keyIndex: 1) }
                let replies = await client.pipeline(gets)
                for (index, reply) in replies.enumerated() {
                    #expect(try reply.get().string == "value \(index % 200)")
                }
                // Concurrent tasks share connections: their commands are pipelined.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<32 {
                        group.addTask {
                            for index in 0..<50 {
                                let reply = try await client.send(RedisCommand(["GET", "key:\((task * 50 + index) % 200)"], keyIndex: 1))
                                #expect(reply.string == "value \((task * 50 + index) % 200)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                await #expect(throws: RedisClientError.self) { try await client.send(RedisCommand(["NOSUCHCOMMAND"], keyIndex: nil)) }
                #expect(client.statistics.movedRedirections == 0)
            }
        }

        /// A task in `withEventLoopAffinity` stays on its event loop from
        /// command to command, and every connection the client hands it runs
        /// on that loop, so neither its writes nor its replies cross a thread;
        /// `pipeline(_:)` called from it too.
        @Test(.timeLimit(.minutes(1))) func aTaskWithEventLoopAffinityStaysOnItsLoopAndItsConnections() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                defer { Task { await client.shutdown() } }
                let map = try await client.refreshTopology()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<4 {
                        group.addTask {
                            try await client.withEventLoopAffinity {
                                // The task runs on the loop of the first connection it is given.
                                let loop = try await client.pool(for: map.masterNodes[0]).connection().eventLoop
                                #expect(loop.inEventLoop)
                                for index in 0..<60 {
                                    let key = "affinity:\(task):\(index)"
                                    try await client.send(RedisCommand(["SET", RESPArgument(key), RESPArgument(key)], keyIndex: 1))
                                    #expect(try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1)).string == key)
                                    #expect(loop.inEventLoop)
                                }
                                let replies = await client.pipeline((0..<60).map { RedisCommand(["GET", "affinity:\(task):\($0)"], keyIndex: 1) })
                                #expect(try replies.map { try $0.get().string } == (0..<60).map { "affinity:\(task):\($0)" })
                                #expect(loop.inEventLoop)
                                for master in map.masterNodes {
                                    #expect(try await client.pool(for: master).connection().eventLoop === loop)
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }

        /// `pipeline(_:)` writes and awaits on one of the client's loops, but
        /// a caller from Swift's global executor is back off the loops when
        /// it returns: the app's code after it never runs on an event loop.
        @Test(.timeLimit(.minutes(1))) func aPipelineFromTheGlobalExecutorReturnsItsCallerOffTheLoops() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                defer { Task { await client.shutdown() } }
                try await client.send(RedisCommand(["SET", "off-loop", "value"], keyIndex: 1))
                let onLoopAfterwards = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 {
                        group.addTask { () async throws -> Int in
                            var onLoop = 0
                            for _ in 0..<50 {
                                let replies = await client.pipeline([RedisCommand(["GET", "off-loop"], keyIndex: 1), RedisCommand(["GET", "{x}other"], keyIndex: 1)])
                                #expect(try replies[0].get().string == "value")
                                if client.group.makeIterator().contains(where: { $0.inEventLoop }) { onLoop += 1 }
                            }
                            return onLoop
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(onLoopAfterwards == 0)
            }
        }

        /// One slot set migrating by hand (`CLUSTER SETSLOT … MIGRATING/IMPORTING`):
        /// a key the source does not hold is answered with ASK, followed once
        /// with ASKING on the target; when the slot is assigned, MOVED.
        @Test(.timeLimit(.minutes(1))) func askDuringMigrationThenMovedAfterIt() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                defer { Task { await client.shutdown() } }
                let map = try await client.refreshTopology()
                let key = "ask:{migrating}"
                let slot = HashSlot(key: key)
                let source = try #require(map.master(for: slot))
                let target = try #require(map.masterNodes.first { $0 != source })
                let sourceID = try await cluster.cli(source.port, ["cluster", "myid"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
                let targetID = try await cluster.cli(target.port, ["cluster", "myid"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(try await cluster.cli(target.port, ["cluster", "setslot", String(slot.value), "importing", sourceID]).output.contains("OK"))
                #expect(try await cluster.cli(source.port, ["cluster", "setslot", String(slot.value), "migrating", targetID]).output.contains("OK"))

                try await client.send(RedisCommand(["SET", RESPArgument(key), "moved along"], keyIndex: 1))
                #expect(try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1)).string == "moved along")
                #expect(client.statistics.askRedirections == 2)
                #expect(client.statistics.movedRedirections == 0)
                // The key is on the target only: the source never saw it.
                #expect(try await cluster.cli(source.port, ["get", key]).output.contains("ASK"))

                for node in map.masterNodes {
                    _ = try await cluster.cli(node.port, ["cluster", "setslot", String(slot.value), "node", targetID])
                }
                try await waitUntil("the source answers MOVED for the migrated slot", timeout: .seconds(5)) {
                    (try? await cluster.cli(source.port, ["get", key]).output.contains("MOVED")) == true
                }
                #expect(try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1)).string == "moved along")
                #expect(client.statistics.movedRedirections >= 1)
                #expect(client.slotMap.master(for: slot) == target)
            }
        }

        /// Slots move between masters (`redis-cli --cluster reshard`) while tasks
        /// set and read keys: no error reaches them and every read is right.
        @Test(.timeLimit(.minutes(2))) func resharding_underLoad_surfacesNoErrorAndNoWrongValue() async throws {
            try await LiveCluster.with { cluster in
                let client = cluster.client()
                defer { Task { await client.shutdown() } }
                let map = try await client.refreshTopology()
                let source = map.shards.first { $0.slots.contains(0) }!.master
                let target = map.masterNodes.first { $0 != source }!
                let ids = try await [source, target].asyncMap { node in
                    try await cluster.cli(node.port, ["cluster", "myid"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                // Keys in the slots that move, so the load meets MOVED and ASK.
                let keys = (0..<4000).map { "reshard:\($0)" }.filter { HashSlot(key: $0).value < 1000 }.prefix(300)
                for key in keys { try await client.send(RedisCommand(["SET", RESPArgument(key), "v:\(key)"], keyIndex: 1)) }

                let stop = ManagedFlag()
                let load = Task {
                    var errors: [String] = [], wrong = 0, operations = 0
                    while !stop.isSet {
                        for key in keys {
                            do {
                                if operations % 3 == 0 {
                                    try await client.send(RedisCommand(["SET", RESPArgument(key), "v:\(key)"], keyIndex: 1))
                                } else {
                                    let value = try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1))
                                    if value.string != "v:\(key)" { wrong += 1 }
                                }
                            } catch {
                                errors.append("\(error)")
                            }
                            operations += 1
                        }
                    }
                    return (errors, wrong, operations)
                }
                let reshard = try await cluster.cli(source.port, [
                    "--cluster", "reshard", "127.0.0.1:\(source.port)", "--cluster-from", ids[0], "--cluster-to", ids[1],
                    "--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "10",
                ], timeout: .seconds(90))
                try await Task.sleep(for: .milliseconds(300))
                stop.set()
                let (errors, wrong, operations) = await load.value
                #expect(reshard.status == 0, "\(reshard.stderr)")
                #expect(errors.isEmpty, "\(errors.prefix(5))")
                #expect(wrong == 0)
                #expect(operations > keys.count)
                let statistics = client.statistics
                #expect(statistics.movedRedirections > 0)
                print("reshard under load: \(operations) operations, \(statistics.movedRedirections) MOVED, \(statistics.askRedirections) ASK, \(statistics.retries) retries, 0 errors")
                #expect(try await client.refreshTopology().master(for: HashSlot(0)) == target)
            }
        }
    }
}

/// A flag set once, read from any task.
final class ManagedFlag: Sendable {
    private let value = Locked(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}


extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
