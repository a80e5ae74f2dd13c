import Foundation
import KacheStorage
import Testing
@testable import Kache
import KacheTestSupport

/// The memory tier's policy, S3-FIFO (`MemoryBudget`).
@Suite struct MemoryPolicyTests {
    /// Seeded cache-aside traffic in `memory` durability, skewed towards a
    /// few keys and with one-time keys mixed in: after every request the
    /// tier and the model agree on the hit, and every few steps on which keys
    /// are resident.
    @Test(arguments: [UInt64(1), 2, 3])
    func theMemoryTierMatchesAPlainS3FIFO(seed: UInt64) throws {
        let value = compressible(200, seed: 1)
        let charge = MemoryBudget.charge(forValueOf: value.count)
        // 60 values: a small queue of 6, a ghost of at most 11 keys (limit / 1024).
        let limit = 60 * charge
        let cache = try Kache(inMemory: .testing(.memory, memoryBudget: limit))
        var model = S3FIFOModel(room: { _ in limit }, fits: { _, charged in charged <= limit }, ghostCount: { _ in limit / 1024 })
        var random = SeededGenerator(seed: seed)
        var oneTime = 0
        for step in 0 ..< 6000 {
            let key: String
            if random.next() % 100 < 30 {
                key = "once\(oneTime)"
                oneTime += 1
            } else {
                // The smaller of two draws: key 0 most often.
                key = "k\(min(random.next() % 300, random.next() % 300))"
            }
            let hit = cache.data(forKey: key) != nil
            #expect(hit == model.get(key), "step \(step): \(key)")
            guard hit == model.isResident(key) else { return }
            if !hit {
                try cache.set(value, forKey: key, ttl: .seconds(3600))
                model.insert(key, charge: charge)
            }
            if step % 97 == 0 {
                for number in 0 ..< 300 {
                    #expect(cache.contains("k\(number)") == model.isResident("k\(number)"), "step \(step): k\(number)")
                }
                cache.checkInvariants()
            }
        }
        #expect(cache.statistics.memoryEvictions > 1000)
    }

    /// A value read twice while new survives a stream of keys read once
    /// (scan resistance), where the CLOCK before it lost it to the stream.
    @Test func aValueReadTwiceOutlastsAStreamOfKeysReadOnce() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 20 * MemoryBudget.charge(forValueOf: 1000)))
        try cache.set(compressible(1000), forKey: "hot", ttl: .seconds(60))
        _ = cache.data(forKey: "hot")
        _ = cache.data(forKey: "hot")
        for i in 0 ..< 200 { try cache.set(compressible(1000, seed: i), forKey: "once\(i)", ttl: .seconds(60)) }
        let before = cache.statistics
        #expect(cache.data(forKey: "hot") == compressible(1000))
        #expect(cache.statistics.memoryHits == before.memoryHits + 1, "the value read twice left memory")
        cache.checkInvariants()
    }

    /// A key whose value left memory unread, read again soon, comes back to
    /// the main queue (the ghost remembered it): a further stream of new
    /// keys does not push it out, though it was read only once since.
    @Test func aKeyTheGhostRemembersComesBackToMain() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 20 * MemoryBudget.charge(forValueOf: 1000)))
        // Memory full first: from then on a new value joins the small queue (2 values here).
        for i in 0 ..< 30 { try cache.set(compressible(1000, seed: i), forKey: "a\(i)", ttl: .seconds(60)) }
        try cache.set(compressible(1000), forKey: "again", ttl: .seconds(60))
        for i in 30 ..< 35 { try cache.set(compressible(1000, seed: i), forKey: "a\(i)", ttl: .seconds(60)) }
        let left = cache.statistics
        #expect(cache.data(forKey: "again") == compressible(1000))
        #expect(cache.statistics.diskHits == left.diskHits + 1, "the value had left memory")
        #expect(cache.statistics.memoryGhostHits == left.memoryGhostHits + 1)
        for i in 0 ..< 60 { try cache.set(compressible(1000, seed: 100 + i), forKey: "b\(i)", ttl: .seconds(60)) }
        let before = cache.statistics
        #expect(cache.data(forKey: "again") == compressible(1000))
        #expect(cache.statistics.memoryHits == before.memoryHits + 1, "the remembered key was not kept in main")
    }

    /// A value read back from its file starts counting its reads afresh, as a
    /// new one does: reads from before it left memory don't count towards
    /// the two that keep it.
    @Test func aValueReadBackFromDiskCountsItsReadsAfresh() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 20 * MemoryBudget.charge(forValueOf: 1000)))
        for i in 0 ..< 30 { try cache.set(compressible(1000, seed: i), forKey: "a\(i)", ttl: .seconds(60)) }
        try cache.set(compressible(1000), forKey: "x", ttl: .seconds(60))
        _ = cache.data(forKey: "x") // one read while new
        // Out of memory, then out of the ghost's memory too (it remembers at most 21 keys here).
        for i in 30 ..< 80 { try cache.set(compressible(1000, seed: i), forKey: "a\(i)", ttl: .seconds(60)) }
        let before = cache.statistics
        #expect(cache.data(forKey: "x") == compressible(1000))
        #expect(cache.statistics.diskHits == before.diskHits + 1 && cache.statistics.memoryGhostHits == before.memoryGhostHits)
        _ = cache.data(forKey: "x") // one read since it came back: not the two that keep it
        for i in 80 ..< 85 { try cache.set(compressible(1000, seed: i), forKey: "a\(i)", ttl: .seconds(60)) }
        let later = cache.statistics
        #expect(cache.data(forKey: "x") == compressible(1000))
        #expect(cache.statistics.diskHits == later.diskHits + 1, "a read from before it left memory was counted")
    }

    /// Values not yet written can't leave memory: the hand parks each one it
    /// finds outside the queues, so the next insert's hand does not pass over
    /// it again, and it goes back to its queue when its write lands.
    @Test func aValueNotYetWrittenIsParkedUntilItsWriteLands() {
        var state = StoreState(memoryLimit: 10 * MemoryBudget.charge(forValueOf: 500), keepsFiles: true)
        var insertions: [StoreState.Insertion] = []
        for i in 0 ..< 30 {
            insertions.append(state.insert(space: StoreState.topLevel, key: "k\(i)", value: compressible(500, seed: i), expiry: .max, now: 0, fileLength: 600))
        }
        // Nothing could leave: every value is parked, none waits in a queue for the next hand.
        #expect(state.memory.values == 30)
        #expect(state.memory.parked.count == 30)
        #expect(state.memory.small.isEmpty && state.memory.main.isEmpty)
        var ledger = SegmentStore.LedgerChanges()
        for (i, insertion) in insertions.enumerated() {
            _ = state.markWritten(
                space: StoreState.topLevel, key: "k\(i)", sequence: insertion.sequence, ref: insertion.ref,
                location: RecordLocation(segment: 1, offset: i * 8, length: 100), ledger: &ledger
            )
        }
        // Written, they went back to their queues and the hand took memory back within its budget.
        #expect(state.memory.parked.isEmpty)
        #expect(!state.memory.valuesAreOver)
        #expect(state.memory.values == 10)
        state.checkInvariants()
    }

    /// Memory over its budget through the write-behind queue alone, with
    /// every queued slot stale: making room returns (it once spun forever,
    /// asking an empty queue for a slot).
    @Test func makingRoomWithOnlyStaleSlotsReturns() {
        let queued = QueuedBytes()
        var state = StoreState(memoryLimit: 10_000, keepsFiles: true, writeBehindBytes: queued)
        for i in 0 ..< 5 { _ = state.insert(space: StoreState.topLevel, key: "k\(i)", value: compressible(500, seed: i), expiry: .max, now: 0) }
        for i in 0 ..< 5 { _ = state.remove(space: StoreState.topLevel, key: "k\(i)") }
        queued.add(1 << 20)
        state.enforceMemoryBudget(makingRoomFor: 1000)
        #expect(state.memory.small.isEmpty && state.memory.main.isEmpty)
        #expect(state.memory.bytes == 0)
    }
}
