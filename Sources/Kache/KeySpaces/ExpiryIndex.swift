import Dispatch
import HeapModule
import KacheStorage

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
    /// least: a restore builds one from each half of its items on two cores
    /// at once. Built as one, a million items were gathered and heapified on
    /// one core after the rest of the open had run on both (about 50 ms of
    /// W8's 350 to ready). New items go to `heap` alone, so that while
    /// `restored` is empty (in a cache never restored, always) every step is
    /// the one-heap step it was: spread over both, W4's inserts, which evict
    /// from a full Pool, took 4.7 % more instructions.
    private var heap = Heap<Item>()
    private var restored = Heap<Item>()

    /// Items in the heaps, live or stale.
    var count: Int { heap.count + restored.count }

    /// The earliest expiry of any item, live or stale: no live item expires sooner.
    @inline(__always)
    var leastExpiry: Timestamp? {
        guard let other = restored.min else { return heap.min?.expiry }
        return min(heap.min?.expiry ?? other.expiry, other.expiry)
    }

    /// Records a version of an entry.
    /// - Complexity: O(log n)
    mutating func insert(_ ref: EntryRef, expiry: Timestamp) {
        heap.insert(Item(expiry: expiry, ref: ref))
    }

    /// Records many versions at once (a restore), built into two heaps on
    /// two cores, one from each half. Into empty heaps, each half becomes its
    /// heap's storage, not copied into it.
    /// - Complexity: O(n + k), or O(k log(n + k)) when k is much smaller than n.
    mutating func insert(halves first: consuming [Item], _ second: consuming [Item]) {
        guard count == 0 else {
            heap.insert(contentsOf: first)
            restored.insert(contentsOf: second)
            return
        }
        // Each worker takes its half out of the box, so that it holds the only reference to it.
        var halves: [[Item]] = []
        halves.reserveCapacity(2)
        halves.append(consume first)
        halves.append(consume second)
        // `Locked`, not a bare `Mutex`: its hand-offs are announced to ThreadSanitizer,
        // which reported the two halves' stores under a `Mutex` as a race.
        let built = Locked<(halves: [[Item]], heaps: [Heap<Item>?])>((consume halves, [nil, nil]))
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            var items: [Item] = []
            built.withLock { swap(&items, &$0.halves[half]) }
            let heap = Heap(consume items)
            built.withLock { $0.heaps[half] = heap }
        }
        (heap, restored) = built.withLock { ($0.heaps[0] ?? Heap(), $0.heaps[1] ?? Heap()) }
    }

    /// The earliest live item, discarding stale items above it in either heap.
    /// Inlined, as the one-heap step was: called apart, it cost every
    /// eviction from a full Pool a call and a retain.
    /// - Complexity: O(log n) per discarded item, O(1) otherwise.
    @inline(__always)
    mutating func earliest(isLive: (Item) -> Bool) -> Item? {
        while let top = heap.min, !isLive(top) { heap.removeMin() }
        return restored.isEmpty ? heap.min : earliestOfBoth(isLive: isLive)
    }

    private mutating func earliestOfBoth(isLive: (Item) -> Bool) -> Item? {
        while let top = restored.min, !isLive(top) { restored.removeMin() }
        switch (heap.min, restored.min) {
        case let (first?, second?): return min(first, second)
        case let (first, second): return first ?? second
        }
    }

    /// Removes and returns the earliest live item.
    /// - Complexity: O(log n) amortized.
    mutating func popEarliest(isLive: (Item) -> Bool) -> Item? {
        guard let item = earliest(isLive: isLive) else { return nil }
        if restored.isEmpty || heap.min == item { heap.removeMin() } else { restored.removeMin() }
        return item
    }

    /// Whether stale items outnumber the live ones enough to rebuild.
    func needsCompaction(liveCount: Int) -> Bool {
        count > 2 * liveCount + 1024
    }

    /// Replaces the heaps with `live` items, dropping the stale ones, so that
    /// memory stays proportional to the live entries.
    /// - Complexity: O(n); `needsCompaction` makes it at most once per n inserts.
    mutating func rebuild(from live: [Item]) {
        heap = Heap(live)
        restored = Heap()
    }

    /// Empties the index.
    mutating func removeAll() {
        heap = Heap()
        restored = Heap()
    }

    /// Every item in the heaps, in no particular order (for invariant checks).
    var unorderedItems: [Item] { heap.unordered + restored.unordered }
}
