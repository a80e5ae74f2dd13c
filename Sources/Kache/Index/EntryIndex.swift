import Foundation
import KacheStorage
import Synchronization

/// Names one version of one entry without repeating its key: the entry's
/// shard and slot, and the low 32 bits of its sequence. The expiry heap, the
/// Queue order and the memory ring hold these (8 bytes) instead of keys;
/// a reference whose slot now holds another version is stale, and skipped.
struct EntryRef: Sendable, Equatable {
    /// `slot << shardBits | shard`.
    var handle: UInt32
    var tag: UInt32

    var shard: Int { Int(handle) & (EntryIndex.shardCount - 1) }
    var slot: Int { Int(handle >> UInt32(EntryIndex.shardBits)) }

    init(shard: Int, slot: Int, sequence: UInt64) {
        handle = UInt32(slot) << UInt32(EntryIndex.shardBits) | UInt32(shard)
        tag = UInt32(truncatingIfNeeded: sequence)
    }

    /// Both halves in one word (`RecordVersion.indexHandle`), and back.
    var packed: UInt64 { UInt64(handle) << 32 | UInt64(tag) }

    init(packed: UInt64) {
        handle = UInt32(truncatingIfNeeded: packed >> 32)
        tag = UInt32(truncatingIfNeeded: packed)
    }

    /// Write order, from the sequences' low bits: right while the two
    /// versions compared are fewer than 2^31 writes apart (only ties of
    /// expiry, and Queue items, are ordered by it).
    static func writtenBefore(_ a: EntryRef, _ b: EntryRef) -> Bool {
        Int32(bitPattern: a.tag &- b.tag) < 0
    }
}

/// Every entry of every key space, in shards by hash, each behind its own lock.
///
/// Readers take only their key's shard lock (and write only to that shard:
/// its hit counter and the entry's recency flag), so reads on different
/// cores rarely meet. Everything that changes the index runs under the
/// store's lock (`Store`) and takes shard locks one at a time inside it.
/// Lock order: the store's lock, then at most one shard lock; never a shard
/// lock while waiting for the store's, never two shard locks at once.
final class EntryIndex: Sendable {
    /// 64 shards: several per core on the machines a cache like this runs on,
    /// few enough that summing their counters is cheap.
    static let shardBits = 6
    static let shardCount = 1 << shardBits

    private let shards: [Locked<IndexShard>]
    private let closed = Atomic<Bool>(false)
    /// Whether a hit counts for the disk budget's queues (there is a budget).
    let countsDiskReads: Bool

    init(countsDiskReads: Bool = false) {
        shards = (0 ..< Self.shardCount).map { _ in Locked(IndexShard()) }
        self.countsDiskReads = countsDiskReads
    }

    /// Runs `body` under shard `index`'s lock.
    ///
    /// The shard object is borrowed from `shards` (an immutable array that
    /// lives as long as `self`), not retained: a retain and a release per
    /// call are two atomic writes to the object's header, on the lock's own
    /// cache line, and on two cores the hot shard's line then moved between
    /// them twice more per get. W2 on 2 threads went from 0.78× to 0.81–0.94× the
    /// 64-lock floor (CHANGELOG.md, 0.3.0).
    @inline(__always)
    private func withShard<R: Sendable>(_ index: Int, _ body: (inout IndexShard) -> R) -> R {
        Unmanaged.passUnretained(shards[index])._withUnsafeGuaranteedRef { $0.withLock(body) }
    }

    /// Makes room for `count` entries in all, spread over the shards as keys
    /// hash (with a margin), before a restore adds them.
    func reserveCapacity(_ count: Int) {
        let perShard = count / Self.shardCount + count / Self.shardCount / 8 + 16
        for shard in shards.indices { withShard(shard) { $0.reserveCapacity($0.count + perShard) } }
    }

    /// Once set, reads miss and the store refuses changes.
    var isClosed: Bool {
        get { closed.load(ordering: .acquiring) }
        set { closed.store(newValue, ordering: .releasing) }
    }

    // MARK: - Reads, under one shard lock

    /// Looks `key` up; a hit marks the value recently used. Counts hits and
    /// misses in the key's shard; a value on disk is counted when read.
    /// - Complexity: O(1) expected, one shard lock.
    func lookup(space: Int, key: String, now: Timestamp) -> StoreState.Lookup {
        let space = UInt16(truncatingIfNeeded: space)
        let hash = IndexShard.hash(space: space, key: key)
        return withShard(hash & (Self.shardCount - 1)) { shard in
            guard !isClosed, let slot = shard.find(space: space, key: key, hash: hash) else {
                shard.misses += 1
                return .miss
            }
            let entry = shard.entries[slot]
            guard entry.expiry > now else {
                shard.misses += 1
                return .miss
            }
            if countsDiskReads { shard.noteDiskRead(slot: slot) }
            guard let value = shard.value(at: slot) else {
                return .onDisk(sequence: entry.sequence, location: diskLocation(entry, slot: slot, in: shard))
            }
            shard.noteRead(slot: slot)
            shard.memoryHits += 1
            return .hit(value)
        }
    }

    /// Whether `key` holds a live entry (no value is read, nothing is counted).
    func contains(space: Int, key: String, now: Timestamp) -> Bool {
        let space = UInt16(truncatingIfNeeded: space)
        let hash = IndexShard.hash(space: space, key: key)
        return withShard(hash & (Self.shardCount - 1)) { shard in
            guard !isClosed, let slot = shard.find(space: space, key: key, hash: hash) else { return false }
            return shard.entries[slot].expiry > now
        }
    }

    /// Hits and misses counted by every shard.
    var readCounts: (memoryHits: UInt64, misses: UInt64) {
        shards.reduce(into: (UInt64(0), UInt64(0))) { sum, shard in
            shard.withLock { sum.0 += $0.memoryHits; sum.1 += $0.misses }
        }
    }

    /// Counts a miss found under the store's lock.
    func countMiss(space: Int, key: String) {
        let hash = IndexShard.hash(space: UInt16(truncatingIfNeeded: space), key: key)
        withShard(hash & (Self.shardCount - 1)) { $0.misses += 1 }
    }

    // MARK: - By key, for the store (under its lock)

    /// The record of (space, key), if any.
    func record(space: Int, key: String) -> EntryRecord? {
        withEntry(space: space, key: key) { shard, slot in record(in: shard, slot: slot) }
    }

    /// The record of (space, key), if any, without its value, whose hash
    /// (`hash(space:key:)`) the caller has: a set looks its key up before its
    /// upsert, with one hash for both, and needs the old version's place on
    /// disk, not its value (retaining it touched the value's object).
    func recordWithoutValue(space: Int, key: String, hash: Int) -> EntryRecord? {
        withEntry(space: space, key: key, hash: hash) { shard, slot in record(in: shard, slot: slot, withValue: false) }
    }

    /// The sequence of the current version of (space, key), if any.
    func sequence(space: Int, key: String) -> UInt64? {
        withEntry(space: space, key: key) { shard, slot in shard.entries[slot].sequence }
    }

    /// The reference of the current version of (space, key).
    func ref(space: Int, key: String) -> EntryRef? {
        let space16 = UInt16(truncatingIfNeeded: space)
        let hash = IndexShard.hash(space: space16, key: key)
        let shardIndex = hash & (Self.shardCount - 1)
        return withShard(shardIndex) { shard in
            shard.find(space: space16, key: key, hash: hash).map { EntryRef(shard: shardIndex, slot: $0, sequence: shard.entries[$0].sequence) }
        }
    }

    /// The hash of (space, key), and the shard it picks: a restore sorts the
    /// entries it adds by shard, so that each shard's table stays in cache
    /// while its entries go in (in the order of a segment, each insert missed it),
    /// and fills the shards on all cores.
    static func hash(space: Int, key: String) -> (hash: Int, shard: Int) {
        let hash = IndexShard.hash(space: UInt16(truncatingIfNeeded: space), key: key)
        return (hash, hash & (shardCount - 1))
    }

    /// The hash of (space, key) and its shard, from `utf8`, the bytes `key`
    /// was made of, by `hasher` (the process's, `SipHash13.process`, which a
    /// caller hashing many keys reads once: read for each, it cost a call to
    /// `swift_once`).
    static func hash(space: UInt16, key: String, utf8: UnsafeRawBufferPointer, hasher: SipHash13) -> (hash: Int, shard: Int) {
        let hash = IndexShard.hash(space: space, key: key, utf8: utf8, hasher: hasher)
        return (hash, hash & (shardCount - 1))
    }

    /// Adds or replaces the record of (space, key).
    /// - Returns: the record it replaced, and the reference of the new one.
    @inline(__always)
    func upsert(space: Int, key: String, _ record: EntryRecord) -> (previous: EntryRecord?, ref: EntryRef) {
        upsert(space: space, key: key, hash: Self.hash(space: space, key: key).hash, record)
    }

    /// Hashes (space, key) and starts loading what inserting it touches first
    /// (`IndexShard.prefetch(hash:)`): a set does its other work while those
    /// cache misses are served, instead of waiting for them in its insert.
    /// - Returns: the hash, for the insert.
    func prefetch(space: Int, key: String) -> Int {
        let (hash, shard) = Self.hash(space: space, key: key)
        withShard(shard) { $0.prefetch(hash: hash) }
        return hash
    }

    /// Adds or replaces the record of (space, key), whose hash the caller has.
    @inline(__always)
    func upsert(space: Int, key: String, hash: Int, _ record: EntryRecord) -> (previous: EntryRecord?, ref: EntryRef) {
        let shardIndex = hash & (Self.shardCount - 1)
        return withShard(shardIndex) { upsert(space: space, key: key, hash: hash, record, into: &$0, shardIndex) }
    }

    /// Runs `body` under shard `shard`'s lock, taken once, after making room
    /// for `count` more entries, which `body` adds with `restore(_:hash:into:_:)`.
    /// A restore fills each shard in one go, the shards on all cores
    /// (`StoreState.restoreSettled`). The room is made here, not for every
    /// shard before: a shard's table, zeroed just before it fills, is still
    /// in the core's cache (made up front, a probe missed it every time).
    @inline(__always)
    func restoring(shard: Int, adding count: Int, _ body: (inout IndexShard) -> Void) {
        withShard(shard) { locked in
            locked.reserveCapacity(locked.count + count)
            body(&locked)
        }
    }

    /// Adds a restored entry to `shard` (number `shardIndex`, the one its key
    /// hashes to, as `restoring` hands it out), or replaces the entry of its
    /// key. The entry comes packed as the shard keeps it (made from a record
    /// `SettledRestore` picked): a written record in a segment file, no value
    /// in memory, in the disk budget's main queue.
    ///
    /// Called in the caller's loop, not as a closure that `restoring` hands
    /// out: called through one, each entry cost an indirect call and two
    /// more copies of the entry (callgrind, W8's open).
    /// - Returns: the entry it replaced, and the new one's slot.
    @inline(__always)
    func restore(
        _ entry: consuming IndexShard.Entry, hash: Int, into shard: inout IndexShard, _ shardIndex: Int
    ) -> (previous: EntryRecord?, slot: Int) {
        precondition(hash & (Self.shardCount - 1) == shardIndex, "a restore put a key in a shard it does not hash to")
        switch shard.probe(space: entry.space, key: entry.key, hash: hash) {
        case let .found(slot):
            let previous = record(in: shard, slot: slot)
            shard.update(slot: slot, with: consume entry, diskPlace: DiskPlace(inMain: true), superseded: nil)
            return (previous, slot)
        case let .vacant(bucket):
            return (nil, shard.insert(consume entry, diskPlace: DiskPlace(inMain: true), hash: hash, vacant: bucket))
        }
    }

    /// The expiry order and the key spaces' counts of what a restore added to
    /// `shards`: each shard's entries from slot `firstSlots[shard]` on (a
    /// restore appends to the slab), and `otherSlots`, the slots below that
    /// a restore set, each flagged if it added an entry there (a freed slot
    /// reused; a slot set twice may be listed twice); `spaceCount` key
    /// spaces, `isQueue` telling each one's kind.
    ///
    /// Read from the slabs after the shards are filled, not gathered while
    /// they filled: the items gathered per shard had to be joined (a million
    /// items copied on W8's open), and their appends cost every entry three
    /// checks of its arrays' uniqueness.
    /// - Complexity: O(entries restored)
    func restoredOrder(
        shards: Range<Int>, firstSlots: [Int], otherSlots: [[(slot: Int, isNew: Bool)]], spaceCount: Int, isQueue: [Bool]
    ) -> RestoredOrder {
        var order = RestoredOrder(spaceCount: spaceCount)
        let total = shards.reduce(0) { total, shard in total + withShard(shard) { $0.entries.count - firstSlots[shard] } }
        for shard in shards {
            withShard(shard) { table in
                table.entries.withUnsafeBufferPointer { entries in
                    order.note(
                        (firstSlots[shard] ..< entries.count).lazy.map { (slot: $0, isNew: true) }, of: entries, shard: shard,
                        room: total, isQueue: isQueue
                    )
                    // Once each: a key restored twice (a record and its copy) whose
                    // first copy took a freed slot is there twice, new by the first.
                    var others: [Int: Bool] = [:]
                    for (slot, isNew) in otherSlots[shard] { others[slot] = isNew || others[slot] == true }
                    order.note(others.lazy.map { (slot: $0.key, isNew: $0.value) }, of: entries, shard: shard, room: total, isQueue: isQueue)
                }
            }
        }
        return order
    }

    /// What `restoredOrder` found, by key space number: the expiry items of
    /// the entries a restore set, how many entries it added, and a Queue's
    /// new items with their sequences.
    struct RestoredOrder: Sendable {
        var items: [[ExpiryIndex.Item]]
        var newCounts: [Int]
        var queued: [[(sequence: UInt64, ref: EntryRef)]]

        init(spaceCount: Int) {
            items = Array(repeating: [], count: spaceCount)
            newCounts = Array(repeating: 0, count: spaceCount)
            queued = Array(repeating: [], count: spaceCount)
        }

        /// Notes the entries in `slots` of shard `shard`, whose slab is
        /// `entries`, each flagged if the restore added it; `room`, the items
        /// to make room for at once. In runs of one key space (a restore is
        /// mostly of one), each run's items appended to its array taken out of
        /// `items`, and its new entries counted apart: appended there by
        /// subscript, an item cost three checks of uniqueness (the arrays, the
        /// array, the counts). The fields are read one by one: an entry read
        /// whole was copied, its key retained and released.
        @inline(__always)
        mutating func note(
            _ slots: some Sequence<(slot: Int, isNew: Bool)>, of entries: UnsafeBufferPointer<IndexShard.Entry>, shard: Int,
            room: Int, isQueue: [Bool]
        ) {
            var space = -1
            var run: [ExpiryIndex.Item] = []
            var added = 0
            for (slot, isNew) in slots where entries[slot].flags.contains(.occupied) {
                let entrySpace = Int(entries[slot].space)
                if entrySpace != space {
                    if space >= 0 { endRun(&run, of: space, added: &added) }
                    space = entrySpace
                    swap(&run, &items[space])
                    // Room for all; room never used is never touched.
                    if run.capacity == 0 { run.reserveCapacity(room) }
                }
                let ref = EntryRef(shard: shard, slot: slot, sequence: entries[slot].sequence)
                run.append(.init(expiry: entries[slot].expiry, ref: ref))
                guard isNew else { continue }
                added += 1
                if isQueue[space] { queued[space].append((entries[slot].sequence, ref)) }
            }
            if space >= 0 { endRun(&run, of: space, added: &added) }
        }

        /// Puts a run's items back in `items`, and counts its new entries.
        private mutating func endRun(_ run: inout [ExpiryIndex.Item], of space: Int, added: inout Int) {
            swap(&run, &items[space])
            newCounts[space] += added
            added = 0
        }
    }

    @inline(__always)
    private func upsert(
        space: Int, key: String, hash: Int, _ record: EntryRecord, into shard: inout IndexShard, _ shardIndex: Int
    ) -> (previous: EntryRecord?, ref: EntryRef) {
        let space16 = UInt16(truncatingIfNeeded: space)
        let (entry, superseded) = pack(record, key: key, space: space16)
        let vacant: Int
        switch shard.probe(space: space16, key: key, hash: hash) {
        case let .found(slot):
            let previous = self.record(in: shard, slot: slot)
            shard.update(slot: slot, with: entry, diskPlace: record.diskPlace, superseded: superseded)
            return (previous, EntryRef(shard: shardIndex, slot: slot, sequence: record.sequence))
        case let .vacant(bucket):
            vacant = bucket
        }
        let slot = shard.insert(entry, diskPlace: record.diskPlace, hash: hash, vacant: vacant)
        // A new slot has no superseded version to replace.
        if superseded != nil { shard.update(slot: slot, with: entry, diskPlace: record.diskPlace, superseded: superseded) }
        return (nil, EntryRef(shard: shardIndex, slot: slot, sequence: record.sequence))
    }

    /// Removes (space, key).
    /// - Returns: its record, and its reference.
    @discardableResult
    func remove(space: Int, key: String) -> (record: EntryRecord, ref: EntryRef)? {
        let space16 = UInt16(truncatingIfNeeded: space)
        let hash = IndexShard.hash(space: space16, key: key)
        let shardIndex = hash & (Self.shardCount - 1)
        return withShard(shardIndex) { shard in
            guard let slot = shard.find(space: space16, key: key, hash: hash) else { return nil }
            let record = self.record(in: shard, slot: slot)
            shard.remove(slot: slot, hash: hash)
            return (record, EntryRef(shard: shardIndex, slot: slot, sequence: record.sequence))
        }
    }

    /// Changes the record of (space, key) in place, if it exists.
    @discardableResult
    func modify<R: Sendable>(space: Int, key: String, _ body: (inout EntryRecord) -> R) -> R? {
        modify(space: space, key: key, hash: Self.hash(space: space, key: key).hash, body)?.result
    }

    /// Changes the record of (space, key), whose hash (`hash(space:key:)`)
    /// the caller has, in place, if it exists; with `body`'s result, the
    /// entry's reference (a value read back into memory joins the memory
    /// budget's queue by it, with one hash and one probe for all three).
    func modify<R: Sendable>(space: Int, key: String, hash: Int, _ body: (inout EntryRecord) -> R) -> (result: R, ref: EntryRef)? {
        let space16 = UInt16(truncatingIfNeeded: space)
        let shardIndex = hash & (Self.shardCount - 1)
        return withShard(shardIndex) { shard in
            guard let slot = shard.find(space: space16, key: key, hash: hash) else { return nil }
            let result = modify(&shard, slot: slot, body)
            return (result, EntryRef(shard: shardIndex, slot: slot, sequence: shard.entries[slot].sequence))
        }
    }

    // MARK: - By reference, for the store (under its lock)

    /// The entry `ref` names, nil when its slot holds another version now.
    func entry(_ ref: EntryRef) -> (space: Int, key: String, record: EntryRecord)? {
        withShard(ref.shard) { shard in
            guard shard.isCurrent(slot: ref.slot, tag: ref.tag) else { return nil }
            let entry = shard.entries[ref.slot]
            return (Int(entry.space), entry.key, record(in: shard, slot: ref.slot))
        }
    }

    /// Whether `ref` still names its entry's current version.
    func isCurrent(_ ref: EntryRef) -> Bool {
        withShard(ref.shard) { $0.isCurrent(slot: ref.slot, tag: ref.tag) }
    }

    /// Whether `ref` still names its entry's current version, and that version's value is in memory.
    func holdsValue(_ ref: EntryRef) -> Bool {
        withShard(ref.shard) { $0.isCurrent(slot: ref.slot, tag: ref.tag) && $0.entries[ref.slot].value != nil }
    }

    /// The full sequence of the version `ref` names (nil when stale).
    func sequence(_ ref: EntryRef) -> UInt64? {
        withShard(ref.shard) { shard in
            shard.isCurrent(slot: ref.slot, tag: ref.tag) ? shard.entries[ref.slot].sequence : nil
        }
    }

    /// The disk budget's place of the entry `ref` names, nil when its slot holds another version now.
    func diskPlace(_ ref: EntryRef) -> DiskPlace? {
        withShard(ref.shard) { shard in
            shard.isCurrent(slot: ref.slot, tag: ref.tag) ? shard.diskPlaces[ref.slot] : nil
        }
    }

    /// Removes the entry `ref` names, if it is still that version.
    func remove(_ ref: EntryRef) -> (key: String, record: EntryRecord)? {
        withShard(ref.shard) { shard in
            guard shard.isCurrent(slot: ref.slot, tag: ref.tag) else { return nil }
            let entry = shard.entries[ref.slot]
            let record = record(in: shard, slot: ref.slot)
            shard.remove(slot: ref.slot, hash: IndexShard.hash(space: entry.space, key: entry.key))
            return (entry.key, record)
        }
    }

    /// Changes the entry `ref` names in place, if it is still that version.
    @discardableResult
    func modify<R: Sendable>(_ ref: EntryRef, _ body: (_ space: Int, _ key: String, inout EntryRecord) -> R) -> R? {
        withShard(ref.shard) { shard in
            guard shard.isCurrent(slot: ref.slot, tag: ref.tag) else { return nil }
            let key = shard.entries[ref.slot].key
            let space = Int(shard.entries[ref.slot].space)
            return modify(&shard, slot: ref.slot) { body(space, key, &$0) }
        }
    }

    // MARK: - By version, for the writer

    // A version's `ref` (the place its insert returned) finds it without a
    // hash or a probe. A stale one is almost always a version replaced or
    // removed; the key is asked then too, so that an entry moved to another
    // slot is still found (none moves while its write is pending today:
    // `StoreState.reinstate` takes only written ones; nothing here promises it).

    /// Whether `sequence` is the current version of (space, key).
    func isCurrent(space: Int, key: String, sequence: UInt64, ref: EntryRef?) -> Bool {
        ref.map { self.sequence($0) == sequence } == true || self.sequence(space: space, key: key) == sequence
    }

    /// Marks version `sequence` of (space, key) written at `location`: no
    /// longer pending, no older version on disk. The writer's commit does this
    /// for every record it lands, under the store's lock, which the sets wait
    /// for meanwhile; so the fields change in place (`modify` rebuilt the
    /// entry, retaining and releasing its key and value, and the commit held
    /// the lock for a quarter of the writer's time in W8).
    /// - Returns: what the disk budget counts of the record before and after,
    ///   and its value's size; nil when `sequence` is not the current version.
    func markWritten(space: Int, key: String, sequence: UInt64, ref: EntryRef?, at location: RecordLocation) -> (before: DiskFacts, after: DiskFacts, rawSize: Int)? {
        if let ref, let marked = withShard(ref.shard, { shard in
            shard.isCurrent(slot: ref.slot, tag: ref.tag) ? markWritten(&shard, slot: ref.slot, sequence: sequence, at: location) : nil
        }) {
            return marked
        }
        let space16 = UInt16(truncatingIfNeeded: space)
        let hash = IndexShard.hash(space: space16, key: key)
        return withShard(hash & (Self.shardCount - 1)) { shard in
            shard.find(space: space16, key: key, hash: hash).flatMap { markWritten(&shard, slot: $0, sequence: sequence, at: location) }
        }
    }

    private func markWritten(
        _ shard: inout IndexShard, slot: Int, sequence: UInt64, at location: RecordLocation
    ) -> (before: DiskFacts, after: DiskFacts, rawSize: Int)? {
        guard shard.entries[slot].sequence == sequence else { return nil }
        // The facts alone, not whole records: copying `EntryRecord`s (its
        // value makes it more than plain data) was a third of a commit's work.
        let (before, _) = diskFacts(in: shard, slot: slot)
        shard.noteWritten(slot: slot, place: location.place, length: UInt32(location.length))
        let after = DiskFacts(isPendingWrite: false, length: location.length, location: location, inMain: before.inMain)
        return (before, after, Int(shard.entries[slot].rawSize))
    }

    // MARK: - Every entry

    /// Calls `body` with every entry, shard by shard (each shard's lock held
    /// meanwhile); each record has its value only when `withValues` asks.
    ///
    /// Why a caller says so: a value is an object of its own, and handing it
    /// over retains it, a cache miss per entry. A save's manifest needs no
    /// value, and at W8's million entries those misses were a second of its
    /// `save()`.
    func forEach(withValues: Bool, _ body: (_ space: Int, _ key: String, _ record: EntryRecord, _ ref: EntryRef) -> Void) {
        for (index, locked) in shards.enumerated() {
            locked.withLock { shard in
                for slot in shard.entries.indices where shard.entries[slot].flags.contains(.occupied) {
                    body(
                        Int(shard.entries[slot].space), shard.entries[slot].key, record(in: shard, slot: slot, withValue: withValues),
                        EntryRef(shard: index, slot: slot, sequence: shard.entries[slot].sequence)
                    )
                }
            }
        }
    }

    /// Calls `body` with every entry's key space and key, shard by shard.
    func forEachKey(_ body: (_ space: Int, _ key: String) -> Void) {
        for locked in shards {
            locked.withLock { shard in
                for slot in shard.entries.indices where shard.entries[slot].flags.contains(.occupied) {
                    body(Int(shard.entries[slot].space), shard.entries[slot].key)
                }
            }
        }
    }

    /// Takes every value out of memory (their files stay).
    func releaseAllValues() {
        for locked in shards {
            locked.withLock { shard in
                for slot in shard.entries.indices where shard.entries[slot].value != nil { shard.setValue(nil, at: slot) }
            }
        }
    }

    /// Removes every entry of key space `space`, or of all when nil.
    func removeAll(space: Int?) {
        for locked in shards {
            locked.withLock { shard in
                guard let space else { return shard.removeAll() }
                for slot in shard.entries.indices where shard.entries[slot].flags.contains(.occupied) && Int(shard.entries[slot].space) == space {
                    let entry = shard.entries[slot]
                    shard.remove(slot: slot, hash: IndexShard.hash(space: entry.space, key: entry.key))
                }
            }
        }
    }

    // MARK: - Packing

    /// `hash`: the key's, when the caller has it.
    private func withEntry<R: Sendable>(space: Int, key: String, hash: Int? = nil, _ body: (IndexShard, Int) -> R) -> R? {
        let space16 = UInt16(truncatingIfNeeded: space)
        let hash = hash ?? IndexShard.hash(space: space16, key: key)
        return withShard(hash & (Self.shardCount - 1)) { shard in
            shard.find(space: space16, key: key, hash: hash).map { body(shard, $0) }
        }
    }

    private func modify<R: Sendable>(_ shard: inout IndexShard, slot: Int, _ body: (inout EntryRecord) -> R) -> R {
        var record = record(in: shard, slot: slot)
        let result = body(&record)
        let entry = shard.entries[slot]
        let (packed, superseded) = pack(record, key: entry.key, space: entry.space)
        shard.update(slot: slot, with: packed, diskPlace: record.diskPlace, superseded: superseded)
        return result
    }

    /// Where the version on disk is, for an entry whose value is not in memory.
    private func diskLocation(_ entry: IndexShard.Entry, slot: Int, in shard: IndexShard) -> RecordLocation {
        if entry.flags.contains(.pendingWrite), let old = shard.superseded[UInt32(slot)] {
            return old.location
        }
        return RecordLocation(place: entry.place, length: Int(entry.length))
    }

    /// The record in `slot`, its fields read in place: a copy of the whole
    /// entry would retain its key and value.
    private func record(in shard: IndexShard, slot: Int, withValue: Bool = true) -> EntryRecord {
        let sequence = shard.entries[slot].sequence
        let (facts, old) = diskFacts(in: shard, slot: slot)
        return EntryRecord(
            expiry: shard.entries[slot].expiry, sequence: sequence, rawSize: Int(shard.entries[slot].rawSize),
            value: withValue ? shard.value(at: slot) : nil,
            frequency: shard.entries[slot].frequency, diskPlace: shard.diskPlaces[slot], isPendingWrite: facts.isPendingWrite,
            length: facts.length, location: facts.location,
            diskSequence: facts.isPendingWrite ? old?.sequence ?? 0 : (facts.location != nil ? sequence : 0)
        )
    }

    /// What the disk budget counts of the entry in `slot`, and its superseded
    /// version while it is pending: a record on disk is this version's once
    /// written (a length of 0 is `memory` durability's: none), the older one's meanwhile.
    @inline(__always)
    private func diskFacts(in shard: IndexShard, slot: Int) -> (DiskFacts, superseded: IndexShard.DiskVersion?) {
        let length = Int(shard.entries[slot].length)
        let pending = shard.entries[slot].flags.contains(.pendingWrite)
        let old = pending ? shard.superseded[UInt32(slot)] : nil
        let location = pending ? old?.location : length > 0 ? RecordLocation(place: shard.entries[slot].place, length: length) : nil
        return (DiskFacts(isPendingWrite: pending, length: length, location: location, inMain: shard.diskPlaces[slot].inMain), old)
    }

    private func pack(_ record: EntryRecord, key: String, space: UInt16) -> (IndexShard.Entry, IndexShard.DiskVersion?) {
        var flags: IndexShard.Flags = .occupied
        if record.isPendingWrite { flags.insert(.pendingWrite) }
        let pending = record.isPendingWrite
        let written = pending ? nil : record.location
        let entry = IndexShard.Entry(
            key: key, expiry: record.expiry, sequence: record.sequence, value: record.value,
            place: written?.place ?? 0,
            length: UInt32(pending ? record.length : record.fileSize), rawSize: UInt32(record.rawSize),
            space: space, flags: flags, frequency: record.frequency
        )
        let superseded = pending ? record.location.map { IndexShard.DiskVersion(location: $0, sequence: record.diskSequence) } : nil
        return (entry, superseded)
    }
}
