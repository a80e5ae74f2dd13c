/// Least recently used: a hit moves the object to the back of the queue, a
/// miss evicts the object at the front. What Nuke and Kingfisher do.
///
/// A hit appends a fresh slot and leaves the old one stale rather than
/// unlinking it (`StampedQueue`).
public struct LRUSimulator: CacheSimulator {
    public let capacity: Int
    private var queue = StampedQueue()

    public init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one object")
        self.capacity = capacity
    }

    public var count: Int { queue.count }

    /// - Complexity: O(1) amortized.
    public mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool {
        if let expiry = queue.liveExpiry(of: key, now: now) {
            queue.place(key, expiresAt: expiry)
            return true
        }
        queue.makeRoom(below: capacity)
        queue.place(key, expiresAt: expiresAt)
        return false
    }
}
