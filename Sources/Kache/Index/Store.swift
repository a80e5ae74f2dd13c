import Foundation
import KacheStorage

/// The cache's whole in-memory state: every live entry's record (in the
/// sharded `EntryIndex`), the key spaces' orders, values within the memory
/// budget, and the counters. It does no I/O; the facade takes its lock only
/// for these short, in-memory steps. Reads from memory take only a shard's
/// lock (`EntryIndex.lookup`); everything here runs under the store's lock
/// and takes shard locks inside it, one at a time.
struct StoreState: Sendable {
    /// Every entry. A reference shared with the facade, whose reads use it directly.
    let index: EntryIndex
    var spaces = KeySpaces()
    var nextSequence: UInt64 = 1
    var memory: MemoryBudget
    var counters = Counters()
    /// Bytes of every live entry's value, uncompressed.
    var rawBytes = 0
    /// The disk budget, what is charged to it, and the records on disk.
    var budget: DiskBudget
    /// Which entries leave first for the disk budget (empty without one).
    var diskQueues = DiskQueues()
    /// The segment files, told which of their records hold live entries; nil
    /// in `memory` durability.
    let segments: SegmentStore?
    /// Bumped by every change to the index; `save()` compares it to know whether
    /// the manifest it wrote is still complete.
    var mutations: UInt64 = 0
    /// False in `memory` durability: there are no files, and leaving memory means leaving the cache.
    let keepsFiles: Bool

    /// Once set, reads miss and changes are refused.
    var isClosed: Bool {
        get { index.isClosed }
        nonmutating set { index.isClosed = newValue }
    }

    /// Counts of changes and disk reads. Memory hits and misses are counted
    /// by the index's shards (`EntryIndex.readCounts`), so reads write nothing shared.
    struct Counters: Sendable {
        var diskHits: UInt64 = 0
        /// Reads that found the record on disk unusable (added to the shards' misses).
        var misses: UInt64 = 0
        var sets: UInt64 = 0
        var expirations: UInt64 = 0
        var evictions: UInt64 = 0
        var memoryEvictions: UInt64 = 0
        var memoryGhostHits: UInt64 = 0
        /// New keys the disk budget's ghost remembered (`DiskQueues`).
        var budgetGhostHits: UInt64 = 0
        var quarantined: UInt64 = 0
        var readErrors: UInt64 = 0
    }

    /// The top level's index in `spaces`.
    static let topLevel = 0

    init(
        memoryLimit: Int, keepsFiles: Bool, diskBudget: Int? = nil, allocationUnit: Int = 4096, segmentThreshold: Int = 0,
        writeBehindBytes: QueuedBytes? = nil, segments: SegmentStore? = nil
    ) {
        self.segments = segments
        budget = DiskBudget(limit: diskBudget, unit: allocationUnit, keepsFiles: keepsFiles, segmentThreshold: segmentThreshold)
        index = EntryIndex(countsDiskReads: budget.limit != nil)
        memory = MemoryBudget(limit: memoryLimit, queued: writeBehindBytes)
        self.keepsFiles = keepsFiles
    }

    // MARK: - Reads

    /// What a read finds in memory.
    enum Lookup: Sendable {
        case hit(Data)
        /// The entry is live but its value is only in its record on disk.
        case onDisk(sequence: UInt64, location: RecordLocation)
        case miss
    }

    /// Looks `key` up; a hit marks the value recently used.
    /// - Complexity: O(1), one hash lookup.
    func lookup(space: Int, key: String, now: Timestamp) -> Lookup {
        index.lookup(space: space, key: key, now: now)
    }

    /// Entries in the cache, in every key space.
    /// - Complexity: O(key spaces)
    var entryCount: Int { spaces.reduce(0) { $0 + $1.count } }

    /// Whether `key` holds a live entry (no value is read).
    func contains(space: Int, key: String, now: Timestamp) -> Bool {
        index.contains(space: space, key: key, now: now)
    }

    /// Whether `sequence` is still the current version of `key`.
    func isCurrent(space: Int, key: String, sequence: UInt64) -> Bool {
        index.record(space: space, key: key)?.sequence == sequence
    }

    /// Where version `sequence` of `key` is on disk now, nil when it is not the current version.
    func currentLocation(space: Int, key: String, sequence: UInt64) -> RecordLocation? {
        guard let record = index.record(space: space, key: key), record.sequence == sequence else { return nil }
        return record.location
    }

    /// Whether the index has any version of `key`.
    func hasEntry(space: Int, key: String) -> Bool {
        index.record(space: space, key: key) != nil
    }

    /// The record of `key`, if any.
    func record(space: Int, key: String) -> EntryRecord? {
        index.record(space: space, key: key)
    }

    // MARK: - Writes

    /// What an insert did besides inserting.
    struct Insertion: Sendable {
        var sequence: UInt64
        /// The new version's place in the index.
        var ref: EntryRef
        /// The version it replaced, for rolling back a failed write.
        var previous: EntryRecord?
        /// Every entry that left the index, whose file must go: first those
        /// whose time had passed, then those evicted by a full Pool or Queue,
        /// then those evicted for the disk budget. One array, so that a `set`
        /// copies none of it.
        var removals: [Removal]
        /// Where the evictions start in `removals`.
        var evictedFrom: Int
        var evictedForBudgetFrom: Int

        /// Entries evicted by a full Pool or Queue; a failed write puts them back.
        var evicted: ArraySlice<Removal> { removals[evictedFrom ..< evictedForBudgetFrom] }
        /// Entries evicted for the disk budget; a failed write puts them back.
        var evictedForBudget: ArraySlice<Removal> { removals[evictedForBudgetFrom...] }
    }

    /// Sweeps expired keys, makes room in a full Pool or Queue and within the
    /// disk budget, then inserts. `fileLength` is the length of the entry's
    /// file; `hash`, the key's (`EntryIndex.hash`), when the caller has it.
    /// - Complexity: O(log n) plus O(log n) per key swept or evicted.
    mutating func insert(space: Int, key: String, value: Data, expiry: Timestamp, now: Timestamp, fileLength: Int = 0, hash: Int? = nil) -> Insertion {
        var removals = sweep(now: now)
        let evictedFrom = removals.count
        mutations += 1
        counters.sets += 1
        let sequence = nextSequence
        nextSequence += 1
        // One hash for the lookups and the upsert: the second was 230 of a set's 7,800 instructions in W8.
        let hash = hash ?? EntryIndex.hash(space: space, key: key).hash
        var current = index.recordWithoutValue(space: space, key: key, hash: hash)
        switch spaces[space].kind {
        case .topLevel:
            break
        case .pool:
            while current == nil, spaces[space].count >= spaces[space].capacity,
                  let (victim, record) = spaces[space].popEarliest(index: index)
            {
                removals.append(noteRemoved(space: space, key: victim, record: record))
                spaces[space].counters.evictions += 1
                counters.evictions += 1
            }
        case .queue:
            spaces[space].counters.pushes += 1
            while spaces[space].count >= spaces[space].capacity, let (victim, record) = spaces[space].popOldest(index: index) {
                removals.append(noteRemoved(space: space, key: victim, record: record))
                spaces[space].counters.evictions += 1
                counters.evictions += 1
            }
        }
        let length = keepsFiles ? budget.expectedShare(length: fileLength, keyBytes: key.utf8.count, rawSize: value.count) : 0
        // Evictions may have taken `key` itself (a full Queue): look again after each.
        if removals.count > evictedFrom { current = index.recordWithoutValue(space: space, key: key, hash: hash) }
        let evictedForBudgetFrom = removals.count
        let recalled = current == nil && recallForDiskBudget(hash: hash)
        let madeRoom = makeRoom(
            forBytes: budget.charge(forLength: length) - (current.map(budget.charge(of:)) ?? 0),
            newKeyBytes: key.utf8.count, inSegment: length < budget.segmentThreshold
        )
        // Appending nothing still cost a call (W8's sets almost never make room).
        if !madeRoom.isEmpty { removals += madeRoom }
        if removals.count > evictedForBudgetFrom { current = index.recordWithoutValue(space: space, key: key, hash: hash) }
        let diskPlace = diskPlace(replacing: current, recalled: recalled)
        let record = EntryRecord(
            expiry: expiry, sequence: sequence, rawSize: value.count, value: value, diskPlace: diskPlace,
            isPendingWrite: keepsFiles, length: length, location: current?.location, diskSequence: current?.diskSequence ?? 0
        )
        let (previous, ref) = index.upsert(space: space, key: key, hash: hash, record)
        spaces[space].noteAdded(ref, expiry: expiry, isNew: previous == nil, index: index)
        enqueueForDiskBudget(ref, at: diskPlace)
        budget.account(replacing: previous, with: record, keyBytes: key.utf8.count)
        rawBytes += value.count - (previous?.rawSize ?? 0)
        if let previous { releaseFromMemory(previous) }
        admitToMemory(ref, size: value.count, hash: hash)
        // Again once it is in: when nothing else could leave, the new value itself must.
        enforceMemoryBudget()
        return Insertion(
            sequence: sequence, ref: ref, previous: previous, removals: removals,
            evictedFrom: evictedFrom, evictedForBudgetFrom: evictedForBudgetFrom
        )
    }

    /// Removes every expired entry, in every key space.
    /// - Complexity: O(log n) per expired entry plus O(key spaces); never a scan.
    mutating func sweep(now: Timestamp) -> [Removal] {
        guard !isClosed else { return [] }
        var removals: [Removal] = []
        for space in spaces.indices {
            while let (key, record) = spaces[space].popExpired(now: now, index: index) {
                removals.append(noteRemoved(space: space, key: key, record: record, needsTombstone: false))
                if record.diskPlace.inMain { rememberForDiskBudget(space: space, key: key, charge: budget.charge(of: record)) }
                spaces[space].counters.expirations += 1
                counters.expirations += 1
            }
        }
        if !removals.isEmpty { mutations += 1 }
        return removals
    }

    /// Removes `key` if present.
    mutating func remove(space: Int, key: String) -> Removal? {
        guard !isClosed, let (record, _) = index.remove(space: space, key: key) else { return nil }
        spaces[space].noteRemoved()
        mutations += 1
        return noteRemoved(space: space, key: key, record: record)
    }

    /// Removes every entry of key space `space` whose key `shouldRemove` picks.
    /// - Complexity: O(n) over every entry, plus O(log n) per entry removed.
    mutating func remove(space: Int, where shouldRemove: (String) -> Bool) -> [Removal] {
        guard !isClosed else { return [] }
        var leaving: [String] = []
        index.forEachKey { entrySpace, key in
            if entrySpace == space && shouldRemove(key) { leaving.append(key) }
        }
        var removals: [Removal] = []
        for key in leaving {
            if let removal = remove(space: space, key: key) { removals.append(removal) }
        }
        return removals
    }

    /// Removes `key` only if `sequence` is still its current version (a file
    /// that turned out missing or damaged).
    mutating func removeVersion(space: Int, key: String, sequence: UInt64) {
        guard isCurrent(space: space, key: key, sequence: sequence) else { return }
        _ = remove(space: space, key: key)
    }

    /// Removes every entry of one key space, or of all when `space` is nil.
    mutating func removeAll(space: Int?) -> [Removal] {
        guard !isClosed else { return [] }
        var removals: [Removal] = []
        var leaving: [(space: Int, key: String, record: EntryRecord)] = []
        index.forEach(withValues: true) { entrySpace, key, record, _ in
            if space == nil || space == entrySpace { leaving.append((entrySpace, key, record)) }
        }
        index.removeAll(space: space)
        for leaver in leaving { removals.append(noteRemoved(space: leaver.space, key: leaver.key, record: leaver.record)) }
        for number in spaces.indices where space == nil || space == number { spaces[number].removeAll() }
        mutations += 1
        return removals
    }

    /// Bookkeeping for an entry already taken out of its key space.
    ///
    /// An expired entry needs no tombstone: after a crash its record is
    /// expired too, and older versions were superseded by it (the checkpoint
    /// rule of `restore(found:checkpoint:)`).
    mutating func noteRemoved(space: Int, key: String, record: EntryRecord, needsTombstone: Bool = true) -> Removal {
        releaseFromMemory(record)
        rawBytes -= record.rawSize
        budget.account(replacing: record, with: nil, keyBytes: key.utf8.count)
        if let location = record.location { segments?.noteDead(location) }
        var kept = record
        kept.value = nil
        let hasFile = record.location != nil || record.isPendingWrite
        var tombstone: UInt64 = 0
        if hasFile, keepsFiles, needsTombstone {
            tombstone = nextSequence
            nextSequence += 1
        }
        return Removal(
            space: space, spaceName: spaces[space].name, kind: spaces[space].kind, key: key, record: kept,
            hasFile: hasFile, tombstoneSequence: tombstone,
            mayHaveOwnFile: record.isInOwnFile || record.isPendingWrite && record.length >= budget.segmentThreshold
        )
    }

    /// Undoes an insert whose file could not be written: removes its version,
    /// and puts back the version it replaced and the entries it evicted, whose
    /// files are untouched (a synchronous insert deletes them only after its
    /// own file is written). An entry is put back only if no newer version of
    /// its key arrived meanwhile and its file holds it.
    /// - Returns: entries evicted to keep capacities and the disk budget after
    ///   putting the others back (when concurrent inserts filled the room).
    mutating func rollBack(_ insertion: Insertion, space: Int, key: String) -> [Removal] {
        guard let current = index.record(space: space, key: key), current.sequence == insertion.sequence else { return [] }
        index.remove(space: space, key: key)
        spaces[space].noteRemoved()
        _ = noteRemoved(space: space, key: key, record: current)
        mutations += 1
        if let previous = insertion.previous {
            reinstate(Removal(space: space, spaceName: spaces[space].name, kind: spaces[space].kind, key: key, record: previous, hasFile: true))
        }
        for victim in insertion.evicted where reinstate(victim) {
            spaces[victim.space].counters.evictions -= 1
            counters.evictions -= 1
        }
        for victim in insertion.evictedForBudget where reinstate(victim) {
            budget.evictions -= 1
            budget.evictedBytes -= budget.charge(of: victim.record)
        }
        var removals: [Removal] = []
        for index in Set(insertion.evicted.map(\.space)) { removals += trimToCapacity(space: index) }
        return removals + makeRoom(forBytes: 0)
    }

    /// Puts an entry that left the index back, without its value, if its file
    /// holds it and its key has no newer version (a Queue item in its place by sequence).
    @discardableResult
    mutating func reinstate(_ removal: Removal) -> Bool {
        let space = removal.space
        var record = removal.record
        guard !record.isPendingWrite, let location = record.location, index.record(space: space, key: removal.key) == nil else { return false }
        record.value = nil
        record.frequency = 0
        let (_, ref) = index.upsert(space: space, key: removal.key, record)
        spaces[space].noteReinstated(ref, expiry: record.expiry, space: space, index: index)
        enqueueForDiskBudget(ref, at: record.diskPlace)
        rawBytes += record.rawSize
        budget.account(replacing: nil, with: record, keyBytes: removal.key.utf8.count)
        segments?.noteLive(location)
        mutations += 1
        return true
    }

    // MARK: - Disk bookkeeping

    /// Records that version `sequence` of `key` is now on disk at `location`
    /// (appended to a segment, or in a file of its own). A record that is no
    /// longer the current version is counted dead at once. The segments'
    /// accounting goes into `ledger`, for the caller to apply once per batch.
    /// `ref`, when known, is the version's place in the index (`Insertion.ref`).
    /// - Returns: true when the key's previous version was in a file of its
    ///   own and this one is in a segment: that file must go.
    mutating func markWritten(
        space: Int, key: String, sequence: UInt64, ref: EntryRef?, location: RecordLocation, ledger: inout SegmentStore.LedgerChanges
    ) -> Bool {
        guard let (previous, record, rawSize) = index.markWritten(space: space, key: key, sequence: sequence, ref: ref, at: location) else {
            ledger.noteAppended(location, sequence: sequence, live: false)
            return false
        }
        let keyBytes = key.utf8.count
        if previous.isPendingWrite, !location.isOwnFile { budget.learnShare(location.length, keyBytes: keyBytes, rawSize: rawSize) }
        budget.account(replacing: previous, with: record, keyBytes: keyBytes)
        // The entry's location changed: a manifest snapshot taken before no longer describes it.
        mutations += 1
        if !memory.parked.isEmpty, let ref = ref ?? index.ref(space: space, key: key) { memory.unpark(ref) }
        if let old = previous.location { ledger.noteDead(old) }
        ledger.noteAppended(location, sequence: sequence, live: true)
        if memory.isOver { enforceMemoryBudget() }
        return previous.isInOwnFile && !location.isOwnFile
    }

    /// Moves version `sequence` of `key` from one record to its copy
    /// (compaction); the segments' accounting goes into `ledger`.
    /// - Returns: false when the entry changed meanwhile: the copy is dead.
    mutating func relocate(
        space: Int, key: String, sequence: UInt64, from: RecordLocation, to: RecordLocation, ledger: inout SegmentStore.LedgerChanges
    ) -> Bool {
        var moved = false
        index.modify(space: space, key: key) { record in
            guard record.sequence == sequence, !record.isPendingWrite, record.location == from else { return }
            let old = record
            record.location = to
            // The copy was blocked with other neighbours: its share of its block differs.
            record.length = to.length
            budget.account(replacing: old, with: record, keyBytes: key.utf8.count)
            moved = true
        }
        guard moved else {
            ledger.noteAppended(to, sequence: sequence, live: false)
            return false
        }
        ledger.noteDead(from)
        ledger.noteAppended(to, sequence: sequence, live: true)
        mutations += 1
        return true
    }

    /// Brings a value read from its file into memory.
    mutating func promote(space: Int, key: String, sequence: UInt64, value: Data) {
        counters.diskHits += 1
        // Hashed once, for the change, the reference and the memory budget's ghost.
        let hash = EntryIndex.hash(space: space, key: key).hash
        let admitted = index.modify(space: space, key: key, hash: hash) { record -> Bool in
            guard record.sequence == sequence, record.value == nil else { return false }
            record.value = value
            // As a new value's: reads from before it left memory don't count.
            record.frequency = 0
            return true
        }
        guard let admitted, admitted.result else { return }
        admitToMemory(admitted.ref, size: value.count, hash: hash)
        // Again once it is in: when nothing else could leave, the new value itself must.
        enforceMemoryBudget()
    }

    /// Adds an entry found on disk at open, without its value. Its record
    /// joins `live`, which the caller hands to the segment accounting once for
    /// the whole restore (a lock per entry cost W5's open a twentieth).
    mutating func restore(
        space: Int, key: String, expiry: Timestamp, sequence: UInt64, rawSize: Int, location: RecordLocation,
        live: inout [RecordLocation]
    ) {
        // Every restored entry in the disk queues' `main` (`rebuildDiskQueues`).
        let record = EntryRecord(
            expiry: expiry, sequence: sequence, rawSize: rawSize, value: nil, diskPlace: DiskPlace(inMain: true),
            isPendingWrite: false, length: location.length, location: location, diskSequence: sequence
        )
        let (previous, ref) = index.upsert(space: space, key: key, record)
        spaces[space].noteAdded(ref, expiry: expiry, isNew: previous == nil, index: index)
        budget.account(replacing: previous, with: record, keyBytes: key.utf8.count)
        if let previous {
            rawBytes -= previous.rawSize
            if let location = previous.location { segments?.noteDead(location) }
        }
        live.append(location)
        rawBytes += rawSize
        nextSequence = max(nextSequence, sequence + 1)
    }

    // MARK: - Key spaces

    /// The number of the key space `name`, adding it if needed.
    mutating func keySpace(named name: String, kind: KeySpace.Kind, capacity: Int) throws(KacheError) -> (index: Int, removals: [Removal]) {
        switch spaces.findOrAdd(named: name, kind: kind, capacity: capacity) {
        case let .found(space):
            var removals: [Removal] = []
            if spaces[space].capacity != capacity {
                spaces[space].capacity = capacity
                removals = trimToCapacity(space: space)
            }
            return (space, removals)
        case let .added(space):
            mutations += 1
            return (space, [])
        case let .otherKind(other):
            throw .invalidKeySpaceName(name, reason: "it already names a \(other == .pool ? "Pool" : other == .queue ? "Queue" : "built-in key space")")
        case .full:
            throw .invalidKeySpaceName(name, reason: "there are \(KeySpaces.maximumCount) key spaces already")
        }
    }

    /// Evicts from a key space until it is within capacity (after a resize or a restore).
    mutating func trimToCapacity(space: Int) -> [Removal] {
        var removals: [Removal] = []
        while spaces[space].count > spaces[space].capacity {
            let taken = spaces[space].kind == .queue ? spaces[space].popOldest(index: index) : spaces[space].popEarliest(index: index)
            guard let (key, record) = taken else { break }
            removals.append(noteRemoved(space: space, key: key, record: record))
            spaces[space].counters.evictions += 1
            counters.evictions += 1
        }
        if !removals.isEmpty { mutations += 1 }
        return removals
    }

    /// The keys of key space `space`, ordered by expiry (ties: written first).
    /// - Complexity: O(n log n) over every entry of the cache.
    func keysByExpiry(space: Int) -> [String] {
        var items: [(key: String, expiry: Timestamp, sequence: UInt64)] = []
        index.forEach(withValues: false) { entrySpace, key, record, _ in
            if entrySpace == space { items.append((key, record.expiry, record.sequence)) }
        }
        return items.sorted { a, b in a.expiry != b.expiry ? a.expiry < b.expiry : a.sequence < b.sequence }.map(\.key)
    }

    /// Calls `body` with every entry, in no particular order.
    func forEachEntry(_ body: (_ space: Int, _ key: String, _ record: EntryRecord) -> Void) {
        index.forEach(withValues: true) { space, key, record, _ in body(space, key, record) }
    }

    /// What `popOldest` took from a Queue.
    struct Pop: Sendable {
        /// The oldest live item, its value when in memory, and its version.
        var item: (removal: Removal, value: Data?)?
        /// Expired items removed on the way to it.
        var expired: [Removal] = []
    }

    /// Removes and returns the oldest live Queue item, removing expired ones on the way.
    /// - Complexity: O(1) amortized per item removed.
    mutating func popOldest(space: Int, now: Timestamp) -> Pop {
        var pop = Pop()
        guard !isClosed else { return pop }
        while let (key, record) = spaces[space].popOldest(index: index) {
            let removal = noteRemoved(space: space, key: key, record: record, needsTombstone: record.expiry > now)
            mutations += 1
            if record.expiry <= now {
                spaces[space].counters.expirations += 1
                counters.expirations += 1
                pop.expired.append(removal)
                continue
            }
            spaces[space].counters.pops += 1
            pop.item = (removal, record.value)
            break
        }
        return pop
    }
}

/// The store's state behind its lock.
typealias Store = Locked<StoreState>
