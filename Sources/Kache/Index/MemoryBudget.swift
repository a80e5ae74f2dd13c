import KacheStorage
import DequeModule

/// Which values stay in memory, within a byte budget: the CLOCK algorithm, an
/// approximation of least-recently-used that costs a reader only one flag
/// write (no list to reorder under the lock on every hit).
///
/// The ring holds one slot per value that entered memory, oldest first. When
/// memory is over budget, the hand takes slots from the front: a slot whose
/// entry was read since the hand last passed gets a second chance (back of the
/// ring); one not read leaves memory. Values not yet written to their file are
/// passed over, since memory is then their only copy.
struct MemoryBudget: Sendable {

    /// The most bytes of values to keep in memory.
    let limit: Int
    /// Bytes of values in memory now, each counted with its overhead (`charge(forValueOf:)`).
    private(set) var bytes = 0
    /// Values in memory now.
    private(set) var values = 0
    /// The values' entries, 8 bytes each; a reference to a version no longer
    /// current, or no longer in memory, is stale and dropped when the hand reaches it.
    private(set) var ring = Deque<EntryRef>()

    /// The write-behind queue's memory, counted against the same limit (nil
    /// without a queue).
    let queued: QueuedBytes?

    init(limit: Int, queued: QueuedBytes? = nil) {
        self.limit = limit
        self.queued = queued
    }

    /// Whether values and the write-behind queue together pass the limit.
    var isOver: Bool { bytes + (queued?.current ?? 0) > limit }

    /// Whether the values alone pass the limit (the queue changes outside the
    /// store's lock, so only this can be checked as an invariant).
    var valuesAreOver: Bool { bytes > limit }

    /// What a value of `size` bytes costs in memory, as the budget counts it:
    /// its bytes and, past the 14 bytes a `Data` holds inline, the heap
    /// allocations around them: a storage object (a 16-byte object header and
    /// six fields, 80 bytes from malloc) and malloc's header and 16-byte
    /// rounding of the bytes (16 on average). Counted so that the budget
    /// bounds resident memory, not only payload: at 200-byte values the
    /// overhead is a third more (docs/MEMORY.md).
    static func charge(forValueOf size: Int) -> Int {
        size <= 14 ? size : size + 96
    }

    /// Traps unless the totals equal those of the values counted afresh, and
    /// the values are within the limit unless the hand had nothing to take
    /// (`anyPinned`: a value not yet written; `StoreState.checkInvariants`).
    func checkTotals(bytes counted: Int, values countedValues: Int, anyPinned: Bool) {
        precondition(counted == bytes, "memory bytes \(bytes) != sum of values \(counted)")
        precondition(countedValues == values, "memory values \(values) != \(countedValues)")
        precondition(!valuesAreOver || ring.isEmpty || anyPinned, "memory over budget with nothing pinned")
    }

    /// Counts a value of `size` bytes of the entry `ref` entering memory; when
    /// stale slots outnumber live ones, keeps only slots `isLive` accepts.
    mutating func admit(_ ref: EntryRef, size: Int, isLive: (EntryRef) -> Bool) {
        bytes += Self.charge(forValueOf: size)
        values += 1
        ring.append(ref)
        if ring.count > 2 * values + 1024 { ring = Deque(ring.filter(isLive)) }
    }

    /// Counts a value of `size` bytes leaving memory (removed, replaced or evicted).
    mutating func release(size: Int) {
        bytes -= Self.charge(forValueOf: size)
        values -= 1
    }

    /// The slot the CLOCK hand takes next.
    mutating func nextForHand() -> EntryRef? { ring.popFirst() }

    /// Gives a slot the hand passed over its second chance, at the back of the ring.
    mutating func passOver(_ ref: EntryRef) { ring.append(ref) }

    /// Forgets every value (their records stay in the index, or go with it).
    mutating func forgetValues() {
        bytes = 0
        values = 0
        ring.removeAll()
    }
}

extension StoreState {
    /// Records that the value of the entry `ref` entered memory.
    mutating func admitToMemory(_ ref: EntryRef, size: Int) {
        memory.admit(ref, size: size, isLive: index.holdsValue)
    }

    /// Records that a value left memory (removed, replaced or evicted).
    mutating func releaseFromMemory(_ record: EntryRecord) {
        guard record.value != nil else { return }
        memory.release(size: record.rawSize)
    }

    /// Moves values out of memory until it is within budget. With files behind
    /// them only the memory copy goes; in `memory` durability the entry goes.
    /// - Complexity: O(1) amortized per value admitted.
    mutating func enforceMemoryBudget() {
        var budget = memory.ring.count * 2 // each slot at most twice: once to clear its flag
        while memory.isOver, budget > 0, let ref = memory.nextForHand() {
            budget -= 1
            enum Step { case stale, keep, evictValue(EntryRecord), evictEntry }
            let step = index.modify(ref) { _, record -> Step in
                guard record.value != nil else { return .stale }
                if record.isPendingWrite { return .keep }
                if record.referenced {
                    record.referenced = false
                    return .keep
                }
                if keepsFiles {
                    let before = record
                    record.value = nil
                    return .evictValue(before)
                }
                return .evictEntry
            }
            switch step ?? .stale {
            case .stale:
                continue
            case .keep:
                memory.passOver(ref)
            case let .evictValue(record):
                releaseFromMemory(record)
                counters.memoryEvictions += 1
            case .evictEntry:
                guard let (space, key, record) = index.entry(ref) else { continue }
                _ = index.remove(ref)
                spaces[space].noteRemoved()
                _ = noteRemoved(space: space, key: key, record: record)
                counters.memoryEvictions += 1
            }
        }
    }
}
