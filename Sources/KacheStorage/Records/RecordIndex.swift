import Foundation

/// One version of one key: what the record store writes, and what the index
/// is asked about. `space` is a key-space number; the record store does not
/// know what it stands for.
package struct RecordVersion: Sendable, Hashable {
    package var space: Int
    package var key: String
    package var sequence: UInt64
    /// The index's own name for the entry when it made the version (opaque
    /// here), which spares it a lookup by key; nil when unknown.
    package var indexHandle: UInt64?

    package init(space: Int, key: String, sequence: UInt64, indexHandle: UInt64? = nil) {
        self.space = space
        self.key = key
        self.sequence = sequence
        self.indexHandle = indexHandle
    }
}

/// An entry that left the index, as the record store needs it: a tombstone
/// to append, and a file of its own to delete.
package struct RecordRemoval: Sendable {
    package var space: Int
    /// The key as the index knows it.
    package var key: String
    package var name: EntryName
    /// The key space's kind byte, for the tombstone's header.
    package var kind: UInt8
    package var expiry: Timestamp
    /// The tombstone's sequence (taken when the entry left the index, so it
    /// sorts before any later version); 0 for none.
    package var tombstoneSequence: UInt64
    /// Whether a file of its own may hold it. False spares an unlink that
    /// would find nothing, once per removal of a small entry.
    package var mayHaveOwnFile: Bool

    package init(space: Int, key: String, name: EntryName, kind: UInt8, expiry: Timestamp, tombstoneSequence: UInt64, mayHaveOwnFile: Bool) {
        self.space = space
        self.key = key
        self.name = name
        self.kind = kind
        self.expiry = expiry
        self.tombstoneSequence = tombstoneSequence
        self.mayHaveOwnFile = mayHaveOwnFile
    }
}

/// The index, as the record store sees it: the one thing above that it calls.
///
/// The record store writes a version, then asks the index to commit where it
/// landed; a version replaced meanwhile is not committed, and its bytes count
/// as dead. Each method takes the index's lock once (`areCurrent`, which
/// only reads, may take finer ones instead); none calls back down
/// into the record store except through the segment accounting it is given.
package protocol RecordIndex: Sendable {
    /// Whether each of `versions` is still the current version of its key.
    func areCurrent(_ versions: [RecordVersion]) -> [Bool]

    /// Where each of `versions` is on disk now; nil for one that is not the
    /// current version of its key, or not on disk yet.
    func locations(of versions: [RecordVersion]) -> [RecordLocation?]

    /// The one conditional commit when writes land: each version still
    /// current now points at its location, the others count as dead.
    func commit(_ landed: [(version: RecordVersion, location: RecordLocation)]) -> Commit

    /// Moves compacted records to their copies; a version that changed
    /// meanwhile stays where it is, and its copy counts as dead.
    /// - Returns: entries evicted for the disk budget, when the copies take
    ///   more than the originals did: their records must go.
    func relocate(_ moves: [(version: RecordVersion, from: RecordLocation, to: RecordLocation)]) -> [RecordRemoval]

    /// Whether the key's current version is, or is being written, in a file
    /// of its own: then that file must stay.
    func keepsOwnFile(space: Int, key: String) -> Bool

    /// Takes a version whose write failed out of the index, if it is still
    /// the current one (so nothing stale is served later).
    /// - Returns: the removal, whose tombstone and file the store then handles.
    func removeUnwritten(_ version: RecordVersion) -> RecordRemoval?

    /// The numbers of the key spaces records name; a name the index doesn't
    /// know is left out.
    func spaces(named names: Set<String>) -> [String: Int]

    /// Whether the disk budget is overrun while segments hold dead bytes:
    /// then reclaiming is due sooner.
    var isOverBudgetWithDeadBytes: Bool { get }

    /// The manifest to write as a checkpoint now, and the sequence it covers
    /// records up to; nil once the cache is closed.
    func checkpoint(savedAt: Timestamp) -> (manifest: [UInt8], nextSequence: UInt64)?

    /// Runs `body` while no reader is between looking up a location and
    /// taking its segment file, so that a file retired in `body` is never one
    /// a reader is about to take.
    func excludingReaders<R: Sendable>(_ body: () -> R) -> R
}

/// What a commit (`RecordIndex.commit`) leaves the record store to do.
package struct Commit: Sendable {
    /// The keys whose previous version was in a file of its own and now
    /// lives in a segment: that file must go.
    package var leftOwnFiles: [RecordVersion]
    /// Entries evicted for the disk budget, when the records landed took
    /// more than they were charged while pending: their records must go.
    package var evicted: [RecordRemoval]

    package init(leftOwnFiles: [RecordVersion], evicted: [RecordRemoval]) {
        self.leftOwnFiles = leftOwnFiles
        self.evicted = evicted
    }
}
