extension StoreState {
    /// Walks the whole state and traps on the first broken invariant. For
    /// tests, after every randomized step; O(n log n), never on a hot path.
    func checkInvariants() {
        var memoryBytes = 0
        var memoryValues = 0
        var raw = 0
        var files = 0
        var fileBytes = 0
        var charged = 0
        var keyBytes = 0
        for (index, space) in spaces.enumerated() {
            precondition(spaceIndex[space.name] == index, "key space \(space.name) is not indexed at \(index)")
            precondition(space.count <= space.capacity, "key space \(space.name) holds \(space.count) > capacity \(space.capacity)")
            let live = Set(space.expiry.unorderedItems.filter(space.isLive).map(\.key))
            precondition(live.count == space.entries.count, "key space \(space.name): \(space.entries.count) entries but \(live.count) live heap items")
            for (key, record) in space.entries {
                precondition(live.contains(key), "entry \(key) has no live item in the expiry index")
                precondition(record.sequence < nextSequence, "entry \(key) has a sequence from the future")
                if let value = record.value {
                    precondition(value.count == record.rawSize, "entry \(key): value size \(value.count) != \(record.rawSize)")
                    memoryBytes += value.count
                    memoryValues += 1
                } else {
                    precondition(keepsFiles && !record.isPendingWrite, "entry \(key) has no value and no file")
                }
                raw += record.rawSize
                charged += record.charge
                keyBytes += key.utf8.count
                if record.fileSize > 0 {
                    files += 1
                    fileBytes += record.fileSize
                }
            }
            if space.kind == .queue {
                let order = space.keysInQueueOrder
                precondition(order.count == space.entries.count, "queue \(space.name): order lists \(order.count) of \(space.entries.count) items")
                let sequences = order.map { space.entries[$0]!.sequence }
                precondition(sequences == sequences.sorted(), "queue \(space.name): sequence numbers do not ascend")
            }
        }
        precondition(memoryBytes == memory.bytes, "memory bytes \(memory.bytes) != sum of values \(memoryBytes)")
        precondition(memoryValues == memory.values, "memory values \(memory.values) != \(memoryValues)")
        precondition(raw == rawBytes, "raw bytes \(rawBytes) != sum \(raw)")
        precondition(charged == budget.charged, "disk budget charged \(budget.charged) != sum \(charged)")
        precondition(keyBytes == budget.keyBytes, "disk budget key bytes \(budget.keyBytes) != sum \(keyBytes)")
        if let limit = budget.limit { precondition(charged <= limit, "disk budget \(limit) exceeded: \(charged)") }
        precondition(files == filesOnDisk && fileBytes == bytesOnDisk, "disk totals \(filesOnDisk)/\(bytesOnDisk) != \(files)/\(fileBytes)")
        precondition(!memory.isOver || memory.ring.isEmpty || spaces.contains { $0.entries.values.contains { $0.isPendingWrite } },
                     "memory over budget with nothing pinned")
    }
}

extension Kache {
    /// Checks every invariant of the in-memory state (tests only).
    func checkInvariants() {
        store.withLock { $0.checkInvariants() }
    }

    /// Simulates the process dying: the background writer stops after its
    /// queue, nothing is saved, the lock is released. Tests only; the real
    /// SIGKILL harness is in scripts/.
    func abandonForTesting() {
        store.withLock { $0.isClosed = true }
        writeBehind?.stop()
        disk?.abandon()
    }
}
