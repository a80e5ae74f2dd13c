import DequeModule

/// First in, first out: a hit changes nothing, a miss evicts the object
/// inserted earliest. What Kache's disk budget does today when every entry
/// has the same TTL (it evicts the earliest expiry).
public struct FIFOSimulator: CacheSimulator {
    public let capacity: Int
    /// Each resident key's expiry and the stamp of its slot in `queue`.
    private var objects: [Int: (expiresAt: Int64, stamp: UInt64)] = [:]
    private var queue = Deque<QueueSlot>()
    private var nextStamp: UInt64 = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one object")
        self.capacity = capacity
    }

    public var count: Int { objects.count }

    /// - Complexity: O(1) amortized.
    public mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool {
        if let object = objects[key] {
            if object.expiresAt > now { return true }
            objects[key] = nil
        }
        while objects.count >= capacity, let slot = queue.popFirst() {
            if objects[slot.key]?.stamp == slot.stamp { objects[slot.key] = nil }
        }
        nextStamp += 1
        objects[key] = (expiresAt, nextStamp)
        queue.append(QueueSlot(key: key, stamp: nextStamp))
        return false
    }
}
