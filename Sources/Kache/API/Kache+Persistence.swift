import CKacheSystem
import Foundation
import KacheStorage

extension Kache {
    /// Makes everything set so far durable, and returns only then: flushes
    /// pending writes, syncs the files, writes the manifest atomically and syncs it.
    /// Does nothing in `memory` durability.
    /// - Throws: a file error when the disk refuses, also one that lost an
    ///   `async` write since the last save (its `set` had returned);
    ///   entries already durable stay so.
    /// - Throws: ``KacheError/closed`` after `close()`.
    public func save() throws {
        guard let records else { return }
        records.drain()
        let footprint = records.disk.measureFootprint()
        try records.disk.withManifestWriter { () throws(KacheError) in
            guard !store.withLock({ $0.isClosed }) else { throw .closed }
            store.withLock { $0.budget.footprint = footprint }
            try flushAndWriteManifest()
        }
        // The manifest is a checkpoint: dead segment bytes it covers can go.
        records.reclaimAfterCheckpoint()
        // The manifest's snapshot and encoding, a hundred bytes or so per
        // entry, are freed now: give the pages back rather than keep them resident.
        kache_return_freed_memory()
    }

    /// Reloads the index from the directory, as opening it would: pending
    /// writes are flushed first, values leave memory and are read again on demand.
    /// Does nothing in `memory` durability.
    ///
    /// Changes other threads have under way finish first, and those they begin
    /// meanwhile wait until the index is rebuilt, so a write in flight is never
    /// lost or its temporary file taken for a crash's leftover.
    /// - Throws: ``KacheError/closed`` after `close()`, or a file error when a
    ///   folder or an entry file can't be read (the index is then unchanged).
    public func load() throws {
        guard let records else { return }
        try records.disk.withChangesPaused {
            records.drain()
            try restoreIndex(atOpen: false)
        }
        queueWaiters.noteReload()
    }

    /// Flushes pending writes, writes the manifest (so the next open is fast),
    /// and releases the directory's lock. Later calls to `set` throw
    /// ``KacheError/closed``, and reads return nil. Closing twice does nothing.
    ///
    /// Changes other threads have under way finish their file work first; the
    /// lock is released last, and after that no call touches a file.
    public func close() throws {
        let wasOpen = store.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        queueWaiters.close()
        guard wasOpen, let records else { return }
        let disk = records.disk
        disk.stopChanges()
        records.stop()
        try disk.withManifestWriter { () throws(KacheError) in
            defer { disk.close() }
            try flushAndWriteManifest()
        }
        store.withLock { $0.releaseAllValues() }
    }

    /// The index as the manifest lists it now (under the store's lock),
    /// dated by the machine's clock, not the cache's: the date is for a
    /// person (`kache inspect`), and a clock set ahead must not date a save in the future.
    func takeManifestSnapshot() -> ManifestSnapshot {
        store.withLock { $0.manifestSnapshot(savedAt: Timestamp(Date())) }
    }

    /// Writes `snapshot` as the manifest, the checkpoint recovery replays
    /// newer records from. Call inside `disk.withManifestWriter`.
    func writeManifest(_ snapshot: ManifestSnapshot) throws(KacheError) {
        guard let records else { return }
        try storage { () throws(StorageError) in try records.writeCheckpoint(snapshot.bytes, nextSequence: snapshot.nextSequence) }
    }

    /// Flushes every file, writes the index as the manifest, and removes the
    /// dirty marker if the files still match it. Call inside `disk.withManifestWriter`.
    ///
    /// The snapshot is taken before the flush, so that every version it lists
    /// was written before the flush began. Taken after, it listed versions
    /// the writer landed while the flush ran, whose records the flush had
    /// missed: a power cut took them, and the open, trusting the manifest,
    /// dropped the saved versions they had replaced (the power-cut campaign,
    /// seed 52001, cut 248: two keys gone).
    private func flushAndWriteManifest() throws(KacheError) {
        guard let records else { return }
        let snapshot = takeManifestSnapshot()
        try storage { () throws(StorageError) in try records.syncEverything() }
        try writeManifest(snapshot)
        clearStaleMarker(after: snapshot)
    }

    /// Removes the dirty marker if the manifest written from `snapshot` is
    /// complete: it lists no version still being written, nothing changed
    /// since it was taken (a write that landed meanwhile counts), and every
    /// file job it implies has run (changes still under way are `DiskStore`'s check).
    func clearStaleMarker(after snapshot: ManifestSnapshot) {
        guard !snapshot.listsPendingVersion else { return }
        disk?.clearStaleMarker { store.withLock { $0.mutations == snapshot.mutations } && (records?.isIdle ?? true) }
    }

    /// Rebuilds the index from the manifest when it is current, else from the
    /// entry files' headers (keeping the key spaces the manifest names), then
    /// deletes what expired meanwhile and trims key spaces to capacity.
    ///
    /// At open (`atOpen`), temporary files in the shard folders are what a
    /// crash left, and are deleted; later (`load()`) they may be writes under way.
    func restoreIndex(atOpen: Bool) throws {
        guard let records else { return }
        // Not while a save takes its snapshot of the index being rebuilt.
        try records.disk.withManifestWriter { () throws in
            guard !store.withLock({ $0.isClosed }) else { throw KacheError.closed }
            try restoreIndex(from: records, atOpen: atOpen)
        }
    }

    private func restoreIndex(from records: RecordStore, atOpen: Bool) throws {
        let disk = records.disk
        var manifest: Manifest?
        var damagedManifest = false
        if let bytes = try storage({ () throws(StorageError) in try disk.readManifest() }) {
            do {
                manifest = try bytes.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }
            } catch {
                configuration.logger.warning("Kache moved a damaged manifest to quarantine (\(error)); rebuilding from the entry files")
                disk.quarantineManifest()
                damagedManifest = true
            }
        }
        // A manifest that lists a version still being written is a checkpoint
        // only, even without the marker: earlier versions of Kache left such
        // manifests trusted, and its entries name versions no record holds.
        let stale = manifest == nil || disk.isManifestStale || manifest!.listsPendingVersion
        // Appends from now on go to new files; the ones there are only read.
        _ = disk.segments.sealAll()
        // A current manifest of version 4 or later lists the settled entries' versions; their records are read from the segments' keys sections.
        // They are picked on the cores that read them (`SettledRestore`).
        let settled = !stale && !(manifest?.settled.isEmpty ?? true)
            ? store.withLock { $0.settledRestore(for: manifest!) } : nil
        let visit: RecordScan.SegmentVisitor? = if let settled { { id, length, read in settled.pick(segment: id, length: length, reading: read) } } else { nil }
        let found = stale || settled != nil
            ? try storage { () throws(StorageError) in try records.findRecords(atOpen: atOpen, segmentsOnly: !stale, visiting: visit) } : nil
        if stale { disk.noteChange() }
        let footprint = disk.measureFootprint()
        if let limit = configuration.diskBudget {
            let least = store.withLock { $0.diskUseAlone(fileLength: 0, keyBytes: 0, footprint: footprint) }
            guard least < limit else {
                throw KacheError.invalidConfiguration(
                    "diskBudget (\(limit) bytes) leaves no room for entries: the directory's own folders, lock and manifest take \(least) bytes"
                )
            }
        }
        let now = clock.nanosecondsSince1970()
        let (removals, deadFiles) = store.withLock { state -> ([Removal], [FoundRecord]) in
            state.resetIndex()
            state.budget.footprint = footprint
            disk.segments.restartAccounting(latestSequences: found?.latestSequences ?? [:])
            if damagedManifest { state.counters.quarantined += 1 }
            var deadFiles: [FoundRecord] = []
            if let manifest { state.restoreKeySpaces(from: manifest, withEntries: !stale) }
            if let found {
                state.counters.quarantined += UInt64(found.damaged)
                if stale {
                    deadFiles = state.restore(found: found.records, checkpoint: manifest)
                } else if let manifest, let settled {
                    state.restoreSettled(settled, from: manifest)
                }
            }
            disk.segments.noteCheckpoint(stale ? (manifest?.nextSequence ?? 0) : state.nextSequence)
            state.rebuildDiskQueues()
            var removals = state.sweep(now: now)
            for space in state.spaces.indices { removals += state.trimToCapacity(space: space) }
            removals += state.makeRoom(forBytes: 0)
            return (removals, deadFiles)
        }
        // Files of their own that no checkpoint lists and no newer record replays.
        for file in deadFiles {
            let name = EntryName(space: file.header.space, key: file.header.key)
            disk.withExclusiveAccess(to: name) { disk.delete(name) }
        }
        if !removals.isEmpty { disk.noteChange() }
        records.removeNow(removals.recordRemovals)
    }
}
