import HeapModule
import KacheStorage

/// The expiry order of one key space: a min-heap of (expiry, entry), 16 bytes an item.
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

    private(set) var heap = Heap<Item>()

    /// Items in the heap, live or stale.
    var count: Int { heap.count }

    /// The earliest expiry of any item, live or stale: no live item expires sooner.
    var leastExpiry: Timestamp? { heap.min?.expiry }

    /// Records a version of an entry.
    /// - Complexity: O(log n)
    mutating func insert(_ ref: EntryRef, expiry: Timestamp) {
        heap.insert(Item(expiry: expiry, ref: ref))
    }

    /// Records many versions at once (a restore).
    /// - Complexity: O(n + k), or O(k log(n + k)) when k is much smaller than n.
    mutating func insert(contentsOf items: consuming [Item]) {
        // Into an empty heap (a restore), the array becomes the heap's storage,
        // not copied into it, when no one else holds it (hence `consuming`).
        if heap.isEmpty { heap = Heap(consume items) } else { heap.insert(contentsOf: items) }
    }

    /// The earliest live item, discarding stale items above it.
    /// - Complexity: O(log n) per discarded item, O(1) otherwise.
    mutating func earliest(isLive: (Item) -> Bool) -> Item? {
        while let top = heap.min {
            if isLive(top) { return top }
            heap.removeMin()
        }
        return nil
    }

    /// Removes and returns the earliest live item.
    /// - Complexity: O(log n) amortized.
    mutating func popEarliest(isLive: (Item) -> Bool) -> Item? {
        guard let item = earliest(isLive: isLive) else { return nil }
        heap.removeMin()
        return item
    }

    /// Whether stale items outnumber the live ones enough to rebuild.
    func needsCompaction(liveCount: Int) -> Bool {
        heap.count > 2 * liveCount + 1024
    }

    /// Replaces the heap with `live` items, dropping the stale ones, so that
    /// memory stays proportional to the live entries.
    /// - Complexity: O(n); `needsCompaction` makes it at most once per n inserts.
    mutating func rebuild(from live: [Item]) {
        heap = Heap(live)
    }

    /// Empties the index.
    mutating func removeAll() {
        heap = Heap()
    }

    /// Every item in the heap, in no particular order (for invariant checks).
    var unorderedItems: [Item] { heap.unordered }
}
