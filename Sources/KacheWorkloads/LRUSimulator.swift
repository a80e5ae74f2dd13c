import DequeModule

/// Least recently used: a hit moves the object to the back of the queue, a
/// miss evicts the object at the front. What Nuke and Kingfisher do; Kache's
/// memory tier (CLOCK) approximates it.
///
/// A hit appends a fresh slot and leaves the old one stale rather than
/// unlinking it; the queue is compacted when stale slots outnumber live ones.
public struct LRUSimulator: CacheSimulator {
    public let capacity: Int
    /// Each resident key's expiry and the stamp of its live slot in `queue`.
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
            if object.expiresAt > now {
                moveToBack(key, expiresAt: object.expiresAt)
                return true
            }
            objects[key] = nil
        }
        while objects.count >= capacity, let slot = queue.popFirst() {
            if objects[slot.key]?.stamp == slot.stamp { objects[slot.key] = nil }
        }
        moveToBack(key, expiresAt: expiresAt)
        return false
    }

    private mutating func moveToBack(_ key: Int, expiresAt: Int64) {
        nextStamp += 1
        objects[key] = (expiresAt, nextStamp)
        queue.append(QueueSlot(key: key, stamp: nextStamp))
        if queue.count > 2 * objects.count + 1024 {
            queue = Deque(queue.filter { objects[$0.key]?.stamp == $0.stamp })
        }
    }
}
