import HeapModule

/// Earliest expiry: a full cache evicts the object whose time runs out
/// first (ties: the first inserted), so an expired object always goes before
/// a live one. It is Kache's rule for a full Pool, and was its disk budget's
/// before S3-FIFO; W9 reads trace (c), whose TTLs differ, against it.
public struct EarliestExpirySimulator: CacheSimulator {
    public let capacity: Int
    /// Each resident key's expiry and the stamp of its live item in `heap`.
    private var objects: [Int: (expiresAt: Int64, stamp: UInt64)] = [:]
    private var heap = Heap<Item>()
    private var nextStamp: UInt64 = 0

    private struct Item: Comparable {
        var expiresAt: Int64
        var stamp: UInt64
        var key: Int

        static func < (a: Item, b: Item) -> Bool {
            (a.expiresAt, a.stamp) < (b.expiresAt, b.stamp)
        }
    }

    public init(capacity: Int) {
        precondition(capacity > 0, "a cache holds at least one object")
        self.capacity = capacity
    }

    public var count: Int { objects.count }

    /// - Complexity: O(log n) amortized.
    public mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool {
        if let object = objects[key] {
            if object.expiresAt > now { return true }
            objects[key] = nil
        }
        while objects.count >= capacity, let item = heap.popMin() {
            if objects[item.key]?.stamp == item.stamp { objects[item.key] = nil }
        }
        nextStamp += 1
        objects[key] = (expiresAt, nextStamp)
        heap.insert(Item(expiresAt: expiresAt, stamp: nextStamp, key: key))
        // Items of keys that left on a request outnumbering the live ones: drop them.
        if heap.count > 2 * objects.count + 1024 {
            heap = Heap(heap.unordered.filter { objects[$0.key]?.stamp == $0.stamp })
        }
        return false
    }
}
