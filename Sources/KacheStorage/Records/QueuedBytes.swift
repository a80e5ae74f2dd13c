import Synchronization

/// The memory the write-behind queue holds beyond the values themselves: the
/// encoded files waiting to be written, and each job's own storage. The
/// memory budget counts it, so a burst of `async` sets evicts values from
/// memory rather than growing the process past the budget.
///
/// An atomic, not a field under a lock: the queue changes it under its own
/// lock, and the store reads it under the store's, and neither lock may wait
/// for the other.
package final class QueuedBytes: Sendable {
    private let bytes = Atomic<Int>(0)

    package init() {}

    /// What a queued job holds that the budget does not count already (a
    /// write's value is in memory, and counted, until its file is written).
    package static func held(by job: RecordFiles.Job) -> Int {
        switch job {
        case let .write(write): return held(by: write)
        case let .delete(removal): return removal.key.utf8.count + MemoryLayout<RecordFiles.Job>.stride
        }
    }

    /// What a queued write holds, without wrapping it in a job (a copy of it).
    package static func held(by write: RecordWrite) -> Int {
        write.encodedLength + MemoryLayout<RecordFiles.Job>.stride
    }

    /// What `writes` hold in all.
    static func held(by writes: [RecordWrite]) -> Int {
        writes.reduce(0) { $0 + held(by: $1) }
    }

    package var current: Int { bytes.load(ordering: .relaxed) }

    package func add(_ count: Int) {
        bytes.wrappingAdd(count, ordering: .relaxed)
    }
}
