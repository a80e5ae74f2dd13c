import DequeModule
import Foundation

/// A named set of keys with its own rule for staying within capacity:
/// the top level (unbounded), a Pool (evicts the earliest-expiring key when
/// full) or a Queue (FIFO, drops the oldest item when full).
///
/// Policy only: a key space never builds a file path; `Removal`s tell the
/// disk layer what to delete.
struct KeySpace: Sendable {
    /// The kinds of key space, as recorded in the manifest.
    enum Kind: UInt8, Sendable {
        case plain = 0, pool = 1, queue = 2
    }

    /// What a handle needs to know of its key space, so that reads and writes
    /// don't take the lock just to look it up.
    struct Ref: Sendable {
        var index: Int
        var name: String
        var kind: Kind

        /// The top level of `set(_:forKey:ttl:)`.
        static let topLevel = Ref(index: StoreState.topLevel, name: "", kind: .plain)
    }

    let name: String
    let kind: Kind
    var capacity: Int
    var entries: [String: EntryRecord] = [:]
    var expiry = ExpiryIndex()
    /// Queue keys in push order; keys no longer in `entries` are skipped lazily.
    var fifo = Deque<String>()
    var counters = KeySpaceCounters()

    init(name: String, kind: Kind, capacity: Int) {
        self.name = name
        self.kind = kind
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// Adds or replaces `key`.
    /// - Complexity: O(log n) amortized.
    mutating func upsert(_ key: String, _ record: EntryRecord) -> EntryRecord? {
        let previous = entries.updateValue(record, forKey: key)
        expiry.insert(key: key, expiry: record.expiry, sequence: record.sequence)
        if kind == .queue, previous == nil { fifo.append(key) }
        compactIfNeeded()
        return previous
    }

    /// Puts back an entry that left. A Queue's order is rebuilt from its items'
    /// sequences: the item may have left from the front (a pop, a full Queue)
    /// or from anywhere (the disk budget), and may or may not still stand in
    /// `fifo`, so no cheaper placement is right in every case.
    /// - Complexity: O(log n) amortized; O(n log n) for a Queue (a failure path only).
    mutating func reinstate(_ key: String, _ record: EntryRecord) {
        entries[key] = record
        expiry.insert(key: key, expiry: record.expiry, sequence: record.sequence)
        if kind == .queue {
            fifo = Deque(entries.sorted { $0.value.sequence < $1.value.sequence }.map(\.key))
        }
    }

    /// The live version check used by the expiry index.
    func isLive(_ item: ExpiryIndex.Item) -> Bool {
        entries[item.key]?.sequence == item.sequence
    }

    /// `isLive` as a closure over `entries` alone, for the index's mutating calls.
    ///
    /// Passing the method `isLive` would capture a copy of all of `self`, the
    /// heap's storage included; the heap's next removal would then find its
    /// buffer shared and copy it whole, making every eviction and sweep O(n).
    /// This closure shares only the dictionary, which nothing mutates while
    /// the index runs it.
    private var liveCheck: (ExpiryIndex.Item) -> Bool {
        let entries = entries
        return { entries[$0.key]?.sequence == $0.sequence }
    }

    /// Removes and returns the entry with the earliest expiry if it has passed.
    /// - Complexity: O(log n) amortized.
    mutating func popExpired(now: Timestamp) -> (key: String, record: EntryRecord)? {
        guard let top = expiry.earliest(isLive: liveCheck), top.expiry <= now else { return nil }
        return popEarliest()
    }

    /// The earliest live item of the expiry index, if any.
    mutating func earliestItem() -> ExpiryIndex.Item? {
        expiry.earliest(isLive: liveCheck)
    }

    /// Removes and returns the entry that expires first (ties: written first).
    /// - Complexity: O(log n) amortized.
    mutating func popEarliest() -> (key: String, record: EntryRecord)? {
        guard let top = expiry.popEarliest(isLive: liveCheck) else { return nil }
        return entries.removeValue(forKey: top.key).map { (top.key, $0) }
    }

    /// The oldest live Queue key.
    /// - Complexity: O(1) amortized.
    mutating func oldestKey() -> String? {
        while let first = fifo.first {
            if entries[first] != nil { return first }
            fifo.removeFirst()
        }
        return nil
    }

    /// Removes and returns the oldest Queue item.
    mutating func popOldest() -> (key: String, record: EntryRecord)? {
        guard let key = oldestKey() else { return nil }
        fifo.removeFirst()
        return entries.removeValue(forKey: key).map { (key, $0) }
    }

    /// Keys ordered by expiry (ties: written first).
    /// - Complexity: O(n log n)
    var keysByExpiry: [String] {
        entries.sorted { a, b in
            a.value.expiry != b.value.expiry ? a.value.expiry < b.value.expiry : a.value.sequence < b.value.sequence
        }.map(\.key)
    }

    /// Queue keys, oldest first.
    var keysInQueueOrder: [String] {
        fifo.filter { entries[$0] != nil }
    }

    /// Forgets every entry (the caller deletes the files).
    mutating func removeAll() {
        entries.removeAll()
        expiry.removeAll()
        fifo.removeAll()
    }

    private mutating func compactIfNeeded() {
        if expiry.needsCompaction(liveCount: entries.count) {
            expiry.rebuild(from: entries.map { ExpiryIndex.Item(expiry: $0.value.expiry, sequence: $0.value.sequence, key: $0.key) })
        }
        if kind == .queue, fifo.count > 2 * entries.count + 1024 {
            fifo = Deque(fifo.filter { entries[$0] != nil })
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
