extension StoreState {
    /// The manifest of the index as it is now.
    /// - Complexity: O(entries)
    func manifest(savedAt: Timestamp) -> Manifest {
        Manifest(
            savedAt: savedAt,
            nextSequence: nextSequence,
            diskBudget: budget.limit,
            spaces: spaces.map { space in
                Manifest.Space(
                    name: space.name, kind: space.kind, capacity: space.capacity, counters: space.counters,
                    entries: space.entries.map { key, record in
                        Manifest.Entry(
                            key: key, expiry: record.expiry, sequence: record.sequence,
                            rawSize: record.rawSize, fileSize: record.fileSize
                        )
                    }
                )
            }
        )
    }

    /// Forgets every entry (key spaces and counters stay) before a restore.
    mutating func resetIndex() {
        for index in spaces.indices { spaces[index].removeAll() }
        memory.bytes = 0
        memory.values = 0
        memory.ring.removeAll()
        filesOnDisk = 0
        bytesOnDisk = 0
        rawBytes = 0
        budget.charged = 0
        budget.keyBytes = 0
    }

    /// Drops every value from memory (their files stay).
    mutating func releaseAllValues() {
        for space in spaces.indices {
            for index in spaces[space].entries.indices where spaces[space].entries.values[index].value != nil {
                spaces[space].entries.values[index].value = nil
            }
        }
        memory.bytes = 0
        memory.values = 0
        memory.ring.removeAll()
    }

    /// Restores the key spaces a manifest names (a key space that exists
    /// already keeps its kind and capacity) and, when `withEntries`, their entries.
    mutating func restoreKeySpaces(from manifest: Manifest, withEntries: Bool) {
        nextSequence = max(nextSequence, manifest.nextSequence)
        for saved in manifest.spaces {
            let index: Int
            if let existing = spaceIndex[saved.name] {
                guard spaces[existing].kind == saved.kind else { continue }
                index = existing
            } else {
                spaces.append(KeySpace(name: saved.name, kind: saved.kind, capacity: saved.capacity))
                index = spaces.count - 1
                spaceIndex[saved.name] = index
            }
            spaces[index].counters = saved.counters
            guard withEntries else { continue }
            // Queue order is write order: restore by sequence.
            let entries = saved.kind == .queue ? saved.entries.sorted { $0.sequence < $1.sequence } : saved.entries
            for entry in entries {
                restore(space: index, key: entry.key, expiry: entry.expiry, sequence: entry.sequence,
                        rawSize: entry.rawSize, fileSize: entry.fileSize)
            }
        }
    }

    /// Restores entries from the headers of their files. A key space not known
    /// yet is created with the kind its files say, unbounded until the
    /// application opens it again with a capacity.
    mutating func restore(scannedFiles: [DiskStore.ScannedFile]) {
        for file in scannedFiles.sorted(by: { $0.header.sequence < $1.header.sequence }) {
            let header = file.header
            let index: Int
            if let existing = spaceIndex[header.space] {
                guard spaces[existing].kind == header.kind else { continue }
                index = existing
            } else {
                spaces.append(KeySpace(name: header.space, kind: header.kind, capacity: .max))
                index = spaces.count - 1
                spaceIndex[header.space] = index
            }
            restore(space: index, key: header.key, expiry: header.expiry, sequence: header.sequence,
                    rawSize: header.rawLength, fileSize: file.fileLength)
        }
    }
}
