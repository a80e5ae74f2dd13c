/// A set of hash slots, one bit per slot (2 KiB whatever it holds): the slots
/// a node serves, or those whose invalidations may have been missed.
struct SlotSet: Sendable, Equatable {
    private var words = [UInt64](repeating: 0, count: HashSlot.count / 64)

    /// An empty set.
    init() {}

    /// The slots in `ranges` (inclusive, as `CLUSTER SLOTS` gives them).
    init(_ ranges: [ClosedRange<Int>]) {
        for range in ranges {
            for slot in range where (0..<HashSlot.count).contains(slot) { insert(HashSlot(slot)) }
        }
    }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// - Complexity: O(1).
    func contains(_ slot: HashSlot) -> Bool {
        words[slot.value >> 6] & (1 << UInt64(slot.value & 63)) != 0
    }

    /// How many slots the set holds.
    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    mutating func insert(_ slot: HashSlot) {
        words[slot.value >> 6] |= 1 << UInt64(slot.value & 63)
    }

    mutating func formUnion(_ other: SlotSet) {
        for index in words.indices { words[index] |= other.words[index] }
    }

    mutating func subtract(_ other: SlotSet) {
        for index in words.indices { words[index] &= ~other.words[index] }
    }

    /// The slots for which `isIncluded` is true.
    func filter(_ isIncluded: (HashSlot) -> Bool) -> SlotSet {
        var kept = SlotSet()
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 {
                let slot = HashSlot(index << 6 | bit)
                if isIncluded(slot) { kept.insert(slot) }
            }
        }
        return kept
    }
}
