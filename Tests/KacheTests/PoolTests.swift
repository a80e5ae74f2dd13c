import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// The 2012 Kache's Pool bookkeeping, kept as the reference model: keys in an
/// array sorted by (expiry, write order); expired keys swept from the front on
/// every insert; a new key into a full Pool evicts index 0. Obviously right,
/// and O(n) — the real Pool must agree with it on every step.
struct ReferencePool {
    var capacity: Int
    var items: [(key: String, expiry: Int64, sequence: Int)] = []
    var evicted: [String] = []
    var sequence = 0

    mutating func sweep(now: Int64) {
        items.removeAll { $0.expiry <= now }
    }

    mutating func set(_ key: String, expiry: Int64, now: Int64) {
        sweep(now: now)
        sequence += 1
        if let index = items.firstIndex(where: { $0.key == key }) {
            items.remove(at: index)
        } else if items.count >= capacity {
            evicted.append(items.removeFirst().key)
        }
        let slot = items.firstIndex { ($0.expiry, $0.sequence) > (expiry, sequence) } ?? items.count
        items.insert((key, expiry, sequence), at: slot)
    }

    mutating func remove(_ key: String) {
        items.removeAll { $0.key == key }
    }

    var keys: [String] { items.map(\.key) }
}

@Suite struct PoolTests {
    @Test func aFullPoolEvictsTheEarliestExpiringKey() throws {
        let cache = try Kache(inMemory: .testing())
        let pool = try cache.pool(named: "p", capacity: 3)
        try pool.set(Data("a".utf8), forKey: "a", ttl: .seconds(30))
        try pool.set(Data("b".utf8), forKey: "b", ttl: .seconds(10))
        try pool.set(Data("c".utf8), forKey: "c", ttl: .seconds(20))
        try pool.set(Data("d".utf8), forKey: "d", ttl: .seconds(40))
        #expect(pool.data(forKey: "b") == nil)
        #expect(pool.keys == ["c", "a", "d"])
        #expect(pool.statistics.evictions == 1)
    }

    @Test func manualClockStepsAddUpExactly() {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        for _ in 0 ..< 100_000 { clock.advance(by: .milliseconds(1)) }
        #expect(clock.nanosecondsSince1970() == 1_800_000_000 * 1_000_000_000 + 100_000 * 1_000_000)
    }

    /// Expiries that tie only because a simulated clock moved in small steps
    /// (set at t with TTL d + 1 s, and at t + 1 s with TTL d) must tie
    /// exactly, and then the key set first goes first, as in W4. (Adding
    /// 0.002 s to a `Date` 500 times lands short of 1 s, which once made the
    /// later key expire first.)
    @Test func tiesReachedThroughManyClockStepsEvictTheKeySetFirst() throws {
        let clock = ManualClock()
        let cache = try Kache(inMemory: .testing(clock: clock))
        let pool = try cache.pool(named: "p", capacity: 2)
        try pool.set(Data("early".utf8), forKey: "early", ttl: .seconds(101))
        for _ in 0 ..< 500 { clock.advance(by: .milliseconds(2)) }
        try pool.set(Data("late".utf8), forKey: "late", ttl: .seconds(100))
        #expect(pool.keys == ["early", "late"])
        try pool.set(Data("new".utf8), forKey: "new", ttl: .seconds(500))
        #expect(pool.keys == ["late", "new"], "of two equal expiries, the key set first is evicted")
    }

    @Test func aLongLivedKeySurvivesAFloodOfShortLivedOnes() throws {
        let clock = ManualClock()
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: .testing(.sync, clock: clock))
        let pool = try cache.pool(named: "p", capacity: 10)
        try pool.set(Data("keep".utf8), forKey: "long", ttl: .seconds(100_000))
        for i in 0 ..< 1000 {
            try pool.set(Data([UInt8(i % 256)]), forKey: "short\(i)", ttl: .seconds(1 + i % 7))
            clock.advance(by: .milliseconds(10))
        }
        #expect(pool.data(forKey: "long") == Data("keep".utf8))
        #expect(pool.count <= 10)
        cache.checkInvariants()
    }

    @Test func tiesEvictTheKeyWrittenFirst() throws {
        let cache = try Kache(inMemory: .testing())
        let pool = try cache.pool(named: "p", capacity: 2)
        try pool.set(Data(), forKey: "first", ttl: .seconds(10))
        try pool.set(Data(), forKey: "second", ttl: .seconds(10))
        try pool.set(Data(), forKey: "third", ttl: .seconds(10))
        #expect(pool.keys == ["second", "third"])
    }

    @Test func replacingAKeyEvictsNothing() throws {
        let cache = try Kache(inMemory: .testing())
        let pool = try cache.pool(named: "p", capacity: 2)
        try pool.set(Data("1".utf8), forKey: "a", ttl: .seconds(10))
        try pool.set(Data("1".utf8), forKey: "b", ttl: .seconds(20))
        try pool.set(Data("2".utf8), forKey: "a", ttl: .seconds(30))
        #expect(pool.keys == ["b", "a"])
        #expect(pool.data(forKey: "a") == Data("2".utf8))
        #expect(pool.statistics.evictions == 0)
    }

    @Test func expiredKeysAreSweptBeforeAnythingIsEvicted() throws {
        let clock = ManualClock()
        let cache = try Kache(inMemory: .testing(clock: clock))
        let pool = try cache.pool(named: "p", capacity: 2)
        try pool.set(Data(), forKey: "soon", ttl: .seconds(1))
        try pool.set(Data(), forKey: "later", ttl: .seconds(100))
        clock.advance(by: .seconds(2))
        try pool.set(Data(), forKey: "new", ttl: .seconds(50))
        #expect(pool.keys == ["new", "later"])
        #expect(pool.statistics.evictions == 0)
        #expect(pool.statistics.expirations == 1)
    }

    @Test func resizingEvictsTheEarliestExpiring() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true))
        let pool = try cache.pool(named: "p", capacity: 5)
        for i in 0 ..< 5 { try pool.set(Data([UInt8(i)]), forKey: "k\(i)", ttl: .seconds(10 * (5 - i))) }
        let smaller = try cache.pool(named: "p", capacity: 2)
        #expect(smaller.capacity == 2 && pool.capacity == 2)
        #expect(pool.keys == ["k1", "k0"])
        #expect(dir.entryFiles().count == 2)
        cache.checkInvariants()
    }

    @Test func poolsAndTheTopLevelAreSeparateNamespaces() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true))
        let a = try cache.pool(named: "a", capacity: 10)
        let b = try cache.pool(named: "b", capacity: 10)
        try cache.set(Data("top".utf8), forKey: "k", ttl: .seconds(60))
        try a.set(Data("a".utf8), forKey: "k", ttl: .seconds(60))
        try b.set(Data("b".utf8), forKey: "k", ttl: .seconds(60))
        #expect(cache.data(forKey: "k") == Data("top".utf8))
        #expect(a.data(forKey: "k") == Data("a".utf8))
        #expect(b.data(forKey: "k") == Data("b".utf8))
        a.removeValue(forKey: "k")
        #expect(cache.data(forKey: "k") == Data("top".utf8) && b.data(forKey: "k") == Data("b".utf8))
        #expect(dir.entryFiles().count == 2)
    }

    @Test func badNamesAndCapacitiesAreRefused() throws {
        let cache = try Kache(inMemory: .testing())
        #expect(throws: KacheError.invalidCapacity(0)) { try cache.pool(named: "p", capacity: 0) }
        #expect(throws: KacheError.invalidCapacity(-1)) { try cache.queue(named: "q", capacity: -1) }
        let empty = #expect(throws: KacheError.self) { try cache.pool(named: "", capacity: 1) }
        #expect(empty?.case == .invalidKeySpaceName)
        let long = #expect(throws: KacheError.self) { try cache.pool(named: String(repeating: "n", count: 256), capacity: 1) }
        #expect(long?.case == .invalidKeySpaceName)
        _ = try cache.queue(named: "shared", capacity: 3)
        let aQueue = #expect(throws: KacheError.self) { try cache.pool(named: "shared", capacity: 3) }
        #expect(aQueue?.case == .invalidKeySpaceName)
        let aPool = #expect(throws: KacheError.self) { try cache.queue(named: Kache.defaultPoolName, capacity: 3) }
        #expect(aPool?.case == .invalidKeySpaceName)
    }

    @Test func theDefaultPoolIsAlwaysThere() throws {
        var configuration = Kache.Configuration.testing()
        configuration.defaultPoolCapacity = 2
        let cache = try Kache(inMemory: configuration)
        for i in 0 ..< 5 { try cache.defaultPool.set(Data(), forKey: "k\(i)", ttl: .seconds(10 + i)) }
        #expect(cache.defaultPool.keys == ["k3", "k4"])
        #expect(cache.defaultPool.capacity == 2)
    }

    @Test func poolsSurviveSaveAndReopen() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock))
            let pool = try cache.pool(named: "avatars", capacity: 4)
            for i in 0 ..< 6 { try pool.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(100 - i)) }
            try cache.close()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock))
        let stats = try #require(cache.keySpaces.first { $0.name == "avatars" })
        #expect(stats.capacity == 4 && stats.count == 4 && stats.evictions == 2 && stats.kind == .pool)
        let pool = try cache.pool(named: "avatars", capacity: 4)
        // k4 evicted k3 (the earliest of those present), then k5 evicted k4.
        #expect(pool.keys == ["k5", "k2", "k1", "k0"])
        #expect(pool.data(forKey: "k2") == Data("v2".utf8))
    }

    /// The 2012 Kache's `load` lost its key lists. `load()`, and opening the
    /// directory again, bring a Pool back whole: its capacity, its keys in
    /// expiry order with their values, and a full Pool still evicts the key
    /// that expires earliest.
    @Test(arguments: [Durability.sync, .async], Reload.allCases)
    func aPoolComesBackWholeAfterLoadOrReopen(durability: Durability, reload: Reload) throws {
        let dir = TemporaryDirectory()
        let first = try Kache(directory: dir.url, configuration: .testing(durability))
        let pool = try first.pool(named: "avatars", capacity: 4)
        // Set in another order than they expire: k1 first, then k3, k2, k0.
        for (i, ttl) in [400, 100, 300, 200].enumerated() { try pool.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(ttl)) }
        try first.set(Data("top".utf8), forKey: "k1", ttl: .seconds(50))

        let cache = try reload.apply(to: first)
        #expect(cache.statistics.entriesInMemory == 0, "the index was not rebuilt from the directory")
        let restored = try #require(cache.keySpaces.first { $0.name == "avatars" })
        #expect(restored.kind == .pool && restored.capacity == 4 && restored.count == 4)
        let again = try cache.pool(named: "avatars", capacity: 4)
        #expect(again.keys == ["k1", "k3", "k2", "k0"])
        for i in 0 ..< 4 { #expect(again.data(forKey: "k\(i)") == Data("v\(i)".utf8)) }
        #expect(cache.data(forKey: "k1") == Data("top".utf8))

        try again.set(Data("v4".utf8), forKey: "k4", ttl: .seconds(500))
        #expect(again.keys == ["k3", "k2", "k0", "k4"], "k1, the earliest to expire, makes room")
        #expect(again.data(forKey: "k1") == nil)
        #expect(again.statistics.evictions == 1)
        cache.checkInvariants()
    }

    @Test func poolsSurviveACrashWithoutSave() throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
            let pool = try cache.pool(named: "p", capacity: 3)
            for i in 0 ..< 3 { try pool.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(100 + i)) }
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        let pool = try cache.pool(named: "p", capacity: 3)
        #expect(pool.keys == ["k0", "k1", "k2"])
        try pool.set(Data(), forKey: "k3", ttl: .seconds(500))
        #expect(pool.keys == ["k1", "k2", "k3"])
    }

    /// Random sets, removals and clock moves against `ReferencePool`, 300 seeds.
    @Test(arguments: 0 ..< 300)
    func agreesWithTheReferenceModel(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let clock = ManualClock()
        let start = Timestamp(clock.now())
        let capacity = Int.random(in: 1 ... 8, using: &random)
        let cache = try Kache(inMemory: .testing(clock: clock))
        let pool = try cache.pool(named: "p", capacity: capacity)
        var model = ReferencePool(capacity: capacity)
        for step in 0 ..< 120 {
            let key = "k\(Int.random(in: 0 ..< 16, using: &random))"
            let now = Timestamp(clock.now()) - start
            switch Int.random(in: 0 ..< 10, using: &random) {
            case 0 ..< 7:
                let ttl = Int64.random(in: 1 ... 40, using: &random)
                try pool.set(Data(key.utf8), forKey: key, ttl: .seconds(ttl))
                model.set(key, expiry: now + ttl * 1_000_000_000, now: now)
            case 7:
                pool.removeValue(forKey: key)
                model.remove(key)
            default:
                clock.advance(by: .seconds(Int64.random(in: 0 ... 6, using: &random)))
            }
            #expect(pool.keys == model.keys, "seed \(seed), step \(step)")
            cache.checkInvariants()
        }
        #expect(pool.statistics.evictions == UInt64(model.evicted.count), "seed \(seed)")
    }
}
