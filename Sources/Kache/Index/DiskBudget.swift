/// The byte limit on a cache directory, counted the way the file system
/// allocates it (as `du -s` reports), not by file lengths: a 164-byte file
/// occupies a whole 4 KiB block on ext4, and a cache that counts lengths
/// overruns its limit by 2× and more on small entries.
///
/// What counts: the entry files; the directory's own files and folders
/// (`footprint`: folders, lock, dirty marker, quarantined files, as measured
/// at open, load and save, plus each file quarantined since); and room for
/// the manifest, twice over (a save writes the new one beside the old) and
/// for the folders' entries (`StoreState.indexRoom`).
///
/// Each version of an entry is charged when it is inserted, before its
/// record is written, so concurrent writers can never overrun the limit
/// together: the allocation of a file of its own, or the share of a segment
/// block that records took lately (`expectedShare`), settled when it lands
/// (`StoreState.settleDiskBudget`). The charge is released when the entry
/// goes. Which entries go is `DiskQueues`'s choice.
struct DiskBudget: Sendable {
    /// The most bytes the directory may occupy, or nil for no limit.
    let limit: Int?
    /// The file system's allocation unit (`statvfs` block size).
    let unit: Int
    /// False in `memory` durability: nothing is charged.
    let keepsFiles: Bool
    /// Records shorter than this go to segment files (`Configuration.segmentThreshold`).
    let segmentThreshold: Int
    /// Bytes charged to live entries' records.
    private(set) var charged = 0
    /// The part of `charged` of entries in the disk queues' `main` (`DiskQueues`).
    private(set) var mainCharged = 0
    /// The share of a segment block a record took per byte of its key and
    /// value, as records written lately took it: what a pending record bound
    /// for a segment is charged by (`expectedShare`). 1 until one is written.
    private(set) var shareRatio = 1.0
    /// Bytes of the keys of live entries (the manifest lists each).
    private(set) var keyBytes = 0
    /// Live entries with a version on disk, and the bytes of those records.
    private(set) var files = 0
    private(set) var fileBytes = 0
    /// Live entries whose version is, or is being written, in a file of its
    /// own: each has a name in a folder (`holdsFolderEntry`).
    private(set) var folderEntries = 0
    /// Bytes the directory occupies besides entry files and the manifest.
    var footprint = 0
    /// Entries evicted to stay within the limit, and their bytes.
    var evictions: UInt64 = 0
    var evictedBytes = 0

    init(limit: Int?, unit: Int, keepsFiles: Bool, segmentThreshold: Int) {
        self.limit = keepsFiles ? limit : nil
        self.unit = max(unit, 1)
        self.keepsFiles = keepsFiles
        self.segmentThreshold = segmentThreshold
    }

    /// The bytes a file of `length` bytes occupies: whole allocation units.
    func allocation(forLength length: Int) -> Int {
        length == 0 ? 0 : (length + unit - 1) / unit * unit
    }

    /// The part of `charged` of entries in the disk queues' `small`.
    var smallCharged: Int { charged - mainCharged }

    /// What an entry of a record of `length` bytes is charged: a file of its
    /// own takes whole blocks, a record in a segment its length.
    func charge(forLength length: Int) -> Int {
        guard keepsFiles else { return 0 }
        return length < segmentThreshold ? length : allocation(forLength: length)
    }

    /// What a pending record of `length` raw bytes, for a key of `keyBytes`
    /// and a value of `rawSize`, is charged (its `EntryRecord.length`): the
    /// length of a file of its own; the share of its block that records
    /// bound for a segment took lately, never more than its raw length.
    ///
    /// Why not the raw length, as a file's: segment blocks are compressed
    /// together, and a 1 KiB JSON value takes about a quarter of that. Charged
    /// whole, the records waiting for the writer took most of a small budget,
    /// and the budget held a quarter of the entries it had room for (W9).
    /// A record that takes more than expected is settled when it lands
    /// (`StoreState.settleDiskBudget`).
    func expectedShare(length: Int, keyBytes: Int, rawSize: Int) -> Int {
        guard keepsFiles, length < segmentThreshold else { return length }
        return min(length, max(1, Int((Double(keyBytes + rawSize) * shareRatio).rounded(.up))))
    }

    /// Learns from a record of a key of `keyBytes` and a value of `rawSize`
    /// that took `share` bytes of its segment block: an average over about
    /// the last 32 records.
    mutating func learnShare(_ share: Int, keyBytes: Int, rawSize: Int) {
        let observed = Double(share) / Double(max(keyBytes + rawSize, 1))
        shareRatio = min(max(shareRatio + (observed - shareRatio) / 32, 1.0 / 256), 4)
    }

    /// What `record` is charged: by the rule above while its version is
    /// pending, by where it is once written (a file of its own written under
    /// another threshold takes its blocks all the same).
    func charge(of record: EntryRecord) -> Int {
        charge(of: record.diskFacts)
    }

    func charge(of record: DiskFacts) -> Int {
        guard keepsFiles else { return 0 }
        if record.isPendingWrite { return charge(forLength: record.length) }
        guard let location = record.location else { return 0 }
        return location.isOwnFile ? allocation(forLength: location.length) : location.length
    }

    /// Whether `record` names a file of its own in a folder: written to one,
    /// or long enough to get one. A record in a segment names none.
    func holdsFolderEntry(_ record: DiskFacts) -> Bool {
        keepsFiles && (record.isInOwnFile || record.isPendingWrite && record.length >= segmentThreshold)
    }

    /// Counts a change of the index: the record of a key of `keyBytes` goes
    /// from `old` to `new` (nil: the key was absent, or leaves). The one place
    /// the totals change, so that they always add up (`checkInvariants`).
    /// Inlined: called once for each of a million records a restore adds,
    /// where its branches for a previous record fold away.
    @inline(__always)
    mutating func account(replacing old: EntryRecord?, with new: EntryRecord?, keyBytes: Int) {
        if let new { count(new.diskFacts, keyBytes: keyBytes, as: 1) }
        if let old { count(old.diskFacts, keyBytes: keyBytes, as: -1) }
    }

    /// `account(replacing: nil, with:keyBytes:)` from the new record's facts alone (a restore's).
    @inline(__always)
    mutating func account(adding new: DiskFacts, keyBytes: Int) {
        count(new, keyBytes: keyBytes, as: 1)
    }

    /// `account(replacing:with:keyBytes:)` of a key that stays, from its facts alone.
    @inline(__always)
    mutating func account(replacing old: DiskFacts, with new: DiskFacts, keyBytes: Int) {
        count(new, keyBytes: keyBytes, as: 1)
        count(old, keyBytes: keyBytes, as: -1)
    }

    /// Adds (`sign` 1) or takes away (-1) one record's share of the totals.
    /// Each field is read once from the record: the `map`s and optional
    /// chains this replaced copied it whole several times, about 400
    /// instructions of every set in W8.
    @inline(__always)
    private mutating func count(_ record: DiskFacts, keyBytes: Int, as sign: Int) {
        let charge = charge(of: record)
        charged += sign * charge
        if record.inMain { mainCharged += sign * charge }
        self.keyBytes += sign * keyBytes
        if let location = record.location {
            files += sign
            fileBytes += sign * location.length
        }
        if holdsFolderEntry(record) { folderEntries += sign }
    }

    /// Adds the entries' totals of `part`, a copy of this budget (its entries
    /// forgotten) that accounted entries on another core during a restore.
    mutating func add(entriesOf part: DiskBudget) {
        charged += part.charged
        mainCharged += part.mainCharged
        keyBytes += part.keyBytes
        files += part.files
        fileBytes += part.fileBytes
        folderEntries += part.folderEntries
    }

    /// Forgets every entry's charge (before a restore); the footprint and counts stay.
    mutating func forgetEntries() {
        charged = 0
        mainCharged = 0
        keyBytes = 0
        files = 0
        fileBytes = 0
        folderEntries = 0
    }

    /// Traps unless the totals equal `recount`'s, which counted every live
    /// entry afresh (`StoreState.checkInvariants`), and the charge is within the limit.
    func checkTotals(against recount: DiskBudget) {
        precondition(charged == recount.charged, "disk budget charged \(charged) != sum \(recount.charged)")
        precondition(mainCharged == recount.mainCharged, "disk budget's main queue charged \(mainCharged) != sum \(recount.mainCharged)")
        precondition(keyBytes == recount.keyBytes, "disk budget key bytes \(keyBytes) != sum \(recount.keyBytes)")
        precondition(folderEntries == recount.folderEntries, "disk budget folder entries \(folderEntries) != \(recount.folderEntries)")
        precondition(files == recount.files && fileBytes == recount.fileBytes,
                     "disk totals \(files)/\(fileBytes) != \(recount.files)/\(recount.fileBytes)")
        if let limit { precondition(charged <= limit, "disk budget \(limit) exceeded: \(charged)") }
    }

    /// Bytes reserved per entry for its name in a folder (an ext4 directory
    /// entry of a 32-character name is 44 bytes, more in a half-full block).
    static let folderEntryBytes = 48
}

extension StoreState {
    /// Room held for the index's own files: two copies of the manifest (a
    /// save writes the new one beside the old), which lists every entry, and
    /// the names of files of their own in their folders, with `entries` more
    /// entries of `keyBytes` more key bytes, `folderEntries` of them in files of their own.
    /// - Complexity: O(key spaces)
    func indexRoom(addingEntries entries: Int = 0, keyBytes: Int = 0, folderEntries: Int = 0) -> Int {
        let count = entryCount + entries
        let manifest = Manifest.encodedLength(
            spaceNameBytes: spaces.reduce(0) { $0 + $1.name.utf8.count }, spaces: spaces.count,
            entries: count, keyBytes: budget.keyBytes + keyBytes
        )
        return 2 * budget.allocation(forLength: manifest)
            + budget.allocation(forLength: (budget.folderEntries + folderEntries) * DiskBudget.folderEntryBytes)
    }

    /// Bytes the directory may occupy with `bytes` more of entry files and
    /// one more entry of `newKeyBytes` (none when nil), in a file of its own
    /// unless `inSegment`.
    func diskUse(adding bytes: Int = 0, newKeyBytes: Int? = nil, inSegment: Bool = false) -> Int {
        let entries = newKeyBytes == nil ? 0 : 1
        return budget.charged + bytes + budget.footprint
            + indexRoom(addingEntries: entries, keyBytes: newKeyBytes ?? 0, folderEntries: inSegment ? 0 : entries)
    }

    /// Whether the directory, dead segment bytes included, is over the limit.
    var isOverDiskBudgetWithDeadBytes: Bool {
        guard let limit = budget.limit else { return false }
        let deadAndBlocks = segments?.withLedger { $0.deadBytes + $0.fileCount * budget.unit } ?? 0
        return diskUse() + deadAndBlocks > limit
    }

    /// Whether `bytes` more of entry files (and one more entry of
    /// `newKeyBytes`, in a segment if `inSegment`) would go over the limit.
    func wouldExceedDiskBudget(adding bytes: Int, newKeyBytes: Int? = nil, inSegment: Bool = false) -> Bool {
        guard let limit = budget.limit else { return false }
        return diskUse(adding: bytes, newKeyBytes: newKeyBytes, inSegment: inSegment) > limit
    }

    /// What the directory would occupy holding one entry alone, whose file is
    /// `fileLength` bytes and key `keyBytes`: a larger one can never be stored.
    /// `footprint` replaces the directory's own as last measured.
    func diskUseAlone(fileLength: Int, keyBytes: Int, footprint: Int? = nil) -> Int {
        let manifest = Manifest.encodedLength(
            spaceNameBytes: spaces.reduce(0) { $0 + $1.name.utf8.count }, spaces: spaces.count, entries: 1, keyBytes: keyBytes
        )
        return (footprint ?? budget.footprint) + budget.allocation(forLength: fileLength)
            + 2 * budget.allocation(forLength: manifest) + budget.allocation(forLength: DiskBudget.folderEntryBytes)
    }

    /// Counts a damaged file moved into `quarantine/`, where it now occupies `bytes`.
    mutating func noteQuarantined(bytes: Int) {
        counters.quarantined += 1
        budget.footprint += bytes
    }
}
