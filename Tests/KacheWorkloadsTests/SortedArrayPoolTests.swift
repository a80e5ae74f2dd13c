import KacheWorkloads
import Testing

@Suite struct SortedArrayPoolTests {
    @Test func fullPoolEvictsTheEarliestExpiry() {
        var pool = SortedArrayPool(capacity: 3)
        #expect(pool.set(key: "a", expiry: 30, now: 0) == .init())
        #expect(pool.set(key: "b", expiry: 10, now: 0) == .init())
        #expect(pool.set(key: "c", expiry: 20, now: 0) == .init())
        #expect(pool.keysByExpiry == ["b", "c", "a"])
        #expect(pool.set(key: "d", expiry: 5, now: 0) == .init(evicted: ["b"]))
        #expect(pool.keysByExpiry == ["d", "c", "a"])
        #expect(pool.set(key: "e", expiry: 40, now: 0) == .init(evicted: ["d"]))
        #expect(pool.keysByExpiry == ["c", "a", "e"])
        #expect(pool.count == 3)
        pool.checkInvariants()
    }

    @Test func ofEqualExpiriesTheKeySetFirstGoesFirst() {
        var pool = SortedArrayPool(capacity: 3)
        _ = pool.set(key: "a", expiry: 10, now: 0)
        _ = pool.set(key: "b", expiry: 10, now: 0)
        _ = pool.set(key: "c", expiry: 10, now: 0)
        #expect(pool.keysByExpiry == ["a", "b", "c"])
        #expect(pool.set(key: "d", expiry: 10, now: 0) == .init(evicted: ["a"]))
        #expect(pool.keysByExpiry == ["b", "c", "d"])
    }

    @Test func replacingAKeyMovesItAndEvictsNothing() {
        var pool = SortedArrayPool(capacity: 3)
        _ = pool.set(key: "a", expiry: 10, now: 0)
        _ = pool.set(key: "b", expiry: 20, now: 0)
        _ = pool.set(key: "c", expiry: 30, now: 0)
        #expect(pool.set(key: "a", expiry: 40, now: 0) == .init())
        #expect(pool.keysByExpiry == ["b", "c", "a"])
        #expect(pool.set(key: "c", expiry: 20, now: 0) == .init())
        #expect(pool.keysByExpiry == ["b", "c", "a"])   // after "b", which has the same expiry
        #expect(pool.expiry(forKey: "c") == 20 && pool.count == 3)
        pool.checkInvariants()
    }

    @Test func everySetSweepsExpiredKeysBeforeEvicting() {
        var pool = SortedArrayPool(capacity: 3)
        _ = pool.set(key: "a", expiry: 10, now: 0)
        _ = pool.set(key: "b", expiry: 20, now: 0)
        _ = pool.set(key: "c", expiry: 30, now: 0)
        // At 20, "a" and "b" (expiry at or before now) are expired: room without evicting.
        #expect(pool.set(key: "d", expiry: 50, now: 20) == .init(expired: ["a", "b"]))
        #expect(pool.keysByExpiry == ["c", "d"])
        // A replacement sweeps too.
        #expect(pool.set(key: "d", expiry: 60, now: 30) == .init(expired: ["c"]))
        #expect(pool.keysByExpiry == ["d"])
        #expect(pool.expiry(forKey: "a") == nil)
    }

    @Test func settingAnExpiredKeyAgainIsANewInsert() {
        var pool = SortedArrayPool(capacity: 2)
        _ = pool.set(key: "a", expiry: 10, now: 0)
        _ = pool.set(key: "b", expiry: 50, now: 0)
        #expect(pool.set(key: "a", expiry: 60, now: 10) == .init(expired: ["a"]))
        #expect(pool.keysByExpiry == ["b", "a"])
        #expect(pool.set(key: "c", expiry: 70, now: 10) == .init(evicted: ["b"]))
    }

    @Test func randomizedSetsKeepTheInvariantsAndTheOrder() {
        for seed in UInt64(0)..<200 {
            var rng = SplitMix64(seed: seed)
            var pool = SortedArrayPool(capacity: 8)
            var now: Int64 = 0
            for _ in 0..<200 {
                now += Int64(rng.next() % 3)
                let key = "k\(rng.next() % 20)"
                let removed = pool.set(key: key, expiry: now + Int64(rng.next() % 30), now: now)
                pool.checkInvariants()
                #expect(removed.evicted.count <= 1, "seed \(seed)")
                #expect(pool.expiry(forKey: key) != nil, "seed \(seed)")
                for gone in removed.expired + removed.evicted where gone != key {
                    #expect(pool.expiry(forKey: gone) == nil, "seed \(seed)")
                }
            }
        }
    }
}
