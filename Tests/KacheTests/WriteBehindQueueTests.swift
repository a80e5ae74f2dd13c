import Foundation
import Testing
@testable import Kache

@Suite struct WriteBehindQueueTests {
    private func removal(_ index: Int) -> Persister.Job {
        let record = EntryRecord(
            expiry: 0, sequence: UInt64(index), rawSize: 0, value: nil,
            isPendingWrite: false, length: 100, fileSize: 100, segment: 1, offset: 0, diskSequence: UInt64(index)
        )
        return .delete(Removal(spaceIndex: 0, space: "", key: "key-\(index)", record: record, hasFile: true))
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
}
