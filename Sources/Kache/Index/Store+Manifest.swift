import KacheStorage
/// The index encoded as the manifest at one moment, with what is needed
/// later to tell whether the files still match it.
struct ManifestSnapshot: Sendable {
    var bytes: [UInt8]
    /// The first sequence the snapshot does not cover: the checkpoint.
    var nextSequence: UInt64
    /// `StoreState.mutations` when the snapshot was taken.
    var mutations: UInt64
    /// Whether some entry's newest version was not on disk yet. Such a
    /// manifest names a version it has no record of, so it is only a
    /// checkpoint for the rebuild, never an index to trust as it is.
    var listsPendingVersion: Bool
}

extension StoreState {
    /// The manifest of the index as it is now, encoded, without a `Manifest`
    /// value in between (`ManifestEncoder` says why). An entry settled in a
    /// segment (its version written there) is listed by its sequence alone;
    /// the others (files of their own, versions being written) in full.
    /// - Complexity: O(entries): two passes over the index, and a sort of the settled sequences.
    func manifestSnapshot(savedAt: Timestamp) -> ManifestSnapshot {
        var entryCounts = [Int](repeating: 0, count: spaces.count)
        var keyBytes = [Int](repeating: 0, count: spaces.count)
        var settledSequences: [UInt64] = []
        settledSequences.reserveCapacity(entryCount)
        index.forEach(withValues: false) { space, key, record, _ in
            if let location = record.location, Self.isSettledInSegment(record, at: location) {
                settledSequences.append(record.sequence)
            } else {
                entryCounts[space] += 1
                keyBytes[space] += key.utf8.count
            }
        }
        let summaries = spaces.indices.map { space in
            ManifestEncoder.Space(
                name: spaces[space].name, kind: spaces[space].kind, capacity: spaces[space].capacity,
                counters: spaces[space].counters, entryCount: entryCounts[space], keyBytes: keyBytes[space]
            )
        }
        var listsPendingVersion = false
        let settled = SettledSequences.encoded(inAnyOrder: &settledSequences)
        settledSequences = []
        let bytes = ManifestEncoder.encode(
            savedAt: savedAt, nextSequence: nextSequence, diskBudget: budget.limit, spaces: summaries, settled: settled
        ) { emit in
            index.forEach(withValues: false) { space, key, record, _ in
                if let location = record.location, Self.isSettledInSegment(record, at: location) { return }
                if record.isPendingWrite { listsPendingVersion = true }
                emit(space, Manifest.Entry(
                    key: key, expiry: record.expiry, sequence: record.sequence,
                    rawSize: record.rawSize, location: record.location,
                    diskSequence: record.location != nil ? record.diskSequence : record.sequence
                ))
            }
        }
        return ManifestSnapshot(bytes: bytes, nextSequence: nextSequence, mutations: mutations, listsPendingVersion: listsPendingVersion)
    }

    /// Whether `record`'s current version is written, at `location` in a segment.
    private static func isSettledInSegment(_ record: EntryRecord, at location: RecordLocation) -> Bool {
        !location.isOwnFile && !record.isPendingWrite && record.diskSequence == record.sequence
    }

    /// Forgets every entry (key spaces and counters stay) before a restore.
    mutating func resetIndex() {
        index.removeAll(space: nil)
        for space in spaces.indices { spaces[space].removeAll() }
        memory.forgetValues()
        rawBytes = 0
        budget.forgetEntries()
        diskQueues.removeAll()
    }

    /// Drops every value from memory (their files stay).
    mutating func releaseAllValues() {
        index.releaseAllValues()
        memory.forgetValues()
    }

    /// Restores the key spaces a manifest names (a key space that exists
    /// already keeps its kind and capacity) and, when `withEntries`, their entries.
    mutating func restoreKeySpaces(from manifest: Manifest, withEntries: Bool) {
        nextSequence = max(nextSequence, manifest.nextSequence)
        var live: [RecordLocation] = []
        defer { segments?.noteLive(live) }
        for saved in manifest.spaces {
            let index: Int
            switch spaces.findOrAdd(named: saved.name, kind: saved.kind, capacity: saved.capacity) {
            case let .found(space), let .added(space): index = space
            case .otherKind, .full: continue
            }
            spaces[index].counters = saved.counters
            guard withEntries else { continue }
            self.index.reserveCapacity(saved.entries.count)
            // Queue order is write order: restore by sequence.
            let entries = saved.kind == .queue ? saved.entries.sorted { $0.sequence < $1.sequence } : saved.entries
            // Only a manifest that lists no version still being written is restored from (`listsPendingVersion`).
            for entry in entries {
                restore(space: index, key: entry.key, expiry: entry.expiry, sequence: entry.sequence, rawSize: entry.rawSize, location: entry.location, live: &live)
            }
        }
    }

    /// The number of the key space a record names, created with the kind it
    /// says if it is new (unbounded until the application opens it again);
    /// nil when the name belongs to a key space of another kind. `numbers`
    /// remembers the answers, so that each name is looked up once.
    private mutating func number(ofSpace name: String, kind: UInt8, in numbers: inout [String: Int?]) -> Int? {
        if let known = numbers[name] { return known }
        let number: Int?
        switch spaces.findOrAdd(named: name, kind: KeySpace.Kind(record: kind), capacity: .max) {
        case let .found(space), let .added(space): number = space
        case .otherKind, .full: number = nil
        }
        numbers[name] = number
        return number
    }

    /// Restores entries from the records found on disk, when the manifest is
    /// stale or missing. `manifest` (if any) is the last checkpoint: a record
    /// older than it is live only if it lists that very version (or names it
    /// as the version on disk while a newer one was being written), or lists
    /// its sequence as settled; newer records and tombstones are replayed, the newest
    /// version of each key winning. A key space not known yet is created with
    /// the kind its records say, unbounded until the application opens it
    /// again with a capacity.
    /// - Returns: files of their own that hold no live entry (to delete).
    /// - Complexity: O(records log records).
    mutating func restore(found: [FoundRecord], checkpoint manifest: Manifest?) -> [FoundRecord] {
        let checkpoint = manifest?.nextSequence ?? 0
        // Per key, the version the manifest lists and the one it says was on disk.
        var listed: [String: [String: (sequence: UInt64, onDisk: UInt64)]] = [:]
        for space in manifest?.spaces ?? [] {
            var keys: [String: (sequence: UInt64, onDisk: UInt64)] = [:]
            keys.reserveCapacity(space.entries.count)
            for entry in space.entries { keys[entry.key] = (entry.sequence, entry.diskSequence) }
            listed[space.name] = keys
        }
        struct Name: Hashable { var space: String; var key: String }
        // Records the checkpoint lists as settled: one version per key (two copies
        // at most, equal), older than any record replayed, so they need no search for the newest.
        var settled: [FoundRecord] = []
        var newest: [Name: FoundRecord] = [:]
        var dead: [FoundRecord] = []
        let settledVersions = manifest?.settledVersions
        for record in found {
            let header = record.header
            if header.sequence < checkpoint {
                if !header.isTombstone, !record.location.isOwnFile, settledVersions?.contains(header.sequence) == true {
                    settled.append(record)
                    continue
                }
                let versions = listed[header.space]?[header.key]
                if header.isTombstone || (versions?.sequence != header.sequence && versions?.onDisk != header.sequence) {
                    if record.location.isOwnFile { dead.append(record) }
                    continue
                }
            }
            let name = Name(space: header.space, key: header.key)
            if let current = newest[name] {
                guard header.sequence > current.header.sequence else {
                    if record.location.isOwnFile, header.sequence < current.header.sequence { dead.append(record) }
                    continue
                }
                if current.location.isOwnFile { dead.append(current) }
            }
            newest[name] = record
        }
        var live: [RecordLocation] = []
        defer { segments?.noteLive(live) }
        var numbers: [String: Int?] = [:]
        // The settled first, unless a replayed record replaces or removes them; then the replayed, in write order.
        let replayed = newest.values.sorted { $0.header.sequence < $1.header.sequence }
        let settledLive = newest.isEmpty ? settled : settled.filter { newest[Name(space: $0.header.space, key: $0.header.key)] == nil }
        for record in settledLive.sorted(by: { $0.header.sequence < $1.header.sequence }) + replayed {
            let header = record.header
            nextSequence = max(nextSequence, header.sequence + 1)
            if header.isTombstone {
                if record.location.isOwnFile { dead.append(record) }
                continue
            }
            guard let space = number(ofSpace: header.space, kind: header.kind, in: &numbers) else { continue }
            restore(space: space, key: header.key, expiry: header.expiry, sequence: header.sequence,
                    rawSize: header.rawLength, location: record.location, live: &live)
        }
        nextSequence = max(nextSequence, checkpoint)
        return dead
    }
}
