import DequeModule

/// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction",
/// SOSP'23), exactly as libCacheSim's `S3FIFO.c` runs it, so that this
/// baseline and `scripts/hit-ratio.sh` can be checked against each other:
///
/// - a small FIFO of 10 % of the capacity, a main FIFO of the rest, and a
///   ghost FIFO of as many keys as the main one holds (keys only, no values);
/// - a frequency per object: a hit adds one (counted up to 3, as a 2-bit counter);
/// - a miss inserts into main if the key is in the ghost (and takes it out),
///   else into small; before the first eviction, a miss that finds small
///   full goes to main (libCacheSim's `has_evicted`);
/// - to make room: from main when main holds more than its share or small is
///   empty, else from small;
/// - evicting from small: an object read at least twice while there
///   (frequency > 1, libCacheSim's `move-to-main-threshold=2`, the paper's
///   `t.freq > 1`) moves to main with its frequency reset to 0 (libCacheSim
///   re-creates it there; the paper's pseudocode keeps it); any other leaves,
///   and its key enters the ghost;
/// - evicting from main: an object of frequency > 0 goes to the back with
///   one less; one of 0 leaves.
///
/// One rounding differs from libCacheSim: the small FIFO holds at least one
/// object (libCacheSim rounds 10 % down, so below 10 objects it has none),
/// which only matters for the tiny capacities of the tests.
public struct S3FIFOSimulator: CacheSimulator {
    public let capacity: Int
    public let smallCapacity: Int
    public let mainCapacity: Int
    public let ghostCapacity: Int

    private struct Object {
        var expiresAt: Int64
        var frequency: Int
        var isInMain: Bool
        /// The stamp of the object's live slot in `small` or `main`.
        var stamp: UInt64
    }

    private var objects: [Int: Object] = [:]
    private var small = Deque<QueueSlot>()
    private var main = Deque<QueueSlot>()
    private var ghost = Deque<QueueSlot>()
    /// The keys in the ghost, with the stamp of their live slot in `ghost`.
    private var ghostStamps: [Int: UInt64] = [:]
    private(set) public var smallCount = 0
    private(set) public var mainCount = 0
    private var nextStamp: UInt64 = 0
    private var hasEvicted = false

    /// The hits on a key its ghost remembered, so far.
    private(set) public var ghostHits = 0

    public init(capacity: Int) {
        precondition(capacity >= 2, "S3-FIFO needs room for a small and a main queue")
        self.capacity = capacity
        smallCapacity = max(1, capacity / 10)
        mainCapacity = capacity - smallCapacity
        ghostCapacity = mainCapacity
    }

    public var count: Int { objects.count }

    /// - Complexity: O(1) amortized.
    public mutating func access(_ key: Int, now: Int64, expiresAt: Int64) -> Bool {
        if var object = objects[key] {
            if object.expiresAt > now {
                object.frequency = min(object.frequency + 1, 3)
                objects[key] = object
                return true
            }
            // Expired: it leaves without a ghost entry, as libCacheSim's find removes it.
            leave(key, object)
        }
        let wasInGhost = ghostStamps.removeValue(forKey: key) != nil
        if wasInGhost { ghostHits += 1 }
        while objects.count >= capacity { evict() }
        let toMain = wasInGhost || (!hasEvicted && smallCount >= smallCapacity)
        insert(key, Object(expiresAt: expiresAt, frequency: 0, isInMain: toMain, stamp: 0))
        return false
    }

    private mutating func insert(_ key: Int, _ object: Object) {
        var object = object
        nextStamp += 1
        object.stamp = nextStamp
        objects[key] = object
        if object.isInMain {
            main.append(QueueSlot(key: key, stamp: nextStamp))
            mainCount += 1
        } else {
            small.append(QueueSlot(key: key, stamp: nextStamp))
            smallCount += 1
        }
    }

    private mutating func leave(_ key: Int, _ object: Object) {
        objects[key] = nil
        if object.isInMain { mainCount -= 1 } else { smallCount -= 1 }
    }

    private mutating func evict() {
        hasEvicted = true
        if mainCount > mainCapacity || smallCount == 0 { evictFromMain() } else { evictFromSmall() }
    }

    /// Takes objects from small's front until one leaves the cache; the ones
    /// read twice move to main on the way (so it may end with none evicted, and
    /// main over its share, when small runs out: the next eviction then takes from main).
    private mutating func evictFromSmall() {
        while smallCount > 0, let slot = small.popFirst() {
            guard let object = objects[slot.key], object.stamp == slot.stamp else { continue }
            leave(slot.key, object)
            if object.frequency > 1 {
                insert(slot.key, Object(expiresAt: object.expiresAt, frequency: 0, isInMain: true, stamp: 0))
            } else {
                remember(slot.key)
                return
            }
        }
    }

    /// Takes objects from main's front until one leaves: a read one goes to
    /// the back with one less in its counter.
    private mutating func evictFromMain() {
        while mainCount > 0, let slot = main.popFirst() {
            guard var object = objects[slot.key], object.stamp == slot.stamp else { continue }
            leave(slot.key, object)
            if object.frequency > 0 {
                object.frequency -= 1
                insert(slot.key, object)
            } else {
                return
            }
        }
    }

    private mutating func remember(_ key: Int) {
        guard ghostCapacity > 0 else { return }
        nextStamp += 1
        ghostStamps[key] = nextStamp
        ghost.append(QueueSlot(key: key, stamp: nextStamp))
        while ghostStamps.count > ghostCapacity, let slot = ghost.popFirst() {
            if ghostStamps[slot.key] == slot.stamp { ghostStamps[slot.key] = nil }
        }
        if ghost.count > 2 * ghostStamps.count + 1024 {
            ghost = Deque(ghost.filter { ghostStamps[$0.key] == $0.stamp })
        }
    }
}

extension S3FIFOSimulator {
    /// Traps unless the queues' counts add up to the objects held, each queue
    /// within what the algorithm lets it hold, and the ghost within its share.
    public func checkInvariants() {
        precondition(smallCount + mainCount == objects.count, "queue counts \(smallCount) + \(mainCount) != \(objects.count) objects")
        precondition(objects.count <= capacity, "\(objects.count) objects over capacity \(capacity)")
        precondition(objects.values.filter(\.isInMain).count == mainCount, "main count is off")
        precondition(ghostStamps.count <= ghostCapacity, "ghost over its share")
        precondition(ghostStamps.keys.allSatisfy { objects[$0] == nil }, "a resident key is in the ghost")
    }
}
