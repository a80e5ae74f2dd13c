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
}
