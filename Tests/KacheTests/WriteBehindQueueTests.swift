import Dispatch
import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

@Suite struct WriteBehindQueueTests {
    private func removal(_ index: Int) -> RecordFiles.Job {
        let key = "key-\(index)"
        return .delete(RecordRemoval(
            space: 0, key: key, name: EntryName(space: "", key: key), kind: 0, expiry: 0,
            tombstoneSequence: UInt64(index), mayHaveOwnFile: false
        ))
    }

    @Test func batchesTakeTheOldestJobsUpToTheirBytes() {
        let held = QueuedBytes()
        var queue = WriteBehind.Queue(held: held)
        for index in 0 ..< 10 { queue.append(removal(index)) }
        let perJob = removal(0).byteCount
        #expect(queue.bytes == 10 * perJob)
        let batch = queue.takeBatch(maximumBytes: 3 * perJob)
        #expect(batch.count == 3)
        if case let .delete(first) = batch[0] { #expect(first.key == "key-0") } else { Issue.record("a removal") }
        #expect(queue.jobs.count == 7 && queue.bytes == 7 * perJob)
        #expect(held.current == 10 * QueuedBytes.held(by: removal(0)), "a batch taken still holds its memory until it is written")
        #expect(queue.takeBatch(maximumBytes: 1).count == 1, "at least one job, however small the batch")
    }

    /// A deque keeps the storage it grew to; after a burst, an emptied queue
    /// must start over, or the burst's storage stays resident for good.
    @Test func anEmptiedQueueThatGrewPastItsLimitStartsOver() {
        var queue = WriteBehind.Queue(held: QueuedBytes())
        for index in 0 ..< WriteBehind.Queue.jobsKept + 1 { queue.append(removal(index)) }
        #expect(queue.highWater == WriteBehind.Queue.jobsKept + 1)
        while !queue.jobs.isEmpty { _ = queue.takeBatch(maximumBytes: 1 << 20) }
        #expect(queue.highWater == 0)
        #expect(queue.bytes == 0)

        for index in 0 ..< 10 { queue.append(removal(index)) }
        while !queue.jobs.isEmpty { _ = queue.takeBatch(maximumBytes: 1 << 20) }
        #expect(queue.highWater == 10, "a small queue keeps its storage: no reallocation per batch")
    }

    /// A killed process loses its queue: the jobs go unrun, and the memory
    /// they held leaves the count, except a batch's taken already (it is
    /// still being written, and releases its own when done).
    @Test func anAbandonedQueueDropsItsJobsAndWhatTheyHeld() {
        let held = QueuedBytes()
        var queue = WriteBehind.Queue(held: held)
        for index in 0 ..< 5 { queue.append(removal(index)) }
        let taken = queue.takeBatch(maximumBytes: 1)
        queue.abandon()
        #expect(queue.jobs.isEmpty && queue.bytes == 0)
        #expect(held.current == QueuedBytes.held(by: taken[0]), "only the batch in flight is still held")
        queue.append(removal(9))
        #expect(queue.jobs.isEmpty && queue.bytes == 0, "a job queued after the kill is dropped too")
        #expect(held.current == QueuedBytes.held(by: taken[0]))
    }
}

/// `WriteBehind.abandon()`, the stop that tests use as a SIGKILL of `async` durability.
@Suite struct WriteBehindAbandonTests {
    /// The writer is held inside its first batch (the test holds the lock
    /// that orders file changes to that key) while more writes queue behind
    /// it; the queued ones must never reach a file, the one in flight must.
    @Test func abandonDropsTheQueuedWritesAndWaitsForTheBatchInFlight() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock, filePerEntry: true))
        let writeBehind = try #require(cache.writeBehind)
        let held = try #require(cache.store.withLock { $0.memory.queued })
        let abandoned = DispatchSemaphore(value: 0)
        try cache.disk!.withExclusiveAccess(to: EntryName(space: "", key: "in-flight")) { () throws in
            try cache.set(Data("taken".utf8), forKey: "in-flight", ttl: .seconds(60))
            try blockUntil("the writer takes the first write and waits for its key's lock") {
                writeBehind.pendingCount == 0 && !writeBehind.isIdle
            }
            for i in 0 ..< 20 { try cache.set(compressible(300, seed: i), forKey: "queued\(i)", ttl: .seconds(60)) }
            #expect(writeBehind.pendingCount == 20)
            DispatchQueue.global().async {
                writeBehind.abandon()
                abandoned.signal()
            }
            try blockUntil("abandon drops the queued writes") { writeBehind.pendingCount == 0 }
            #expect(abandoned.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "abandon returned while a batch was being written")
        }
        try #require(abandoned.wait(timeout: .now() + .seconds(30)) == .success, "abandon never returned")
        #expect(writeBehind.isIdle)
        #expect(held.current == 0, "the dropped jobs still count against the memory budget")
        try cache.set(Data("late".utf8), forKey: "late", ttl: .seconds(60))
        #expect(writeBehind.pendingCount == 0 && held.current == 0, "a write queued after abandon was kept")
        cache.abandonForTesting()

        let reopened = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock, filePerEntry: true))
        #expect(reopened.data(forKey: "in-flight") == Data("taken".utf8))
        #expect((0 ..< 20).allSatisfy { reopened.data(forKey: "queued\($0)") == nil }, "a dropped write reached its file")
        #expect(reopened.data(forKey: "late") == nil)
        #expect(dir.entryFiles().count == 1)
        reopened.checkInvariants()
    }
}

/// `WriteBehind.drain()`, under `save()` and `close()`: afterwards every
/// write queued before the call is in its file, the small records a batch
/// held back for their block included.
@Suite struct WriteBehindDrainTests {
    /// The writer is held inside a batch (the test holds the lock that orders
    /// file changes to the large value's key) that also carries a small
    /// record; `drain()` starts meanwhile, and only then is the writer let
    /// go, so the small record is held back for its block after `drain()`
    /// looked. `drain()` must still write it before it returns: once it
    /// returned without, and `close()` lost the write.
    @Test func aRecordABatchInFlightHoldsBackIsWrittenBeforeDrainReturns() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        let writeBehind = try #require(cache.writeBehind)
        let drained = DispatchSemaphore(value: 0)
        try cache.disk!.withExclusiveAccess(to: EntryName(space: "", key: "large")) { () throws in
            try cache.disk!.withExclusiveAccess(to: EntryName(space: "", key: "gate")) { () throws in
                try cache.set(incompressible(40_000, seed: 1), forKey: "gate", ttl: .seconds(60))
                try blockUntil("the writer takes the gate's write and waits for its key's lock") {
                    writeBehind.pendingCount == 0 && !writeBehind.isIdle
                }
                // Queued together behind it: the next batch carries both.
                try cache.set(incompressible(40_000, seed: 2), forKey: "large", ttl: .seconds(60))
                try cache.set(Data("small".utf8), forKey: "small", ttl: .seconds(60))
                #expect(writeBehind.pendingCount == 2)
            }
            try blockUntil("the writer takes both and waits for the large value's lock") { writeBehind.pendingCount == 0 }
            Thread.detachNewThread {
                writeBehind.drain()
                drained.signal()
            }
            // Time for drain() to look for held-back records and start waiting for the batch.
            usleep(200_000)
        }
        try #require(drained.wait(timeout: .now() + .seconds(60)) == .success, "drain() never returned")
        let small = cache.store.withLock { $0.record(space: 0, key: "small") }
        #expect(small?.isPendingWrite == false && small?.location != nil, "drain() returned before the small record was written")
        #expect(writeBehind.isIdle)
        try cache.close()
        let reopened = try Kache(directory: dir.url, configuration: .testing(.async))
        #expect(reopened.data(forKey: "small") == Data("small".utf8))
    }
}
