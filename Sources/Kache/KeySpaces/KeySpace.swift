import DequeModule
import Foundation
import KacheStorage

/// A named set of keys with its own rule for staying within capacity:
/// the top level (unbounded), a Pool (evicts the earliest-expiring key when
/// full) or a Queue (FIFO, drops the oldest item when full).
///
/// Policy only: a key space never builds a file path; `Removal`s tell the
/// disk layer what to delete.
struct KeySpace: Sendable {
    /// The kinds of key space, as recorded in the manifest.
    /// Stored in every record as its raw value (`EntryFile.kinds`).
    enum Kind: UInt8, Sendable, CaseIterable {
        case topLevel = 0, pool = 1, queue = 2

        /// The kind a record's kind byte names. The format accepts no other
        /// byte than these three (`EntryFile.kinds`), so every record has one.
        init(record byte: UInt8) {
            guard let kind = Kind(rawValue: byte) else { preconditionFailure("EntryFile.kinds accepts \(byte), which names no key-space kind") }
            self = kind
        }
    }

    /// What a handle needs to know of its key space, so that reads and writes
    /// don't take the lock just to look it up.
    struct Ref: Sendable {
        var number: Int
        var name: String
        var kind: Kind

        /// The top level of `set(_:forKey:ttl:)`.
        static let topLevel = Ref(number: StoreState.topLevel, name: "", kind: .topLevel)
    }

    let name: String
    let kind: Kind
    var capacity: Int
    /// Its entries, which live in the shared `EntryIndex`.
    private(set) var count = 0
    var expiry = ExpiryIndex()
    /// Queue items in push order; references no longer current are skipped lazily.
    var fifo = Deque<EntryRef>()
    var counters = KeySpaceCounters()

    init(name: String, kind: Kind, capacity: Int) {
        self.name = name
        self.kind = kind
        self.capacity = capacity
    }

    /// Records that a version of an entry was added (`isNew`: its key was not
    /// in the key space) or put back.
    /// - Complexity: O(log n) amortized.
    mutating func noteAdded(_ ref: EntryRef, expiry: Timestamp, isNew: Bool, index: EntryIndex) {
        if isNew { count += 1 }
        self.expiry.insert(ref, expiry: expiry)
        if kind == .queue, isNew { fifo.append(ref) }
        compactIfNeeded(index: index)
    }

    /// `noteAdded` of many versions at once (a restore): `items` are their
    /// expiry items, in two halves (`ExpiryIndex.insert(halves:_:)`),
    /// `newCount` of them for keys not in the key space before, and
    /// `newInWriteOrder` those new ones' references in the order they were
    /// written (a Queue's order).
    /// - Complexity: O(n + k) for k items.
    mutating func noteRestored(_ first: consuming [ExpiryIndex.Item], _ second: consuming [ExpiryIndex.Item], newCount: Int, newInWriteOrder: [EntryRef], index: EntryIndex) {
        count += newCount
        expiry.insert(halves: consume first, consume second)
        if kind == .queue { fifo.append(contentsOf: newInWriteOrder) }
        compactIfNeeded(index: index)
    }

    /// Records that an entry left the key space by a path other than the pops below.
    mutating func noteRemoved() {
        count -= 1
    }

    /// Puts back an entry that left. A Queue's order is rebuilt from its items'
    /// sequences: the item may have left from the front (a pop, a full Queue)
    /// or from anywhere (the disk budget), so no cheaper placement is right in
    /// every case.
    /// - Complexity: O(log n) amortized; O(n log n) for a Queue (a failure path only).
    mutating func noteReinstated(_ ref: EntryRef, expiry: Timestamp, space: Int, index: EntryIndex) {
        count += 1
        self.expiry.insert(ref, expiry: expiry)
        if kind == .queue {
            var items: [(sequence: UInt64, ref: EntryRef)] = []
            index.forEach(withValues: false) { entrySpace, _, record, ref in
                if entrySpace == space { items.append((record.sequence, ref)) }
            }
            fifo = Deque(items.sorted { $0.sequence < $1.sequence }.map(\.ref))
        }
    }

    /// Removes and returns the entry with the earliest expiry if it has passed.
    /// - Complexity: O(log n) amortized.
    mutating func popExpired(now: Timestamp, index: EntryIndex) -> (key: String, record: EntryRecord)? {
        // The top item, live or stale, expires first: while it has not passed,
        // no live item has, and the sweep on every insert takes no shard lock.
        guard let least = expiry.leastExpiry, least <= now else { return nil }
        guard let top = earliestItem(index: index), top.expiry <= now else { return nil }
        return popEarliest(index: index)
    }

    /// The earliest live item of the expiry index, if any.
    mutating func earliestItem(index: EntryIndex) -> ExpiryIndex.Item? {
        expiry.earliest { index.isCurrent($0.ref) }
    }

    /// Removes and returns the entry that expires first (ties: written first).
    /// - Complexity: O(log n) amortized.
    mutating func popEarliest(index: EntryIndex) -> (key: String, record: EntryRecord)? {
        while let top = expiry.popEarliest(isLive: { index.isCurrent($0.ref) }) {
            guard let removed = index.remove(top.ref) else { continue }
            count -= 1
            return removed
        }
        return nil
    }

    /// The oldest live Queue item.
    /// - Complexity: O(1) amortized.
    mutating func oldest(index: EntryIndex) -> EntryRef? {
        while let first = fifo.first {
            if index.isCurrent(first) { return first }
            fifo.removeFirst()
        }
        return nil
    }

    /// Removes and returns the oldest Queue item.
    mutating func popOldest(index: EntryIndex) -> (key: String, record: EntryRecord)? {
        while let ref = oldest(index: index) {
            fifo.removeFirst()
            guard let removed = index.remove(ref) else { continue }
            count -= 1
            return removed
        }
        return nil
    }

    /// Forgets every entry (the caller empties the index and deletes the files).
    mutating func removeAll() {
        count = 0
        expiry.removeAll()
        fifo.removeAll()
    }

    private mutating func compactIfNeeded(index: EntryIndex) {
        if expiry.needsCompaction(liveCount: count) {
            expiry.rebuild(from: expiry.unorderedItems.filter { index.isCurrent($0.ref) })
        }
        if kind == .queue, fifo.count > 2 * count + 1024 {
            fifo = Deque(fifo.filter { index.isCurrent($0) })
        }
    }
}

/// Per-key-space counts, persisted in the manifest.
struct KeySpaceCounters: Sendable, Equatable {
    var evictions: UInt64 = 0
    var expirations: UInt64 = 0
    var pushes: UInt64 = 0
    var pops: UInt64 = 0
}
