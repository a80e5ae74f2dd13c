import DequeModule

/// S3-FIFO's ghost (`MemoryBudget`): the keys whose values left the small
/// queue unread, remembered by their hash, oldest forgotten first.
///
/// It remembers as many keys as their values' charges add up to within
/// `limit` (libCacheSim's S3-FIFO gives the ghost nine tenths of the cache's
/// bytes), and never more than `maximumCount`: a remembered key costs about
/// 64 bytes of its own (its hash in the queue and in the lookup), so tiny
/// values must not let it grow past a sixteenth of the budget.
struct GhostQueue: Sendable {
    private(set) var limit: Int
    private(set) var maximumCount: Int
    /// Charges of the keys remembered now.
    private(set) var bytes = 0
    /// Oldest first; an item whose serial is no longer its key's in `members` was forgotten.
    private var order = Deque<(hash: Int, serial: UInt64)>()
    private var members: [Int: (serial: UInt64, charge: Int)] = [:]
    private var nextSerial: UInt64 = 0

    init(limit: Int, maximumCount: Int) {
        self.limit = max(limit, 0)
        self.maximumCount = max(maximumCount, 0)
    }

    var count: Int { members.count }

    /// Sets new bounds, which the next `add` keeps (the disk budget's room
    /// for records, and its entries, change as it fills).
    mutating func resize(limit: Int, maximumCount: Int) {
        self.limit = max(limit, 0)
        self.maximumCount = max(maximumCount, 0)
    }

    /// Remembers the key hashing to `hash`, whose value was charged `charge`
    /// bytes; a key remembered already keeps its place.
    /// - Complexity: O(1) amortized.
    mutating func add(_ hash: Int, charge: Int) {
        guard members[hash] == nil else { return }
        members[hash] = (nextSerial, charge)
        order.append((hash, nextSerial))
        nextSerial += 1
        bytes += charge
        while bytes > limit || members.count > maximumCount, let oldest = order.popFirst() {
            guard let member = members[oldest.hash], member.serial == oldest.serial else { continue }
            members[oldest.hash] = nil
            bytes -= member.charge
        }
        // Keys taken back out (`remove`) leave their items behind until they come round.
        if order.count > 2 * members.count + 1024 {
            order = Deque(order.filter { members[$0.hash]?.serial == $0.serial })
        }
    }

    /// Whether the key hashing to `hash` was remembered; it is forgotten.
    mutating func remove(_ hash: Int) -> Bool {
        guard !members.isEmpty, let member = members.removeValue(forKey: hash) else { return false }
        bytes -= member.charge
        return true
    }

    mutating func removeAll() {
        self = GhostQueue(limit: limit, maximumCount: maximumCount)
    }
}
