/// Counts and sizes of a cache instance, read through ``Kache/statistics``.
///
/// Counters start at zero when the instance opens; sizes describe the
/// cache as it is now.
public struct Statistics: Sendable, Equatable, Codable {
    /// Reads answered from memory.
    public var memoryHits: UInt64
    /// Reads answered from a file (the value was then promoted to memory).
    public var diskHits: UInt64
    /// Reads that found nothing live.
    public var misses: UInt64
    /// Values stored (`set` and Queue `push`).
    public var sets: UInt64
    /// Entries removed because their time was up.
    public var expirations: UInt64
    /// Entries evicted by a full Pool or dropped by a full Queue.
    public var evictions: UInt64
    /// Values that left memory for the memory budget (their files stay, except in `memory` durability).
    public var memoryEvictions: UInt64
    /// Values that entered memory's main queue at once because the memory
    /// tier remembered their key: read again soon after leaving memory
    /// unread (S3-FIFO's ghost hits).
    public var memoryGhostHits: UInt64
    /// Damaged records found since open, each read as a miss: files of their
    /// own moved to `quarantine/`, records in segment files left as dead bytes.
    public var quarantined: UInt64
    /// Files that could not be written (disk full, I/O error).
    public var writeErrors: UInt64
    /// Reads that could not open or read a file for a reason that says nothing
    /// about its bytes (descriptors exhausted, permission, I/O error, memory):
    /// each was a miss that left the file and the entry in place.
    public var readErrors: UInt64
    /// Live entries (in memory or on disk), in every key space.
    public var entries: Int
    /// Values held in memory.
    public var entriesInMemory: Int
    /// Bytes the values held in memory occupy: each value's bytes, plus 96 for
    /// its `Data` storage beyond 14 bytes (what the memory budget counts).
    public var bytesInMemory: Int
    /// The memory budget.
    public var memoryBudget: Int
    /// Entry files on disk, as the index knows them.
    public var filesOnDisk: Int
    /// Bytes of those files (headers included).
    public var bytesOnDisk: Int
    /// Bytes the entry files and segment files occupy on the file system
    /// (whole blocks, as `du` counts), including what is still being written in
    /// `async` durability.
    public var allocatedBytes: Int
    /// Bytes the directory needs besides the entry files, counted against the
    /// disk budget: its folders, lock and quarantined files (as measured at
    /// open, `load()` and `save()`), and room for two copies of the manifest
    /// and for the folders' entries. `allocatedBytes + reservedBytes` is
    /// what the budget limits.
    public var reservedBytes: Int
    /// The disk budget, or nil for none.
    public var diskBudget: Int?
    /// Entries evicted to stay within the disk budget (at open too, when the budget shrank).
    public var budgetEvictions: UInt64
    /// Bytes those evictions freed.
    public var budgetEvictedBytes: Int
    /// New keys that entered the disk budget's main queue at once because
    /// the budget remembered them: set again soon after they were evicted
    /// unread (S3-FIFO's ghost hits, for the disk budget).
    public var budgetGhostHits: UInt64
    /// Segment files on disk, where small entries' records are appended.
    public var segmentFiles: Int
    /// Bytes of the segment files, live and dead records together.
    public var segmentBytes: Int
    /// Bytes of segment records that no longer hold a live entry (replaced,
    /// removed, expired or evicted), until their segment is compacted or deleted.
    public var deadBytes: Int
    /// Segment files compacted (live records copied forward, the file deleted), since open.
    public var compactions: UInt64
    /// Bytes this instance handed to the file system for entries (records,
    /// per-key files, copies made by compaction), since open. Divided by the
    /// bytes set, it is the write amplification.
    public var bytesWritten: UInt64
    /// Bytes of every entry's value, uncompressed.
    public var rawBytes: Int
    /// File writes and deletions queued in `async` durability.
    public var pendingWrites: Int

    /// Reads from memory or disk that found a live value, over all reads.
    public var hitRatio: Double {
        let hits = memoryHits + diskHits
        let reads = hits + misses
        return reads == 0 ? 0 : Double(hits) / Double(reads)
    }
}
