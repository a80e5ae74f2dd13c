/// First in, first out: a hit changes nothing, a miss evicts the object
/// inserted earliest. What Kache's disk budget does today when every entry
/// has the same TTL (it evicts the earliest expiry).
public struct FIFOSimulator: CacheSimulator {
    public let capacity: Int
    private var queue = StampedQueue()

    public init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one object")
        self.capacity = capacity
    }

    public var count: Int { queue.count }

    /// - Complexity: O(1) amortized.
    public mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool {
        if queue.liveExpiry(of: key, now: now) != nil { return true }
        queue.makeRoom(below: capacity)
        queue.place(key, expiresAt: expiresAt)
        return false
    }
}
