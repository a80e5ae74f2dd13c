import Foundation
import KacheStorage

/// What the cache knows about one live entry, as the index hands it out and
/// takes it back. The index keeps it packed (`IndexShard.Entry`, 72 bytes);
/// this is the unpacked form the store's logic works on.
struct EntryRecord: Sendable {
    /// When the entry expires.
    var expiry: Timestamp
    /// The write order; identifies this version of the entry in the expiry
    /// index, the memory ring and the file header.
    var sequence: UInt64
    /// The value's length in bytes.
    var rawSize: Int
    /// The value, when it is in memory.
    var value: Data?
    /// Reads from memory since the value entered it, at most 3: S3-FIFO's
    /// counter (`MemoryBudget`), which its queues' hands count down.
    var frequency: UInt8 = 0
    /// Its place in the disk budget's queues, and reads counted there (`DiskQueues`).
    var diskPlace = DiskPlace()
    /// The value is not yet in its file: it must stay in memory until it is.
    var isPendingWrite: Bool
    /// What this version's record costs on disk: once written, the length
    /// of its file or its share of its segment block; while pending, the
    /// length of its file, or for a record bound for a segment the share the
    /// disk budget expects it to take (`DiskBudget.expectedShare`); 0 in
    /// `memory` durability.
    var length: Int
    /// Where this key is on disk: this version once written, an older one
    /// while this one is pending; nil when none is. The record store chose
    /// it; the index keeps it and hands it back without looking inside.
    var location: RecordLocation?
    /// The sequence of the version at `location`: `sequence` once written,
    /// an older version's while a newer one is pending.
    var diskSequence: UInt64 = 0

    /// The length of the record at `location`, 0 when there is none.
    var fileSize: Int { location?.length ?? 0 }
    /// Whether a version is on disk, in a file of its own.
    var isInOwnFile: Bool { location?.isOwnFile == true }

    /// What the disk budget counts of this record.
    var diskFacts: DiskFacts {
        DiskFacts(isPendingWrite: isPendingWrite, length: length, location: location, inMain: diskPlace.inMain)
    }
}

/// The fields of an `EntryRecord` that the disk budget counts (`DiskBudget`),
/// without the value: plain data, copied without retaining or releasing
/// anything. The writer's commit passes them for each record it lands,
/// under the store's lock, which the sets wait for meanwhile.
struct DiskFacts: Sendable {
    var isPendingWrite: Bool
    /// `EntryRecord.length`.
    var length: Int
    var location: RecordLocation?
    /// In the disk budget's main queue (`DiskPlace.inMain`).
    var inMain: Bool

    var isInOwnFile: Bool { location?.isOwnFile == true }
}

/// An entry that left the index, whose file (if any) must go too.
struct Removal: Sendable {
    var space: Int
    var spaceName: String
    /// The key space's kind, for the tombstone's header.
    var kind: KeySpace.Kind
    var key: String
    /// Its record as it left, without the value: enough to put it back.
    var record: EntryRecord
    /// False when no file was ever written or scheduled for it.
    var hasFile: Bool
    /// The sequence of the tombstone that records its removal on disk (taken
    /// when it left the index, so it sorts before any later version), 0 for none.
    var tombstoneSequence: UInt64 = 0
    /// Whether a file of its own may hold it: an older version written to
    /// one, or a pending version long enough to get one (its write may land
    /// before the removal is seen). False spares an unlink that would find
    /// nothing, once per removal of a small entry.
    var mayHaveOwnFile = true

    var sequence: UInt64 { record.sequence }
}

extension Removal {
    /// What the record store needs to record the removal on disk.
    var recordRemoval: RecordRemoval {
        RecordRemoval(
            space: space, key: key, name: EntryName(space: spaceName, key: key), kind: kind.rawValue,
            expiry: record.expiry, tombstoneSequence: tombstoneSequence, mayHaveOwnFile: mayHaveOwnFile
        )
    }
}

extension [Removal] {
    /// The removals that have a file or a record to remove, as the record store takes them.
    var recordRemovals: [RecordRemoval] {
        compactMap { $0.hasFile ? $0.recordRemoval : nil }
    }
}
