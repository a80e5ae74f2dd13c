import KacheStorage

/// The index as the record store sees it (`RecordIndex`): each call takes
/// the store's lock once, but `areCurrent`, which only reads.
struct StoreRecordIndex: RecordIndex {
    let store: Store
    /// The store's entries, read under their shards' locks alone.
    let index: EntryIndex

    init(store: Store) {
        self.store = store
        index = store.withLock { $0.index }
    }

    /// Under the shards' locks, not the store's: the writer asks this of each
    /// batch before writing it, and under the store's lock the sets waiting for
    /// it spun for a fifth of W8's load.
    func areCurrent(_ versions: [RecordVersion]) -> [Bool] {
        versions.map { version in
            index.isCurrent(space: version.space, key: version.key, sequence: version.sequence, ref: version.indexHandle.map(EntryRef.init(packed:)))
        }
    }

    func locations(of versions: [RecordVersion]) -> [RecordLocation?] {
        store.withLock { state in versions.map { state.currentLocation(space: $0.space, key: $0.key, sequence: $0.sequence) } }
    }

    func commit(_ landed: [(version: RecordVersion, location: RecordLocation)]) -> Commit {
        store.withLock { state in
            var ledger = SegmentStore.LedgerChanges()
            let leftOwnFiles = landed.compactMap { version, location in
                state.markWritten(
                    space: version.space, key: version.key, sequence: version.sequence,
                    ref: version.indexHandle.map(EntryRef.init(packed:)), location: location, ledger: &ledger
                ) ? version : nil
            }
            state.segments?.apply(ledger)
            return Commit(leftOwnFiles: leftOwnFiles, evicted: state.settleDiskBudget().recordRemovals)
        }
    }

    func relocate(_ moves: [(version: RecordVersion, from: RecordLocation, to: RecordLocation)]) -> [RecordRemoval] {
        store.withLock { state in
            var ledger = SegmentStore.LedgerChanges()
            for (version, from, to) in moves {
                _ = state.relocate(space: version.space, key: version.key, sequence: version.sequence, from: from, to: to, ledger: &ledger)
            }
            state.segments?.apply(ledger)
            return state.settleDiskBudget().recordRemovals
        }
    }

    func keepsOwnFile(space: Int, key: String) -> Bool {
        store.withLock { state in state.record(space: space, key: key).map { $0.isInOwnFile || $0.isPendingWrite } ?? false }
    }

    func removeUnwritten(_ version: RecordVersion) -> RecordRemoval? {
        store.withLock { state in
            guard state.isCurrent(space: version.space, key: version.key, sequence: version.sequence) else { return nil }
            return state.remove(space: version.space, key: version.key)?.recordRemoval
        }
    }

    func spaces(named names: Set<String>) -> [String: Int] {
        store.withLock { state in
            var numbers: [String: Int] = [:]
            for name in names { numbers[name] = state.spaces.number(named: name) }
            return numbers
        }
    }

    var isOverBudgetWithDeadBytes: Bool {
        store.withLock { $0.isOverDiskBudgetWithDeadBytes }
    }

    func checkpoint(savedAt: Timestamp) -> (manifest: [UInt8], nextSequence: UInt64)? {
        store.withLock { state in
            guard !state.isClosed else { return nil }
            let snapshot = state.manifestSnapshot(savedAt: savedAt)
            return (snapshot.bytes, snapshot.nextSequence)
        }
    }

    func excludingReaders<R: Sendable>(_ body: () -> R) -> R {
        store.withLock { _ in body() }
    }
}
