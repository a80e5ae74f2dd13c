import Dispatch
import HeapModule
import KacheStorage
import Synchronization

/// The expiry order of one key space: min-heaps of (expiry, entry), 16 bytes an item.
///
/// It serves both sweeping (pop while the earliest has passed) and Pool
/// eviction (pop the earliest). Overwritten and removed keys are deleted
/// lazily: their old items stay in the heap and are discarded when they reach
/// the top, because the caller's `isLive` check finds that their `EntryRef`
/// names a version no longer current. `rebuild(from:)` bounds the garbage.
struct ExpiryIndex: Sendable {
    /// One version of one key. Ordered by expiry, then by write order, so that
    /// of two keys expiring together the one written first goes first.
    struct Item: Comparable, Sendable {
        var expiry: Timestamp
        var ref: EntryRef

        static func < (a: Item, b: Item) -> Bool {
            a.expiry != b.expiry ? a.expiry < b.expiry : EntryRef.writtenBefore(a.ref, b.ref)
        }

        static func == (a: Item, b: Item) -> Bool {
            a.expiry == b.expiry && a.ref == b.ref
        }
    }

    /// Two heaps, not one, and the earliest item is the lesser of their
    /// least: a restore builds them on two cores at once. Built as one, a
    /// million items were gathered and heapified on one core after the rest
    /// of the open had run on both (about 50 ms of W8's 350 to ready).
    private var heaps = (Heap<Item>(), Heap<Item>())

    /// Items in the heaps, live or stale.
    var count: Int { heaps.0.count + heaps.1.count }

    /// The earliest expiry of any item, live or stale: no live item expires sooner.
    var leastExpiry: Timestamp? {
        switch (heaps.0.min, heaps.1.min) {
        case let (first?, second?): min(first.expiry, second.expiry)
        case let (first, second): (first ?? second)?.expiry
        }
    }

    /// Records a version of an entry, in the smaller heap.
    /// - Complexity: O(log n)
    mutating func insert(_ ref: EntryRef, expiry: Timestamp) {
        let item = Item(expiry: expiry, ref: ref)
        if heaps.0.count <= heaps.1.count { heaps.0.insert(item) } else { heaps.1.insert(item) }
    }

    /// Records many versions at once (a restore), built into two heaps on
    /// two cores: `halves` are each half's arrays of items, joined into one
    /// array per heap there. Into empty heaps, each array becomes its heap's
    /// storage, not copied into it.
    /// - Complexity: O(n + k), or O(k log(n + k)) when k is much smaller than n.
    mutating func insert(halves: ([[Item]], [[Item]])) {
        guard count == 0 else {
            for part in halves.0 { heaps.0.insert(contentsOf: part) }
            for part in halves.1 { heaps.1.insert(contentsOf: part) }
            return
        }
        let built = Mutex<(Heap<Item>?, Heap<Item>?)>((nil, nil))
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let parts = half == 0 ? halves.0 : halves.1
            var items: [Item] = []
            items.reserveCapacity(parts.reduce(0) { $0 + $1.count })
            for part in parts { items += part }
            let heap = Heap(consume items)
            built.withLock { if half == 0 { $0.0 = heap } else { $0.1 = heap } }
        }
        heaps = built.withLock { ($0.0 ?? Heap(), $0.1 ?? Heap()) }
    }

    /// The earliest live item, discarding stale items above it in either heap.
    /// - Complexity: O(log n) per discarded item, O(1) otherwise.
    mutating func earliest(isLive: (Item) -> Bool) -> Item? {
        while let top = heaps.0.min, !isLive(top) { heaps.0.removeMin() }
        while let top = heaps.1.min, !isLive(top) { heaps.1.removeMin() }
        switch (heaps.0.min, heaps.1.min) {
        case let (first?, second?): return min(first, second)
        case let (first, second): return first ?? second
        }
    }

    /// Removes and returns the earliest live item.
    /// - Complexity: O(log n) amortized.
    mutating func popEarliest(isLive: (Item) -> Bool) -> Item? {
        guard let item = earliest(isLive: isLive) else { return nil }
        if heaps.0.min == item { heaps.0.removeMin() } else { heaps.1.removeMin() }
        return item
    }

    /// Whether stale items outnumber the live ones enough to rebuild.
    func needsCompaction(liveCount: Int) -> Bool {
        count > 2 * liveCount + 1024
    }

    /// Replaces the heap with `live` items, dropping the stale ones, so that
    /// memory stays proportional to the live entries.
    /// - Complexity: O(n); `needsCompaction` makes it at most once per n inserts.
    mutating func rebuild(from live: [Item]) {
        let half = live.count / 2
        heaps = (Heap(live[..<half]), Heap(live[half...]))
    }

    /// Empties the index.
    mutating func removeAll() {
        heaps = (Heap(), Heap())
    }

    /// Every item in the heaps, in no particular order (for invariant checks).
    var unorderedItems: [Item] { heaps.0.unordered + heaps.1.unordered }
}
