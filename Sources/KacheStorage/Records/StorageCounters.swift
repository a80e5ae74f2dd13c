import Synchronization

/// What the record store counts itself: figures of its own work, which no
/// index lock needs to guard.
package final class StorageCounters: Sendable {
    /// Writes the disk refused (a file, a batch's records, or tombstones).
    package let writeErrors = Atomic<UInt64>(0)
    /// Segment files compacted: live records copied forward, the file deleted.
    package let compactions = Atomic<UInt64>(0)

    package init() {}
}
