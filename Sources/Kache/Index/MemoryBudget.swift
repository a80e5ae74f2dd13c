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
    struct Slot: Sendable {
        var space: Int
        var key: String
        var sequence: UInt64
    }

    /// The most bytes of values to keep in memory.
    let limit: Int
    /// Bytes of values in memory now.
    var bytes = 0
    /// Values in memory now.
    var values = 0
    var ring = Deque<Slot>()

    init(limit: Int) {
        self.limit = limit
    }

    var isOver: Bool { bytes > limit }

    /// Whether stale slots (of overwritten or removed entries) outnumber live ones.
    var needsCompaction: Bool { ring.count > 2 * values + 1024 }
}

extension StoreState {
    /// Records that `value` of the entry entered memory.
    mutating func admitToMemory(space: Int, key: String, sequence: UInt64, size: Int) {
        memory.bytes += size
        memory.values += 1
        memory.ring.append(MemoryBudget.Slot(space: space, key: key, sequence: sequence))
        if memory.needsCompaction { compactRing() }
    }

    /// Records that a value left memory (removed, replaced or evicted).
    mutating func releaseFromMemory(_ record: EntryRecord) {
        guard record.value != nil else { return }
        memory.bytes -= record.rawSize
        memory.values -= 1
    }

    /// Moves values out of memory until it is within budget. With files behind
    /// them only the memory copy goes; in `memory` durability the entry goes.
    /// - Complexity: O(1) amortized per value admitted.
    mutating func enforceMemoryBudget() {
        var budget = memory.ring.count * 2 // each slot at most twice: once to clear its flag
        while memory.isOver, budget > 0, let slot = memory.ring.popFirst() {
            budget -= 1
            guard let index = spaces[slot.space].entries.index(forKey: slot.key) else { continue }
            let record = spaces[slot.space].entries.values[index]
            guard record.sequence == slot.sequence, record.value != nil else { continue }
            if record.isPendingWrite {
                memory.ring.append(slot)
            } else if record.referenced {
                spaces[slot.space].entries.values[index].referenced = false
                memory.ring.append(slot)
            } else if keepsFiles {
                spaces[slot.space].entries.values[index].value = nil
                releaseFromMemory(record)
                counters.memoryEvictions += 1
            } else {
                spaces[slot.space].entries.remove(at: index)
                _ = forget(space: slot.space, key: slot.key, record: record)
                counters.memoryEvictions += 1
            }
        }
    }

    private mutating func compactRing() {
        let live = memory.ring.filter { slot in
            spaces[slot.space].entries[slot.key].map { $0.sequence == slot.sequence && $0.value != nil } ?? false
        }
        memory.ring = Deque(live)
    }
}
