import DequeModule

/// An eviction policy simulated over whole objects, for W9's baselines:
/// the cache holds at most `capacity` objects (W9's values are all 1 KiB, so
/// objects and bytes count alike), and is used cache-aside.
///
/// ```swift
/// var fifo = FIFOSimulator(capacity: 3)
/// fifo.access(7, now: 0, expiresAt: 60_000)   // false: a miss, and 7 is set
/// fifo.access(7, now: 1, expiresAt: 60_001)   // true
/// ```
///
/// Expiry, for trace (c): an object whose time is up counts as absent, so a
/// request for it is a miss and sets it afresh, as in libCacheSim (which
/// removes an expired object when a request finds it). The simulators do not
/// sweep: an expired object no request names keeps its slot until the policy
/// evicts it, where Kache's sweep would free the slot sooner.
public protocol CacheSimulator {
    /// The most objects the cache holds.
    var capacity: Int { get }
    /// The objects it holds now, expired or not.
    var count: Int { get }
    /// One request at `now` (milliseconds): true on a hit of a live object;
    /// on a miss, evicts as the policy says and inserts `key` to expire at `expiresAt`.
    mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool
}

/// One slot of a simulator's queue: the key, and the stamp of the insertion
/// that made it. A slot whose stamp is no longer the key's is stale (the key
/// moved or left), and is skipped when it reaches the front, so that taking a
/// key out of the middle of a queue costs O(1).
struct QueueSlot {
    var key: Int
    var stamp: UInt64
}

/// The resident objects in queue order, for FIFO and LRU, which differ only
/// in what a hit does (LRU `place`s the key again).
struct StampedQueue {
    /// Each resident key's expiry and the stamp of its live slot in `queue`.
    private var objects: [Int: (expiresAt: Int64, stamp: UInt64)] = [:]
    private var queue = Deque<QueueSlot>()
    private var nextStamp: UInt64 = 0

    var count: Int { objects.count }

    /// The expiry of `key` if it is resident and live at `now`; an expired one is taken out.
    mutating func liveExpiry(of key: Int, now: Int64) -> Int64? {
        guard let object = objects[key] else { return nil }
        if object.expiresAt > now { return object.expiresAt }
        objects[key] = nil
        return nil
    }

    /// Evicts from the front until fewer than `capacity` objects are resident.
    mutating func makeRoom(below capacity: Int) {
        while objects.count >= capacity, let slot = queue.popFirst() {
            if objects[slot.key]?.stamp == slot.stamp { objects[slot.key] = nil }
        }
    }

    /// Puts `key` at the back; a slot it had before goes stale.
    /// - Complexity: O(1) amortized: the queue is compacted when stale slots outnumber live ones.
    mutating func place(_ key: Int, expiresAt: Int64) {
        nextStamp += 1
        objects[key] = (expiresAt, nextStamp)
        queue.append(QueueSlot(key: key, stamp: nextStamp))
        if queue.count > 2 * objects.count + 1024 {
            queue = Deque(queue.filter { objects[$0.key]?.stamp == $0.stamp })
        }
    }
}
