import CKacheSystem
import Foundation
import KacheStorage

/// One shard of the entry index: the entries whose (key space, key) hash to
/// it, packed so that an entry costs about 100 bytes, its key's 16 included
/// (docs/MEMORY.md).
///
/// Why a table of our own and not a `Dictionary<String, EntryRecord>`: a
/// dictionary bucket holds the key and the whole record, and at a million
/// entries two buckets in three are empty, so each entry paid about 150 bytes
/// of buckets. Here entries sit densely in a slab (`entries`), and the hash
/// table (`buckets`) holds only 4-byte slot numbers; the expiry heap, the
/// Queue order and the memory ring name an entry by its slot (`EntryRef`), so
/// no structure repeats the key. swift-collections has no hash table that
/// looks keys up in storage of the caller's (OrderedDictionary's is internal,
/// and its removals shift every later element).
///
/// Linear probing, at most 3/4 full; a removal shifts the run after it back
/// (no tombstones), so lookups never slow down with churn.
struct IndexShard: Sendable {
    /// An entry as stored: 64 bytes, one cache line (the key's 16 included).
    ///
    /// The value sits in the entry itself, 16 bytes even when it is only on
    /// disk: kept in a slab of its own instead, a hit cost one more cache
    /// miss, and W2 on one thread ran at 0.45× the `Mutex<[String: Data]>`
    /// floor instead of 0.59× (docs/MEMORY.md). To stay at 64 bytes, the
    /// sequence, the flags, the read frequency and the key space share one word.
    struct Entry: Sendable {
        var key: String
        var expiry: Timestamp
        /// The sequence in the low `sequenceBits`, the flags above it, then
        /// the frequency, and the key space in the top `spaceBits`.
        private var packed: UInt64
        /// The value, when it is in memory.
        var value: Data?
        /// `RecordLocation.place` of this version's record once written; 0
        /// while it is pending.
        var place: UInt64
        /// The record's length, written or pending; 0 in `memory` durability.
        var length: UInt32
        var rawSize: UInt32

        /// 2^48 writes: 8.9 years at a million sets a second, for the life of
        /// a directory. A record past it is damage (`EntryFile.largestSequence`,
        /// which a test holds equal). A literal, not derived from it: a constant
        /// from another module is initialized lazily, and the packed fields'
        /// getters stopped being folded, so that each one read from the slab
        /// copied the whole entry (W8's sets ran a third slower).
        static let sequenceBits = 48
        static let flagBits = 2
        /// Reads since the value entered memory, up to 3 (`MemoryBudget`, S3-FIFO's 2-bit counter).
        static let frequencyBits = 2
        /// 4,096 key spaces (`KeySpaces.maximumCount`).
        static let spaceBits = 64 - sequenceBits - flagBits - frequencyBits
        private static let sequenceMask: UInt64 = 1 << sequenceBits - 1
        private static let flagMask: UInt64 = 1 << flagBits - 1
        private static let frequencyShift = UInt64(sequenceBits + flagBits)
        private static let spaceShift = UInt64(sequenceBits + flagBits + frequencyBits)
        static let highestFrequency: UInt8 = 1 << frequencyBits - 1

        init(
            key: String, expiry: Timestamp, sequence: UInt64, value: Data?,
            place: UInt64, length: UInt32, rawSize: UInt32, space: UInt16, flags: Flags, frequency: UInt8 = 0
        ) {
            self.key = key
            self.expiry = expiry
            packed = 0
            self.value = value
            self.place = place
            self.length = length
            self.rawSize = rawSize
            self.sequence = sequence
            self.space = space
            self.flags = flags
            self.frequency = frequency
        }

        var sequence: UInt64 {
            get { packed & Self.sequenceMask }
            set {
                precondition(newValue <= Self.sequenceMask, "Kache's write sequence passed 2^\(Self.sequenceBits)")
                packed = packed & ~Self.sequenceMask | newValue
            }
        }

        var flags: Flags {
            get { Flags(rawValue: UInt8(truncatingIfNeeded: packed >> UInt64(Self.sequenceBits) & Self.flagMask)) }
            set { packed = packed & ~(Self.flagMask << UInt64(Self.sequenceBits)) | UInt64(newValue.rawValue) << UInt64(Self.sequenceBits) }
        }

        /// Reads of the value since it entered memory, at most `highestFrequency`.
        var frequency: UInt8 {
            get { UInt8(truncatingIfNeeded: packed >> Self.frequencyShift) & Self.highestFrequency }
            set {
                let mask = UInt64(Self.highestFrequency) << Self.frequencyShift
                packed = packed & ~mask | UInt64(min(newValue, Self.highestFrequency)) << Self.frequencyShift
            }
        }

        var space: UInt16 {
            get { UInt16(truncatingIfNeeded: packed >> Self.spaceShift) }
            set {
                precondition(Int(newValue) < 1 << Self.spaceBits, "key space \(newValue) does not fit an entry")
                packed = packed & (1 << Self.spaceShift - 1) | UInt64(newValue) << Self.spaceShift
            }
        }
    }

    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let occupied = Flags(rawValue: 1)
        static let pendingWrite = Flags(rawValue: 2)
    }

    /// The version of a key still on disk while a newer one waits to be
    /// written (rare, so kept apart from `Entry`).
    struct DiskVersion: Sendable {
        var location: RecordLocation
        var sequence: UInt64
    }

    /// Slot plus one in the low bits, 6 more bits of the hash above them, so
    /// that most probes that miss never touch an entry; 0 is empty.
    private var buckets = [UInt32](repeating: 0, count: 16)
    private(set) var entries: [Entry] = []
    private var freeSlots: [UInt32] = []
    private(set) var superseded: [UInt32: DiskVersion] = [:]
    private(set) var count = 0

    /// Read counters, kept per shard so that a hit writes nothing shared.
    var memoryHits: UInt64 = 0
    var misses: UInt64 = 0
    /// Each slot's `DiskPlace`, beside `entries`: after the fields every hit
    /// reads, so that they keep their place in the shard's first cache lines.
    private(set) var diskPlaces: [DiskPlace] = []
    /// Each slot's home bits (`home(hash)`, 32 of them), so that growing the
    /// table and a removal's backward shift place entries without hashing
    /// their keys again. Hashing each key anew (a cache miss on its bytes
    /// too) was a twelfth of a set's instructions in W8, and ran on every
    /// removal's shifted neighbours. 4 bytes an entry (docs/MEMORY.md).
    private var homes: [UInt32] = []

    /// Keeps the next shard's lock and counters off this one's cache lines.
    private let padding: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0, 0, 0, 0)

    static let slotBits = 26
    static let maximumSlots = 1 << slotBits - 1
    private static let slotMask = UInt32(1 << slotBits - 1)

    // MARK: - Lookups

    /// Where a probe for a key ended: the slot that holds it, or the empty
    /// bucket where it would go (valid until the shard changes).
    enum Probe {
        case found(slot: Int)
        case vacant(bucket: Int)
    }

    /// Probes for (space, key), whose hash is `hash`.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func probe(space: UInt16, key: String, hash: Int) -> Probe {
        let mask = buckets.count - 1
        let tag = Self.tag(hash)
        var index = Self.home(hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 { return .vacant(bucket: index) }
            if bucket & ~Self.slotMask == tag {
                let slot = Int(bucket & Self.slotMask) - 1
                if entries[slot].space == space, entries[slot].key == key { return .found(slot: slot) }
            }
            index = (index + 1) & mask
        }
    }

    /// Starts loading, without waiting, what an insert of the key that hashes
    /// to `hash` touches first: the bucket its probe starts at, and the slab's next slot.
    func prefetch(hash: Int) {
        buckets.withUnsafeBufferPointer { kache_prefetch($0.baseAddress! + (Self.home(hash) & ($0.count - 1))) }
        if entries.count < entries.capacity {
            entries.withUnsafeBufferPointer { kache_prefetch($0.baseAddress! + $0.count) }
        }
    }

    /// The slot of (space, key), whose hash is `hash`.
    /// - Complexity: O(1) expected.
    func find(space: UInt16, key: String, hash: Int) -> Int? {
        if case let .found(slot) = probe(space: space, key: key, hash: hash) { slot } else { nil }
    }

    /// Whether `slot` holds an entry whose sequence ends in `tag` (an `EntryRef` still current).
    func isCurrent(slot: Int, tag: UInt32) -> Bool {
        slot < entries.count && entries[slot].flags.contains(.occupied) && UInt32(truncatingIfNeeded: entries[slot].sequence) == tag
    }

    func value(at slot: Int) -> Data? {
        entries[slot].value
    }

    // MARK: - Changes

    /// Adds an entry whose key is not in the shard yet; `vacant`, the bucket
    /// a probe for it just found (an insert after a miss probes once, not twice).
    /// Inlined: called apart, it took its entry through a copy of the
    /// caller's (callgrind: 24 instructions an entry at open, 18 a set).
    /// - Returns: its slot.
    @inline(__always)
    mutating func insert(_ entry: consuming Entry, diskPlace: DiskPlace, hash: Int, vacant: Int? = nil) -> Int {
        var vacant = vacant
        if (count + 1) * 4 > buckets.count * 3 {
            grow()
            vacant = nil
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = Int(free)
            entries[slot] = entry
            diskPlaces[slot] = diskPlace
            homes[slot] = Self.homeBits(hash)
        } else {
            slot = entries.count
            precondition(slot < Self.maximumSlots, "an index shard is full (\(Self.maximumSlots) entries)")
            entries.append(entry)
            diskPlaces.append(diskPlace)
            homes.append(Self.homeBits(hash))
        }
        entries[slot].flags.insert(.occupied)
        if let vacant {
            buckets[vacant] = Self.tag(hash) | UInt32(slot + 1)
        } else {
            place(slot: slot, hash: hash)
        }
        count += 1
        return slot
    }

    /// Removes the entry in `slot` (whose key hashes to `hash`) and frees its value.
    mutating func remove(slot: Int, hash: Int) {
        let mask = buckets.count - 1
        var index = Self.home(hash) & mask
        while Int(buckets[index] & Self.slotMask) - 1 != slot { index = (index + 1) & mask }
        // Backward shift: move later members of the run into the hole when
        // their home is at or before it, so no probe ever stops early.
        var hole = index
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(homes[Int(buckets[next] & Self.slotMask) - 1]) & mask
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
        superseded[UInt32(slot)] = nil
        entries[slot] = Entry(
            key: "", expiry: 0, sequence: 0, value: nil, place: 0, length: 0, rawSize: 0, space: 0, flags: []
        )
        diskPlaces[slot] = DiskPlace()
        freeSlots.append(UInt32(slot))
        count -= 1
    }

    /// Replaces the entry in `slot` with `entry`, of the same key, its place
    /// in the disk budget's queues, and its superseded version.
    mutating func update(slot: Int, with entry: Entry, diskPlace: DiskPlace, superseded version: DiskVersion?) {
        entries[slot] = entry
        diskPlaces[slot] = diskPlace
        entries[slot].flags.insert(.occupied)
        // Almost always none, and none before: don't hash the slot to remove nothing.
        if version != nil || !superseded.isEmpty { superseded[UInt32(slot)] = version }
    }

    /// Marks the entry in `slot` written at `place`, `length` bytes long: no
    /// longer pending, and no older version of it on disk any more.
    mutating func noteWritten(slot: Int, place: UInt64, length: UInt32) {
        entries[slot].place = place
        entries[slot].length = length
        entries[slot].flags.remove(.pendingWrite)
        if !superseded.isEmpty { superseded[UInt32(slot)] = nil }
    }

    /// Counts a read of the value in `slot` (saturating).
    mutating func noteRead(slot: Int) {
        if entries[slot].frequency < Entry.highestFrequency { entries[slot].frequency += 1 }
    }

    /// Counts a read of the entry in `slot` for the disk budget (saturating).
    mutating func noteDiskRead(slot: Int) {
        diskPlaces[slot].noteRead()
    }

    /// Puts `value` in memory for the entry in `slot`, or takes it out (nil).
    mutating func setValue(_ value: Data?, at slot: Int) {
        entries[slot].value = value
    }

    /// Empties the shard, giving its memory back.
    mutating func removeAll() {
        self = IndexShard(memoryHits: memoryHits, misses: misses)
    }

    private init(memoryHits: UInt64, misses: UInt64) {
        self.memoryHits = memoryHits
        self.misses = misses
    }

    init() {}

    // MARK: - Hashing

    /// The hash of (space, key): its low bits choose the shard, the rest the bucket.
    static func hash(space: UInt16, key: String) -> Int {
        Int(truncatingIfNeeded: SipHash13.process.hash(key, extra: space))
    }

    /// The hash of (space, key), from `utf8`, the bytes `key` was made of, by `hasher` (`SipHash13.process`).
    static func hash(space: UInt16, key: String, utf8: UnsafeRawBufferPointer, hasher: SipHash13) -> Int {
        Int(truncatingIfNeeded: hasher.hash(key, utf8: utf8, extra: space))
    }

    private static func home(_ hash: Int) -> Int { hash >> EntryIndex.shardBits }

    /// The bits of `home(hash)` a slot keeps: enough for any table, whose
    /// buckets number at most 2^27 (`maximumSlots` entries, at most 3/4 full).
    private static func homeBits(_ hash: Int) -> UInt32 { UInt32(truncatingIfNeeded: home(hash)) }

    private static func tag(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: hash >> (64 - (32 - slotBits))) << UInt32(slotBits)
    }

    private mutating func place(slot: Int, hash: Int) {
        let mask = buckets.count - 1
        var index = Self.home(hash) & mask
        while buckets[index] != 0 { index = (index + 1) & mask }
        buckets[index] = Self.tag(hash) | UInt32(slot + 1)
    }

    /// Makes room for `count` entries in all, so that adding them neither
    /// grows the table nor moves the slab (a restore knows its count).
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        diskPlaces.reserveCapacity(count)
        homes.reserveCapacity(count)
        var size = buckets.count
        while count * 4 > size * 3 { size *= 2 }
        if size > buckets.count { rehash(buckets: size) }
    }

    /// Doubles the table and places every entry again.
    /// - Complexity: O(n), once per doubling.
    private mutating func grow() {
        rehash(buckets: buckets.count * 2)
    }

    /// A table of `size` buckets, every entry placed in it again from its
    /// kept home bits, its bucket's tag carried over.
    private mutating func rehash(buckets size: Int) {
        let old = buckets
        buckets = [UInt32](repeating: 0, count: size)
        let mask = size - 1
        for bucket in old where bucket != 0 {
            var index = Int(homes[Int(bucket & Self.slotMask) - 1]) & mask
            while buckets[index] != 0 { index = (index + 1) & mask }
            buckets[index] = bucket
        }
    }
}
