import Foundation
import Testing
@testable import Kache

/// Issue 6, part 5: many threads setting, getting, removing, sweeping,
/// pushing and popping the same keys, then the invariants: the index agrees
/// with itself, no value read was foreign or torn, no Queue item was lost or
/// delivered twice, each producer's items came out in order, and a reopen
/// finds the same.
///
/// `scripts/sanitize.sh` runs this suite under ThreadSanitizer and
/// AddressSanitizer; `KACHE_RACE_SECONDS` sets how long each run lasts.
@Suite struct RaceStressTests {
    static let threadCount = 8

    /// Both layouts: a file per entry, and records in segment files (where
    /// reads race appends, tombstones, checkpoints and compaction).
    @Test(arguments: [Durability.async, .sync], [true, false])
    func threadsOnTheSameKeysKeepEveryInvariant(durability: Durability, filePerEntry: Bool) throws {
        let seconds = ProcessInfo.processInfo.environment["KACHE_RACE_SECONDS"].flatMap(Double.init) ?? 2
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let clock = ManualClock()
        // A small memory budget: most reads come from files, racing their writes and deletions.
        let cache = try Kache(directory: directory, configuration: .reliability(durability, clock: clock, memoryBudget: 4 << 10, filePerEntry: filePerEntry))
        let pool = try cache.pool(named: "race-pool", capacity: RaceWorker.poolCapacity)
        let queue = try cache.queue(named: "race-queue", capacity: 1 << 20)
        let ledger = RaceLedger(threadCount: Self.threadCount)
        let deadline = Date().addingTimeInterval(seconds)
        let done = DispatchGroup()
        for thread in 0 ..< Self.threadCount {
            let worker = RaceWorker(cache: cache, pool: pool, queue: queue, clock: clock, ledger: ledger, thread: thread)
            done.enter()
            Thread.detachNewThread {
                worker.run(until: deadline, seed: UInt64(thread) &+ 0x5EED)
                done.leave()
            }
        }
        #expect(done.wait(timeout: .now() + seconds + 60) == .success, "the threads did not finish")
        cache.checkInvariants()

        let threads = ledger.all
        #expect(threads.flatMap(\.errors).isEmpty, "\(threads.flatMap(\.errors).prefix(5))")
        #expect(threads.flatMap(\.foreign).isEmpty, "foreign or torn reads: \(threads.flatMap(\.foreign).prefix(5))")
        #expect(threads.map(\.overCapacity).reduce(0, +) == 0, "the Pool was seen over its capacity")
        #expect(cache.statistics.sets == UInt64(threads.map { $0.sets + $0.pushed.count }.reduce(0, +)))
        #expect(cache.statistics.writeErrors == 0)

        let statistics = cache.statistics
        print("Race stress (\(durability), \(Self.threadCount) threads, \(seconds) s): \(statistics.sets) sets and pushes, "
            + "\(threads.flatMap(\.popped).count) pops, \(statistics.memoryHits + statistics.diskHits + statistics.misses) reads "
            + "(\(statistics.diskHits) from files), \(statistics.expirations) expirations, \(statistics.evictions) evictions")
        var remaining: [UInt64] = []
        while let data = queue.pop() { remaining.append(UInt64(try #require(raceVersion(of: data, key: "item")))) }
        let pushed = threads.flatMap(\.pushed)
        let delivered = threads.flatMap(\.popped) + remaining
        #expect(pushed.count > 0 && threads.flatMap(\.popped).count > 0, "the run pushed or popped nothing")
        #expect(Set(delivered).count == delivered.count, "Queue items delivered twice")
        #expect(Set(delivered) == Set(pushed), "Queue items lost: \(Set(pushed).subtracting(delivered).count)")
        for consumer in threads.map(\.popped) + [remaining] {
            #expect(Self.eachProducerAscends(consumer), "a consumer saw one producer's items out of order")
        }
        cache.checkInvariants()
        try cache.close()

        let reopened = try Kache(directory: directory, configuration: .reliability(.sync, clock: clock, filePerEntry: filePerEntry))
        reopened.checkInvariants()
        #expect(reopened.statistics.quarantined == 0)
        let reopenedPool = try reopened.pool(named: "race-pool", capacity: RaceWorker.poolCapacity)
        for key in RaceWorker.keys {
            if let data = reopened.data(forKey: key) { #expect(raceVersion(of: data, key: key) != nil) }
        }
        for key in RaceWorker.poolKeys {
            if let data = reopenedPool.data(forKey: key) { #expect(raceVersion(of: data, key: key) != nil) }
        }
        #expect(try reopened.queue(named: "race-queue", capacity: 1 << 20).pop() == nil, "a popped item came back")
        try reopened.close()
    }

    /// Whether, within `items`, the items of each producer (the high 32 bits) ascend.
    static func eachProducerAscends(_ items: [UInt64]) -> Bool {
        var last: [UInt64: UInt64] = [:]
        for item in items {
            let producer = item >> 32
            if let previous = last[producer], previous >= item { return false }
            last[producer] = item
        }
        return true
    }
}
