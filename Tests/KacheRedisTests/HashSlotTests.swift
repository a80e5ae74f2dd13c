import Foundation
import Testing
@testable import KacheRedis

@Suite struct HashSlotTests {
    @Test func crc16MatchesTheKnownVector() {
        #expect(CRC16.checksum(Array("123456789".utf8)) == 0x31C3)
        #expect(HashSlot(key: "123456789").value == 0x31C3 & 0x3FFF)
        #expect(CRC16.checksum([UInt8]()) == 0)
    }

    /// Slots Redis itself reports (`CLUSTER KEYSLOT`).
    @Test func slotsMatchRedis() {
        #expect(HashSlot(key: "foo").value == 12182)
        #expect(HashSlot(key: "bar").value == 5061)
        #expect(HashSlot(key: "user:1000").value == 1649)
    }

    @Test func hashTagsGroupKeys() {
        #expect(HashSlot(key: "{user1000}.following") == HashSlot(key: "{user1000}.followers"))
        #expect(HashSlot(key: "{user1000}.following") == HashSlot(key: "user1000"))
        // The first { and the first } after it; an empty tag hashes the whole key.
        #expect(HashSlot(key: "foo{}{bar}") != HashSlot(key: "bar"))
        #expect(HashSlot(key: "foo{}{bar}") == HashSlot(keyBytes: Array("foo{}{bar}".utf8)))
        #expect(HashSlot(key: "foo{{bar}}zap") == HashSlot(key: "{bar"))
        #expect(HashSlot(key: "foo{bar}{zap}") == HashSlot(key: "bar"))
        #expect(HashSlot(key: "no}tag{here") == HashSlot(keyBytes: Array("no}tag{here".utf8)))
        #expect(HashSlot(key: "{kache:pool:a}:order") == HashSlot(key: "{kache:pool:a}:values"))
    }

    /// A key routes to the same slot whichever way its argument holds it.
    @Test func aKeyAsTextBytesOrDataHasOneSlot() {
        for key in ["foo", "user:1000", "{user1000}.following", "kache:é"] {
            let slot = HashSlot(key: key)
            #expect(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1).slot == slot, "\(key) as text")
            #expect(RedisCommand(["GET", RESPArgument(bytes: Array(key.utf8))], keyIndex: 1).slot == slot, "\(key) as bytes")
            #expect(RedisCommand(["GET", RESPArgument(Data(key.utf8))], keyIndex: 1).slot == slot, "\(key) as Data")
        }
    }

    @Test func redirectionsAreRead() {
        #expect(Redirection(error: "MOVED 3999 127.0.0.1:6381") == .moved(HashSlot(3999), NodeAddress(host: "127.0.0.1", port: 6381)))
        #expect(Redirection(error: "ASK 3999 ::1:6381") == .ask(HashSlot(3999), NodeAddress(host: "::1", port: 6381)))
        #expect(Redirection(error: "TRYAGAIN Multiple keys request during rehashing of slot") == .retryLater)
        #expect(Redirection(error: "CLUSTERDOWN The cluster is down") == .retryLater)
        #expect(Redirection(error: "MOVED 99999 127.0.0.1:1") == nil)
        #expect(Redirection(error: "ERR wrong number of arguments") == nil)
    }

    @Test func slotMapReadsClusterSlots() throws {
        func node(_ port: Int64) -> RESPValue { .array([.bulkString(.init(string: "127.0.0.1")), .integer(port), .bulkString(.init(string: "id"))]) }
        let reply = RESPValue.array([
            .array([.integer(0), .integer(5460), node(7000), node(7003)]),
            .array([.integer(5461), .integer(16383), .array([.bulkString(.init(string: "")), .integer(7001)])]),
        ])
        let map = try SlotMap(clusterSlots: reply, fallbackHost: "127.0.0.1")
        #expect(map.coversAllSlots)
        #expect(map.master(for: HashSlot(0)) == NodeAddress(host: "127.0.0.1", port: 7000))
        #expect(map.master(for: HashSlot(16383)) == NodeAddress(host: "127.0.0.1", port: 7001))
        #expect(map.shards[0].replicas == [NodeAddress(host: "127.0.0.1", port: 7003)])
        #expect(throws: RedisClientError.self) { try SlotMap(clusterSlots: .array([.array([.integer(5), .integer(1), node(1)])]), fallbackHost: "x") }
    }

    /// The slots a node serves, `MOVED` corrections included, and the replicas
    /// of a slot's master (none once a `MOVED` named a master the last report did not).
    @Test func slotMapListsTheSlotsOfANodeAndTheReplicasOfASlot() {
        let (a, b, c, replica) = (NodeAddress(host: "h", port: 1), NodeAddress(host: "h", port: 2), NodeAddress(host: "h", port: 3), NodeAddress(host: "h", port: 4))
        var map = SlotMap(shards: [
            .init(slots: 0...99, master: a, replicas: [replica]),
            .init(slots: 100...16383, master: b, replicas: []),
        ])
        map.assign(HashSlot(5), to: c)
        let ofA = map.slots(servedBy: a)
        #expect(ofA.count == 99 && ofA.contains(HashSlot(0)) && ofA.contains(HashSlot(99)))
        #expect(!ofA.contains(HashSlot(5)) && !ofA.contains(HashSlot(100)))
        #expect(map.slots(servedBy: c).count == 1 && map.slots(servedBy: b).count == 16284)
        #expect(map.replicas(for: HashSlot(0)) == [replica])
        #expect(map.replicas(for: HashSlot(5)).isEmpty)
        #expect(map.replicas(for: HashSlot(100)).isEmpty)
    }

    @Test func slotSetsUniteSubtractAndFilter() {
        var set = SlotSet([0...9, 16380...16383])
        #expect(set.count == 14 && set.contains(HashSlot(16383)) && !set.contains(HashSlot(10)))
        set.formUnion(SlotSet([10...10]))
        set.subtract(SlotSet([0...4]))
        #expect(set.count == 10 && !set.contains(HashSlot(4)) && set.contains(HashSlot(10)))
        #expect(set.filter { $0.value < 100 } == SlotSet([5...10]))
        #expect(SlotSet().isEmpty && !set.isEmpty)
    }

    /// What the replica fence reads of `INFO replication`.
    @Test func replicaFenceReadsInfoReplication() {
        let master = NodeAddress(host: "127.0.0.1", port: 7000)
        let info = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:7000\r\nmaster_link_status:up\r\nslave_repl_offset:4242\r\n"
        #expect(ReplicaFence.field("slave_repl_offset", in: info) == "4242")
        #expect(ReplicaFence.field("master_repl_offset", in: info) == nil)
        #expect(ReplicaFence.isReplica(info, of: master))
        #expect(!ReplicaFence.isReplica(info, of: NodeAddress(host: "127.0.0.1", port: 7001)))
        #expect(!ReplicaFence.isReplica(info.replacingOccurrences(of: "link_status:up", with: "link_status:down"), of: master))
    }
}
