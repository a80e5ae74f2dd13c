/// The bookkeeping of the original Kache (2012) for a Pool: its keys in an
/// array kept sorted by expiry, each insert found by a scan from the end.
///
/// Exists twice over: as the baseline the heap-based Pool of the engine
/// should beat (inserts here are O(n)), and as the reference model its
/// randomized tests compare against, which is why it is written for
/// obviousness, not speed.
///
/// Rules, in the order one `set` applies them:
/// 1. Sweep: keys whose expiry is at or before `now` are removed from the
///    front of the array (they are all there, the array being sorted).
/// 2. If `key` is still present, its old position is removed (by scan) and
///    nothing is evicted. A key that had expired was swept in step 1, so
///    setting it again is an insert of a new key.
/// 3. Otherwise, if the Pool is at capacity, index 0 (the earliest expiry;
///    of equal expiries, the one set first) is evicted.
/// 4. The key is inserted after every key whose expiry is at or before its
///    own, so that of equal expiries the one set last goes last. A key set
///    with an expiry already past stays until the next `set` sweeps it.
///
/// ```swift
/// var pool = SortedArrayPool(capacity: 2)
/// _ = pool.set(key: "a", expiry: 10, now: 0)
/// _ = pool.set(key: "b", expiry: 5, now: 0)
/// let removed = pool.set(key: "c", expiry: 20, now: 0)   // removed.evicted == ["b"]
/// ```
public struct SortedArrayPool: Sendable {
    /// The keys one `set` removed, each list in the order they went.
    public struct Removed: Equatable, Sendable {
        /// Keys swept because their expiry had passed.
        public var expired: [String] = []
        /// Keys evicted to make room (at most one per `set`).
        public var evicted: [String] = []

        /// Creates a record of removals.
        public init(expired: [String] = [], evicted: [String] = []) {
            self.expired = expired
            self.evicted = evicted
        }
    }

    /// A key and its expiry, as the array holds them.
    struct Entry: Sendable {
        var key: String
        var expiry: Int64
    }

    /// The most keys the Pool holds.
    public let capacity: Int
    /// Every key with its expiry, ascending by expiry, equal expiries in set order.
    private(set) var entries: [Entry] = []
    /// The expiry of every key in `entries`, for lookups.
    private(set) var expiries: [String: Int64] = [:]

    /// Creates an empty Pool that holds at most `capacity` keys.
    public init(capacity: Int) {
        precondition(capacity > 0, "a Pool holds at least one key")
        self.capacity = capacity
    }

    /// The number of keys held.
    public var count: Int { entries.count }

    /// The keys, earliest expiry first (equal expiries: set first, first).
    public var keysByExpiry: [String] { entries.map(\.key) }

    /// The expiry of `key`, if the Pool holds it (expired or not: only a
    /// `set` sweeps).
    /// - Complexity: O(1).
    public func expiry(forKey key: String) -> Int64? { expiries[key] }

    /// Sets `key` to expire at `expiry`, applying the rules above, and returns
    /// the keys it removed.
    /// - Complexity: O(n).
    public mutating func set(key: String, expiry: Int64, now: Int64) -> Removed {
        var removed = Removed()

        let expiredCount = entries.firstIndex { $0.expiry > now } ?? entries.count
        for entry in entries[..<expiredCount] {
            removed.expired.append(entry.key)
            expiries[entry.key] = nil
        }
        entries.removeFirst(expiredCount)

        if expiries[key] != nil {
            entries.remove(at: entries.firstIndex { $0.key == key }!)
        } else if entries.count == capacity {
            let earliest = entries.removeFirst()
            removed.evicted.append(earliest.key)
            expiries[earliest.key] = nil
        }

        var slot = entries.count
        while slot > 0, entries[slot - 1].expiry > expiry {
            slot -= 1
        }
        entries.insert(Entry(key: key, expiry: expiry), at: slot)
        expiries[key] = expiry
        return removed
    }
}
