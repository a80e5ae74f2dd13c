import Foundation

/// One version of one entry, to write: an encoded file of its own, or a
/// record for a segment's blocks.
///
/// A class, not a struct: a write passes from the set to the queue, the
/// writer's batch, its bucket, its block's gathering and the commit, and a
/// struct of three strings and two buffers was copied at each step (a
/// retain and a release per field; together a fifth of the writer's time in W8).
///
/// **Kept within 128 bytes** (a test checks it). A set allocates one on its
/// own thread and the `async` writer frees it on another, and glibc's `free`
/// takes the lock of the arena a block came from, unless the block is small
/// enough for the arena's lock-free "fast" lists (128 bytes with the header
/// malloc adds). Laid out as two records and a file in one, it took 240: the
/// writer waited for the set thread's arena lock about 9,000 times in a W8 run
/// (`perf record -e sched:sched_switch --call-graph dwarf`). So a record's
/// fields are stored flat, and what only a file of its own (or a key whose
/// canonical form differs) needs is in `Rare`, nil for W8's records.
package final class RecordWrite: Sendable {
    /// What few writes need, boxed apart, so that the common record stays small.
    private indirect enum Rare: Sendable {
        /// The key as the index has it, where the record's (canonical) key differs.
        case versionKey(String)
        /// A file of its own: its name, its encoded and sealed bytes, and the value's length.
        case file(name: EntryName, bytes: Data, rawSize: Int)
    }

    /// The record's key (canonical); for a file of its own, the version's key.
    private let key: String
    private let spaceName: String
    /// The value, for a record; empty for a file of its own.
    private let value: Data
    private let sequence: UInt64
    private let expiry: Timestamp
    private let bucketIndex: Int64
    private let rare: Rare?
    private let indexHandle: UInt64?
    private let space: Int32
    private let kind: UInt8
    private let bucketShift: Int8

    /// A file of its own.
    package init(version: RecordVersion, name: EntryName, file: Data, rawSize: Int) {
        key = version.key
        spaceName = name.space
        value = Data()
        sequence = version.sequence
        expiry = 0
        bucketIndex = 0
        rare = .file(name: name, bytes: file, rawSize: rawSize)
        indexHandle = version.indexHandle
        space = Int32(version.space)
        kind = 0
        bucketShift = 0
    }

    /// A record appended to the segment of `bucket`, of `version`'s sequence:
    /// its key is `canonicalKey`, or `version.key` where that is nil (an ASCII key).
    package init(
        version: RecordVersion, canonicalKey: String?, space: String, kind: UInt8, expiry: Timestamp, value: Data, bucket: SegmentStore.Bucket
    ) {
        rare = canonicalKey.map { _ in .versionKey(version.key) }
        key = canonicalKey ?? version.key
        spaceName = space
        self.value = value
        sequence = version.sequence
        self.expiry = expiry
        bucketIndex = bucket.index
        indexHandle = version.indexHandle
        self.space = Int32(version.space)
        self.kind = kind
        bucketShift = bucket.shift
    }

    /// The version it writes.
    package var version: RecordVersion {
        RecordVersion(space: Int(space), key: versionKey, sequence: sequence, indexHandle: indexHandle)
    }

    private var versionKey: String {
        if case let .versionKey(key) = rare { return key }
        return key
    }

    private var isOwnFile: Bool {
        if case .file = rare { return true }
        return false
    }

    /// The encoded, sealed file, for a file of its own.
    package var file: Data? {
        if case let .file(_, bytes, _) = rare { return bytes }
        return nil
    }

    /// The record, for a segment's blocks (compressed with its neighbours when appended); nil for a file of its own.
    package var record: SegmentBlock.Record? {
        guard !isOwnFile else { return nil }
        return SegmentBlock.Record(key: key, space: spaceName, kind: kind, expiry: expiry, sequence: sequence, value: value)
    }

    /// What the record weighs in a block (`SegmentBlock.Record.weight`), without making the record.
    package var weight: Int { KeyColumns.weight(keyLength: key.utf8.count, valueLength: value.count) }

    /// The value's length, which stays in memory until the write lands.
    package var rawSize: Int {
        if case let .file(_, _, rawSize) = rare { return rawSize }
        return value.count
    }

    /// The segment bucket its record is appended to; nil for a file of its own.
    package var bucket: SegmentStore.Bucket? {
        isOwnFile ? nil : SegmentStore.Bucket(shift: bucketShift, index: bucketIndex)
    }

    /// The entry's name on disk. A record for a segment is made without it,
    /// and it is hashed only when asked (when the key's previous version in a
    /// file of its own must go): hashed on every set, it took a tenth of W8's.
    package var name: EntryName {
        if case let .file(name, _, _) = rare { return name }
        return EntryName(space: spaceName, key: versionKey)
    }

    /// The bytes it holds besides the value: the encoded file, or the record's key and fields.
    package var encodedLength: Int {
        if let file { return file.count }
        return SegmentBlock.Record.largestRawLength(keyBytes: key.utf8.count, valueBytes: 0, spaceBytes: spaceName.utf8.count)
    }
}
