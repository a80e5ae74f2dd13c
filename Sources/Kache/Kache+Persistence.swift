import Foundation

extension Kache {
    /// Makes everything set so far durable, and returns only then: flushes
    /// pending writes, syncs the files, writes the manifest atomically and syncs it.
    /// Does nothing in `memory` durability.
    /// - Throws: a file error when the disk refuses; entries already durable stay so.
    /// - Throws: ``KacheError/closed`` after `close()`.
    public func save() throws {
        guard let disk else { return }
        writeBehind?.drain()
        let footprint = disk.measureFootprint()
        try disk.withManifestWriter { () throws(KacheError) in
            guard !store.withLock({ $0.isClosed }) else { throw .closed }
            store.withLock { $0.budget.footprint = footprint }
            try disk.syncEverything()
            try writeManifest(to: disk)
        }
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
        guard wasOpen, let disk else { return }
        disk.stopChanges()
        writeBehind?.stop()
        try disk.withManifestWriter { () throws(KacheError) in
            defer { disk.close() }
            try disk.syncEverything()
            try writeManifest(to: disk)
        }
        store.withLock { $0.releaseAllValues() }
    }

    /// Writes the index as the manifest. Call inside `disk.withManifestWriter`.
    private func writeManifest(to disk: DiskStore) throws(KacheError) {
        let now = clock.nanosecondsSince1970()
        let (manifest, mark) = store.withLock { ($0.manifest(savedAt: now), $0.mutations) }
        try disk.writeManifest(manifest.encoded())
        // Complete only if nothing changed since the snapshot and every file
        // job it implies has run (in-flight changes are DiskStore's check).
        disk.clearStaleMarker { store.withLock { $0.mutations == mark } && (writeBehind?.isIdle ?? true) }
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
        if let bytes = try disk.readManifest() {
            do {
                manifest = try bytes.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }
            } catch {
                configuration.logger.warning("Kache moved a damaged manifest to quarantine (\(error)); rebuilding from the entry files")
                disk.quarantineManifest()
                damagedManifest = true
            }
        }
        let scan = (manifest == nil || disk.isManifestStale) ? try disk.scanHeaders(deletingTemporaryFiles: atOpen) : nil
        if scan != nil { disk.noteChange() }
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
        let removals = store.withLock { state -> [Removal] in
            state.resetIndex()
            state.budget.footprint = footprint
            if damagedManifest { state.counters.quarantined += 1 }
            if let manifest { state.restoreKeySpaces(from: manifest, withEntries: scan == nil) }
            if let scan {
                state.counters.quarantined += UInt64(scan.quarantined)
                state.restore(scannedFiles: scan.files)
            }
            var removals = state.sweep(now: now)
            for space in state.spaces.indices { removals += state.trimToCapacity(space: space) }
            removals += state.makeRoom(forBytes: 0)
            return removals
        }
        if !removals.isEmpty { disk.noteChange() }
        removals.forEach { persister?.delete($0) }
    }
}
