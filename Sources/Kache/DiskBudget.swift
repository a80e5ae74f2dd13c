/// The byte limit on a cache directory's entry files, counted the way the
/// file system allocates them (as `du` reports), not by their lengths: a
/// 164-byte file occupies a whole 4 KiB block on ext4, and a cache that counts
/// lengths overruns its limit by 2× and more on small entries.
///
/// Each version of an entry is charged the allocation of its file when it is
/// inserted (before the file is written), so concurrent writers can never
/// overrun the limit together; the charge is released when the entry goes.
struct DiskBudget: Sendable {
    /// The most bytes the entry files may occupy, or nil for no limit.
    var limit: Int?
    /// The file system's allocation unit (`statvfs` block size).
    var unit: Int
    /// Bytes charged to live entries.
    var charged = 0
    /// Entries evicted to stay within the limit, and their bytes.
    var evictions: UInt64 = 0
    var evictedBytes = 0

    /// The bytes a file of `length` bytes occupies: whole allocation units.
    func allocation(forLength length: Int) -> Int {
        length == 0 ? 0 : (length + unit - 1) / unit * unit
    }

    /// Whether `bytes` more would go over the limit.
    func wouldExceed(adding bytes: Int) -> Bool {
        guard let limit else { return false }
        return charged + bytes > limit
    }
}

extension StoreState {
    /// Evicts entries in order of earliest expiry, across every key space, until
    /// `bytes` more fit within the disk budget.
    /// - Complexity: O(log n + key spaces) per evicted entry; never a scan.
    mutating func makeRoom(forBytes bytes: Int) -> [Removal] {
        var removals: [Removal] = []
        while budget.wouldExceed(adding: bytes), let (space, key, record) = popEarliestAcrossKeySpaces() {
            budget.evictions += 1
            budget.evictedBytes += record.charge
            removals.append(forget(space: space, key: key, record: record))
        }
        if !removals.isEmpty { mutations += 1 }
        return removals
    }

    /// Removes the entry that expires first in the whole cache (ties: written first).
    private mutating func popEarliestAcrossKeySpaces() -> (space: Int, key: String, record: EntryRecord)? {
        var best: (space: Int, item: ExpiryIndex.Item)?
        for index in spaces.indices {
            guard let item = spaces[index].earliestItem() else { continue }
            if best == nil || item < best!.item { best = (index, item) }
        }
        guard let best, let (key, record) = spaces[best.space].popEarliest() else { return nil }
        return (best.space, key, record)
    }
}
