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
        guard let disk else { return }
        writeBehind?.drain()
        let footprint = disk.measureFootprint()
        try disk.withManifestWriter { () throws(KacheError) in
            guard !store.withLock({ $0.isClosed }) else { throw .closed }
            store.withLock { $0.budget.footprint = footprint }
            try syncFiles(of: disk)
            try writeManifest(to: disk)
        }
        // The manifest is a checkpoint: dead segment bytes it covers can go.
        reclaimer?.reclaim(checkpointing: false)
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
        guard let disk else { return }
        try disk.withChangesPaused {
            writeBehind?.drain()
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
        guard wasOpen, let disk else { return }
        disk.stopChanges()
        writeBehind?.stop()
        try disk.withManifestWriter { () throws(KacheError) in
            defer { disk.close() }
            try syncFiles(of: disk)
            try writeManifest(to: disk)
        }
        store.withLock { $0.releaseAllValues() }
    }

    /// Flushes every file written to the device, then throws the first
    /// `async` write lost since the last time, if any: the manifest is not
    /// written as if it were durable.
    private func syncFiles(of disk: DiskStore) throws(KacheError) {
        try storage { () throws(StorageError) in try disk.syncEverything() }
        if let lost = writeBehind?.takeLostWrite() { throw lost }
    }

    /// Writes the index as the manifest, and removes the dirty marker if the
    /// files still match it. Call inside `disk.withManifestWriter`.
    private func writeManifest(to disk: DiskStore) throws(KacheError) {
        guard let persister else { return }
        let snapshot = persister.takeManifestSnapshot(savedAt: clock.nanosecondsSince1970())
        try persister.writeManifest(snapshot)
        clearStaleMarker(after: snapshot)
    }

    /// Removes the dirty marker if the manifest written from `snapshot` is
    /// complete: it lists no version still being written, nothing changed
    /// since it was taken (a write that landed meanwhile counts), and every
    /// file job it implies has run (changes still under way are `DiskStore`'s check).
    func clearStaleMarker(after snapshot: ManifestSnapshot) {
        guard !snapshot.listsPendingVersion else { return }
        disk?.clearStaleMarker { store.withLock { $0.mutations == snapshot.mutations } && (writeBehind?.isIdle ?? true) }
    }

    /// Rebuilds the index from the manifest when it is current, else from the
    /// entry files' headers (keeping the key spaces the manifest names), then
    /// deletes what expired meanwhile and trims key spaces to capacity.
    ///
    /// At open (`atOpen`), temporary files in the shard folders are what a
    /// crash left, and are deleted; later (`load()`) they may be writes under way.
    func restoreIndex(atOpen: Bool) throws {
        guard let disk else { return }
        // Not while a save takes its snapshot of the index being rebuilt.
        try disk.withManifestWriter { () throws in
            guard !store.withLock({ $0.isClosed }) else { throw KacheError.closed }
            try restoreIndex(from: disk, atOpen: atOpen)
        }
    }

    private func restoreIndex(from disk: DiskStore, atOpen: Bool) throws {
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
        let found = stale ? try findRecords(in: disk, atOpen: atOpen) : nil
        if found != nil { disk.noteChange() }
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
        let (removals, deadFiles) = store.withLock { state -> ([Removal], [StoreState.FoundRecord]) in
            state.resetIndex()
            state.budget.footprint = footprint
            disk.segments.restartAccounting(latestSequences: found?.latestSequences ?? [:])
            if damagedManifest { state.counters.quarantined += 1 }
            var deadFiles: [StoreState.FoundRecord] = []
            if let manifest { state.restoreKeySpaces(from: manifest, withEntries: found == nil) }
            if let found {
                state.counters.quarantined += UInt64(found.damaged)
                deadFiles = state.restore(found: found.records, checkpoint: manifest)
            }
            disk.segments.noteCheckpoint(stale ? (manifest?.nextSequence ?? 0) : state.nextSequence)
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
        persister?.delete(removals)
    }

    /// Every record on disk, for the rebuild after a crash: the headers of
    /// files of their own, and every record of every segment file (read
    /// sequentially, each checksum verified). A torn tail is cut at open.
    private func findRecords(in disk: DiskStore, atOpen: Bool) throws -> FoundRecords {
        let scan = try storage { () throws(StorageError) in try disk.scanHeaders(deletingTemporaryFiles: atOpen) }
        var found = FoundRecords()
        found.damaged = scan.quarantined
        found.records = scan.files.map {
            StoreState.FoundRecord(header: $0.header, location: .ownFile(length: $0.fileLength))
        }
        for (id, length) in disk.segments.lengths() {
            guard let file = disk.segments.file(id) else { continue }
            let records = try storage { () throws(StorageError) in try SegmentStore.scan(file) }
            if records.validLength < length {
                configuration.logger.warning(
                    "Kache cut a torn tail off a segment file",
                    metadata: ["segment": "\(disk.segments.path(of: id))", "bytes": "\(length - records.validLength)"]
                )
                if atOpen { disk.segments.truncate(id, to: records.validLength) }
            }
            if !records.damagedRanges.isEmpty {
                configuration.logger.warning(
                    "Kache skipped damaged bytes in a segment file; the records around them are kept",
                    metadata: ["segment": "\(disk.segments.path(of: id))", "ranges": "\(records.damagedRanges.count)"]
                )
                found.damaged += records.damagedRanges.count
            }
            var latest: UInt64 = 0
            for record in records.records {
                latest = max(latest, record.header.sequence)
                found.records.append(StoreState.FoundRecord(
                    header: record.header, location: RecordLocation(segment: id, offset: UInt32(record.offset), length: record.length)
                ))
            }
            found.latestSequences[id] = latest
        }
        return found
    }

    /// What `findRecords` found.
    private struct FoundRecords {
        var records: [StoreState.FoundRecord] = []
        var latestSequences: [UInt32: UInt64] = [:]
        /// Damaged files quarantined and damaged runs of segment bytes skipped.
        var damaged = 0
    }
}
