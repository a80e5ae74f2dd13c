extension SortedArrayPool {
    /// Traps unless the Pool is consistent: no more keys than its capacity,
    /// expiries ascending, and the lookup table holding exactly the keys of
    /// the array with the same expiries. Tests call it after every step.
    /// - Complexity: O(n).
    public func checkInvariants() {
        precondition(entries.count <= capacity, "\(entries.count) keys in a Pool of capacity \(capacity)")
        precondition(zip(entries, entries.dropFirst()).allSatisfy { $0.expiry <= $1.expiry }, "expiries out of order")
        precondition(expiries.count == entries.count, "\(expiries.count) lookups for \(entries.count) keys")
        for entry in entries {
            precondition(expiries[entry.key] == entry.expiry, "the lookup of \(entry.key) disagrees with the array")
        }
    }
}
