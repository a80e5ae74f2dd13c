import Foundation
import KacheStorage
import Testing
@testable import Kache

@Suite struct EntryIndexTests {
    private func record(_ sequence: UInt64, value: Data? = nil) -> EntryRecord {
        EntryRecord(
            expiry: Int64(sequence), sequence: sequence, rawSize: value?.count ?? 0, value: value,
            isPendingWrite: false, length: 100, location: RecordLocation(segment: 1, offset: Int(sequence % 1000), length: 100), diskSequence: sequence
        )
    }

    /// The writer commits a landed version by the reference its insert
    /// returned. One that names another slot is asked by key, and a version
    /// replaced meanwhile is not marked written, by either.
    @Test func aLandedVersionIsFoundByItsReferenceOrByKey() {
        var state = StoreState(memoryLimit: 1 << 20, keepsFiles: true)
        let now: Timestamp = 1_000
        let first = state.insert(space: 0, key: "a", value: Data("1".utf8), expiry: now + 60_000_000_000, now: now, fileLength: 20)
        let other = state.insert(space: 0, key: "b", value: Data("2".utf8), expiry: now + 60_000_000_000, now: now, fileLength: 20)
        var ledger = SegmentStore.LedgerChanges()
        let there = RecordLocation(segment: 1, offset: 0, index: 0, length: 20)
        _ = state.markWritten(space: 0, key: "a", sequence: first.sequence, ref: first.ref, location: there, ledger: &ledger)
        #expect(state.record(space: 0, key: "a")?.location == there && state.record(space: 0, key: "a")?.isPendingWrite == false)

        // A reference to b's slot, for a's version: found by key all the same.
        let replaced = state.insert(space: 0, key: "a", value: Data("3".utf8), expiry: now + 60_000_000_000, now: now, fileLength: 20)
        let elsewhere = RecordLocation(segment: 1, offset: 0, index: 1, length: 20)
        let wrongSlot = EntryRef(shard: other.ref.shard, slot: other.ref.slot, sequence: replaced.sequence)
        _ = state.markWritten(space: 0, key: "a", sequence: replaced.sequence, ref: wrongSlot, location: elsewhere, ledger: &ledger)
        #expect(state.record(space: 0, key: "a")?.location == elsewhere && state.record(space: 0, key: "a")?.isPendingWrite == false)

        // b replaced before its first version landed: neither way marks that version.
        let newer = state.insert(space: 0, key: "b", value: Data("4".utf8), expiry: now + 60_000_000_000, now: now, fileLength: 20)
        _ = state.markWritten(space: 0, key: "b", sequence: other.sequence, ref: other.ref, location: there, ledger: &ledger)
        #expect(state.record(space: 0, key: "b")?.sequence == newer.sequence && state.record(space: 0, key: "b")?.isPendingWrite == true)
    }

    /// A set hashes its key before the store's lock, to prefetch where the
    /// insert will probe, and hands that hash to the insert: it must be the
    /// one the index files the key under, for every key space and for keys
    /// that are not ASCII, else the key is filed where no read looks.
    @Test func theHashAPrefetchReturnsFilesTheKeyWhereReadsFindIt() {
        var state = StoreState(memoryLimit: 1 << 20, keepsFiles: true)
        _ = state.spaces.findOrAdd(named: "pool", kind: .pool, capacity: 10)
        _ = state.spaces.findOrAdd(named: "queue", kind: .queue, capacity: 10)
        let now: Timestamp = 1_000
        let keys = ["plain", "caf\u{E9}", "cafe\u{301}", "\u{1F600} emoji", String(repeating: "long-", count: 40)]
        for (space, key) in zip([0, 1, 2, 0, 1], keys) {
            let hash = state.index.prefetch(space: space, key: key)
            #expect(hash == EntryIndex.hash(space: space, key: key).hash)
            _ = state.insert(space: space, key: key, value: Data(key.utf8), expiry: now + 60_000_000_000, now: now, fileLength: 20, hash: hash)
            #expect(state.index.record(space: space, key: key)?.value == Data(key.utf8), "\(key) in space \(space)")
        }
        // An empty shard (no slab yet) and a full one prefetch without harm.
        let empty = EntryIndex()
        for i in 0 ..< 2_000 { _ = empty.prefetch(space: 0, key: "k\(i)") }
    }

    /// A restore reserves room for what it will add: the entries already
    /// there (some removed, their slots free) stay found, and the ones added after too.
    @Test func reservingRoomKeepsEveryEntry() {
        let index = EntryIndex()
        for i in 0 ..< 500 { _ = index.upsert(space: i % 3, key: "k\(i)", record(UInt64(i + 1))) }
        for i in stride(from: 0, to: 500, by: 7) { index.remove(space: i % 3, key: "k\(i)") }
        index.reserveCapacity(20_000)
        for i in 500 ..< 20_000 { _ = index.upsert(space: i % 3, key: "k\(i)", record(UInt64(i + 1))) }
        for i in 0 ..< 20_000 {
            let expected: UInt64? = i < 500 && i % 7 == 0 ? nil : UInt64(i + 1)
            #expect(index.record(space: i % 3, key: "k\(i)")?.sequence == expected, "k\(i)")
        }
    }

    /// Tables that double many times as keys arrive, with removals between
    /// (freed slots reused, runs shifted back): growing places each entry
    /// from the home bits its slot keeps, and every key stays found.
    @Test func growingTablesKeepEveryEntry() {
        let index = EntryIndex()
        var sequence: UInt64 = 0
        var model: [String: UInt64] = [:]
        for i in 0 ..< 20_000 {
            sequence += 1
            _ = index.upsert(space: i % 2, key: "grow-\(i)", record(sequence))
            model["\(i % 2)/grow-\(i)"] = sequence
            if i % 5 == 4 {
                let gone = i / 2
                index.remove(space: gone % 2, key: "grow-\(gone)")
                model["\(gone % 2)/grow-\(gone)"] = nil
            }
        }
        for i in 0 ..< 20_000 {
            #expect(index.record(space: i % 2, key: "grow-\(i)")?.sequence == model["\(i % 2)/grow-\(i)"], "grow-\(i)")
        }
    }

    /// Random upserts and removals over a small key range (so slots are reused
    /// and removals shift runs back) against a dictionary, with every key of
    /// the range looked up after each step.
    @Test(arguments: 0 ..< 8)
    func agreesWithADictionary(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        let index = EntryIndex()
        var model: [String: UInt64] = [:]
        var sequence: UInt64 = 0
        let keys = (0 ..< 3).flatMap { space in (0 ..< 300).map { (space, "key-\($0)") } }
        for step in 0 ..< 6000 {
            let (space, key) = keys.randomElement(using: &random)!
            let name = "\(space)/\(key)"
            if Int.random(in: 0 ..< 3, using: &random) == 0 {
                let removed = index.remove(space: space, key: key)
                #expect(removed?.record.sequence == model.removeValue(forKey: name), "step \(step)")
            } else {
                sequence += 1
                let value = Int.random(in: 0 ..< 2, using: &random) == 0 ? Data("v\(sequence)".utf8) : nil
                let (previous, ref) = index.upsert(space: space, key: key, record(sequence, value: value))
                #expect(previous?.sequence == model[name], "step \(step)")
                #expect(index.entry(ref)?.key == key)
                model[name] = sequence
            }
            if step % 500 == 0 || step == 5999 {
                for (space, key) in keys {
                    let found = index.record(space: space, key: key)
                    #expect(found?.sequence == model["\(space)/\(key)"], "step \(step): \(space)/\(key)")
                    if let found, let value = found.value { #expect(value == Data("v\(found.sequence)".utf8)) }
                }
                var visited: [(space: Int, key: String, value: Data?)] = []
                index.forEach(withValues: true) { space, key, record, _ in visited.append((space, key, record.value)) }
                #expect(visited.count == model.count)
                for (space, key, value) in visited { #expect(value == index.record(space: space, key: key)?.value) }
                var withoutValues = 0
                index.forEach(withValues: false) { space, key, record, _ in
                    withoutValues += 1
                    #expect(record.value == nil && record.sequence == model["\(space)/\(key)"])
                }
                #expect(withoutValues == model.count)
            }
        }
    }

    /// A reference goes stale when its key is replaced or removed, even if the
    /// slot is reused at once.
    @Test func referencesGoStale() {
        let index = EntryIndex()
        let (_, first) = index.upsert(space: 0, key: "a", record(1))
        let (_, second) = index.upsert(space: 0, key: "a", record(2))
        #expect(!index.isCurrent(first))
        #expect(index.isCurrent(second))
        index.remove(space: 0, key: "a")
        let (_, other) = index.upsert(space: 0, key: "a", record(3))
        #expect(!index.isCurrent(second))
        #expect(index.entry(other)?.record.sequence == 3)
    }

    /// A pending version keeps the location of the one still on disk.
    @Test func aPendingVersionKeepsTheOneOnDisk() {
        let index = EntryIndex()
        var pending = record(9, value: Data("new".utf8))
        pending.isPendingWrite = true
        pending.length = 60
        pending.diskSequence = 4
        _ = index.upsert(space: 0, key: "k", pending)
        let found = index.record(space: 0, key: "k")
        #expect(found?.isPendingWrite == true)
        #expect(found?.length == 60)
        #expect(found?.location == RecordLocation(segment: 1, offset: 9, length: 100))
        #expect(found?.diskSequence == 4)
        guard case let .hit(value) = index.lookup(space: 0, key: "k", now: 0) else { Issue.record("not a hit"); return }
        #expect(value == Data("new".utf8))
    }

    /// What an entry costs is what docs/MEMORY.md says; these fail when a field
    /// makes it grow.
    @Test func entriesStayPacked() {
        #expect(MemoryLayout<IndexShard.Entry>.stride == 64)
        #expect(MemoryLayout<ExpiryIndex.Item>.stride == 16)
        #expect(MemoryLayout<EntryRef>.stride == 8)
    }

    /// A location's segment, offset and index in its block share its place:
    /// each keeps its value at its extremes, and only segment 0 is a file of its own.
    @Test func aLocationKeepsItsSegmentOffsetAndIndexApart() {
        let largestOffset = RecordLocation.offsetLimit - 1
        for (segment, offset, index) in [
            (UInt32.max, largestOffset, 255), (1, 0, 0), (UInt32.max, 0, 0), (1, largestOffset, 0), (1, 0, 255), (0, 0, 0),
        ] {
            let location = RecordLocation(segment: segment, offset: offset, index: index, length: 77)
            #expect(location.segment == segment && location.offset == offset && location.index == index && location.length == 77)
            #expect(location.isOwnFile == (segment == 0))
            #expect(RecordLocation(place: location.place, length: 77) == location)
        }
        #expect(RecordLocation.ownFile(length: 5).isOwnFile)
    }

    /// The sequence, the flags, the read frequency and the key space share a
    /// word: each keeps its value, at its extremes, whatever the others are set to.
    @Test func packedFieldsStayApart() {
        let largest = UInt64(1) << IndexShard.Entry.sequenceBits - 1
        let lastSpace = UInt16(KeySpaces.maximumCount - 1)
        var entry = IndexShard.Entry(
            key: "k", expiry: 1, sequence: largest, value: nil, place: 0, length: 0, rawSize: 0,
            space: lastSpace, flags: [.occupied, .pendingWrite], frequency: 3
        )
        #expect(entry.sequence == largest)
        #expect(entry.space == lastSpace)
        #expect(entry.flags == [.occupied, .pendingWrite] && entry.frequency == 3)
        entry.flags = [.occupied]
        entry.sequence = 5
        #expect(entry.space == lastSpace && entry.flags == [.occupied] && entry.sequence == 5 && entry.frequency == 3)
        entry.frequency = 0
        #expect(entry.space == lastSpace && entry.flags == [.occupied] && entry.sequence == 5 && entry.frequency == 0)
        entry.space = 0
        entry.flags = [.pendingWrite]
        entry.frequency = 9 // saturates
        #expect(entry.sequence == 5 && entry.space == 0 && entry.flags == [.pendingWrite] && entry.frequency == 3)
    }

    /// A key space past the most an entry can name is refused with a typed error, not a trap.
    @Test func keySpacesStopAtTheLimit() throws {
        let cache = try Kache(inMemory: .testing())
        var opened = 2 // the default Pool and Queue
        var refusal: KacheError?
        while refusal == nil, opened <= KeySpaces.maximumCount {
            do {
                _ = try cache.pool(named: "p\(opened)", capacity: 1)
                opened += 1
            } catch {
                refusal = error as? KacheError ?? .closed
            }
        }
        // The top level is a key space too.
        #expect(opened == KeySpaces.maximumCount - 1)
        guard case .invalidKeySpaceName? = refusal else {
            Issue.record("expected invalidKeySpaceName, got \(String(describing: refusal))")
            return
        }
    }

    /// Pools driven by several threads at once, each against its own
    /// reference model, while other threads read every Pool: sharing shards
    /// and the store's lock must not bend any Pool's order.
    @Test func poolsAgreeWithTheirModelsUnderConcurrency() async throws {
        let clock = ManualClock() // never advanced: nothing expires, every order is exact
        let cache = try Kache(inMemory: .testing(clock: clock))
        let pools = try (0 ..< 4).map { try cache.pool(named: "p\($0)", capacity: 4 + $0) }
        let stop = Locked(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in pools.indices {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(writer))
                    let pool = pools[writer]
                    var model = ReferencePool(capacity: pool.capacity)
                    for step in 0 ..< 1500 {
                        let key = "k\(Int.random(in: 0 ..< 24, using: &random))"
                        if Int.random(in: 0 ..< 8, using: &random) == 0 {
                            pool.removeValue(forKey: key)
                            model.remove(key)
                        } else {
                            let ttl = Int64.random(in: 1 ... 50, using: &random)
                            try pool.set(Data(key.utf8), forKey: key, ttl: .seconds(ttl))
                            model.set(key, expiry: ttl, now: 0)
                        }
                        if step % 25 == 0 { #expect(pool.keys == model.keys, "writer \(writer), step \(step)") }
                    }
                    #expect(pool.keys == model.keys, "writer \(writer)")
                    #expect(pool.statistics.evictions == UInt64(model.evicted.count), "writer \(writer)")
                }
            }
            for reader in 0 ..< 2 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(100 + reader))
                    while !stop.withLock({ $0 }) {
                        let key = "k\(Int.random(in: 0 ..< 24, using: &random))"
                        if let value = await pools.randomElement(using: &random)!.data(forKey: key) {
                            #expect(value == Data(key.utf8))
                        }
                        // The cooperative pool may have only as many threads as
                        // readers: without a yield, writers would never run.
                        await Task.yield()
                    }
                }
            }
            for _ in pools.indices { try await group.next() }
            stop.withLock { $0 = true }
            try await group.waitForAll()
        }
        cache.checkInvariants()
    }

    /// A restore's expiry order names every entry it set once, with the
    /// version it left there: a new key appended to a slab, one in a slot an
    /// earlier removal freed, a key already there before the restore (set
    /// again, not new), and a key restored twice (two copies of a record).
    @Test func aRestoresOrderNamesEveryEntryItSetOnceAndCountsTheNewOnes() {
        let index = EntryIndex()
        for i in 0 ..< 300 { _ = index.upsert(space: 0, key: "old\(i)", record(UInt64(i + 1))) }
        // Free slots below the slabs' ends, which new keys may take.
        for i in stride(from: 0, to: 300, by: 5) { index.remove(space: 0, key: "old\(i)") }
        var firstSlots = [Int](repeating: 0, count: EntryIndex.shardCount)
        var otherSlots = [[(slot: Int, isNew: Bool)]](repeating: [], count: EntryIndex.shardCount)
        for shard in 0 ..< EntryIndex.shardCount { index.restoring(shard: shard, adding: 0) { firstSlots[shard] = $0.entries.count } }
        // (space, key, sequence): new keys in both key spaces, old keys set again, and new keys twice.
        var restores: [(space: UInt16, key: String, sequence: UInt64)] = []
        for i in 0 ..< 200 { restores.append((UInt16(i % 2), "new\(i)", UInt64(1_000 + i))) }
        for i in stride(from: 1, to: 300, by: 10) { restores.append((0, "old\(i)", UInt64(2_000 + i))) }
        for i in 0 ..< 20 { restores.append((UInt16(i % 2), "new\(i)", UInt64(3_000 + i))) }
        var newCount = [0, 0]
        for (space, key, sequence) in restores {
            let (hash, shard) = EntryIndex.hash(space: Int(space), key: key)
            index.restoring(shard: shard, adding: 1) { table in
                let entry = IndexShard.Entry(
                    key: key, expiry: Int64(sequence) * 10, sequence: sequence, value: nil, place: 0, length: 10, rawSize: 5,
                    space: space, flags: .occupied
                )
                let (previous, slot) = index.restore(entry, hash: hash, into: &table, shard)
                if previous == nil { newCount[Int(space)] += 1 }
                if slot < firstSlots[shard] { otherSlots[shard].append((slot, previous == nil)) }
            }
        }
        #expect(newCount == [100, 100])
        #expect(otherSlots.joined().contains { $0.isNew }, "no new key took a freed slot")
        #expect(otherSlots.joined().contains { !$0.isNew }, "no old key was set again")

        let order = index.restoredOrder(
            shards: 0 ..< EntryIndex.shardCount, firstSlots: firstSlots, otherSlots: otherSlots, spaceCount: 2, isQueue: [false, true]
        )
        #expect(order.newCounts == newCount)
        var expected: [UInt64: Int64] = [:]
        for (_, _, sequence) in restores { expected[sequence] = Int64(sequence) * 10 }
        // The first copies of the keys restored twice were replaced: only the second is an entry.
        for i in 0 ..< 20 { expected[UInt64(1_000 + i)] = nil }
        var found: [UInt64: Int64] = [:]
        for space in 0 ..< 2 {
            for item in order.items[space] {
                let entry = index.entry(item.ref)
                #expect(entry?.space == space && index.isCurrent(item.ref))
                if let sequence = entry?.record.sequence {
                    #expect(found.updateValue(item.expiry, forKey: sequence) == nil, "sequence \(sequence) named twice")
                }
            }
        }
        #expect(found == expected)
        // The Queue's new items, with their sequences, and no item of a key that was there before.
        #expect(order.queued[0].isEmpty)
        let replacedFirstCopies = Set((0 ..< 20).filter { $0 % 2 == 1 }.map { UInt64(1_000 + $0) })
        let queued: Set<UInt64> = Set(restores.filter { $0.space == 1 }.map(\.sequence)).subtracting(replacedFirstCopies)
        #expect(Set(order.queued[1].map(\.sequence)) == queued)
    }
}
