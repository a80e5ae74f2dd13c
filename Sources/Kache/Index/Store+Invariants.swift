import KacheStorage

extension StoreState {
    /// Walks the whole state and traps on the first broken invariant. For
    /// tests, after every randomized step; O(n log n), never on a hot path.
    func checkInvariants() {
        var memoryBytes = 0
        var memoryValues = 0
        var raw = 0
        var recount = DiskBudget(limit: budget.limit, unit: budget.unit, keepsFiles: keepsFiles, segmentThreshold: budget.segmentThreshold)
        var pinned = false
        var locations: [RecordLocation] = []
        var counts = [Int](repeating: 0, count: spaces.count)
        var entries: [(space: Int, key: String, record: EntryRecord, ref: EntryRef)] = []
        index.forEach(withValues: true) { entries.append(($0, $1, $2, $3)) }
        for (space, key, record, _) in entries {
            precondition(space < spaces.count, "entry \(key) names key space \(space) of \(spaces.count)")
            counts[space] += 1
            precondition(record.sequence < nextSequence, "entry \(key) has a sequence from the future")
            if let value = record.value {
                precondition(value.count == record.rawSize, "entry \(key): value size \(value.count) != \(record.rawSize)")
                memoryBytes += MemoryBudget.charge(forValueOf: value.count)
                memoryValues += 1
            } else {
                precondition(keepsFiles && !record.isPendingWrite, "entry \(key) has no value and no file")
            }
            pinned = pinned || record.isPendingWrite
            raw += record.rawSize
            recount.account(replacing: nil, with: record, keyBytes: key.utf8.count)
            if let location = record.location { locations.append(location) }
        }
        segments?.checkLive(locations)
        spaces.checkInvariants()
        for (number, space) in spaces.enumerated() {
            precondition(space.count == counts[number], "key space \(space.name) counts \(space.count) entries, the index holds \(counts[number])")
            precondition(space.count <= space.capacity, "key space \(space.name) holds \(space.count) > capacity \(space.capacity)")
            // A reinstated entry may have two items for one version (harmless: the second goes stale).
            var seen = Set<UInt32>()
            let live = space.expiry.unorderedItems.filter { index.isCurrent($0.ref) && seen.insert($0.ref.handle).inserted }
            precondition(live.count == space.count, "key space \(space.name): \(space.count) entries but \(live.count) live heap items")
            for item in live {
                guard let (entrySpace, key, record) = index.entry(item.ref) else { continue }
                precondition(entrySpace == number, "heap of \(space.name) names \(key) of another key space")
                precondition(record.expiry == item.expiry, "entry \(key): heap expiry \(item.expiry) != \(record.expiry)")
            }
            if space.kind == .queue {
                let order = space.fifo.filter { index.isCurrent($0) }
                precondition(order.count == space.count, "queue \(space.name): order lists \(order.count) of \(space.count) items")
                let sequences = order.compactMap { index.sequence($0) }
                precondition(sequences == sequences.sorted(), "queue \(space.name): sequence numbers do not ascend")
            }
        }
        if keepsDiskQueues {
            // Every entry is in the disk queue its place names (a reinstated one maybe twice: harmless).
            let small = Set(diskQueues.small.map(\.packed))
            let main = Set(diskQueues.main.map(\.packed))
            for (_, key, record, ref) in entries {
                let queue = record.diskPlace.inMain ? main : small
                precondition(queue.contains(ref.packed), "entry \(key) is not in its disk queue")
            }
        }
        memory.checkTotals(bytes: memoryBytes, values: memoryValues, anyPinned: pinned)
        budget.checkTotals(against: recount)
        precondition(raw == rawBytes, "raw bytes \(rawBytes) != sum \(raw)")
    }
}

extension Kache {
    /// Checks every invariant of the in-memory state (tests only).
    func checkInvariants() {
        store.withLock { $0.checkInvariants() }
    }

    /// Simulates the process dying (SIGKILL): the write-behind queue of
    /// `async` durability is dropped unrun (`WriteBehind.abandon()`: a batch
    /// already being written finishes), nothing is saved, the lock is
    /// released. What was written before survives, as the page cache keeps it
    /// through a kill. Tests only; the real SIGKILL harness is in scripts/.
    func abandonForTesting() {
        store.withLock { $0.isClosed = true }
        records?.writeBehind?.abandon()
        disk?.abandon()
    }
}
