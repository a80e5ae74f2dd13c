import Foundation

extension Kache {
    /// Makes everything set so far durable, and returns only then: flushes
    /// pending writes, syncs the files, writes the manifest atomically and syncs it.
    /// Does nothing in `memory` durability.
    /// - Throws: a file error when the disk refuses; entries already durable stay so.
    public func save() throws {
        guard let disk else { return }
        writeBehind?.drain()
        try disk.syncEverything()
        try writeManifest(to: disk)
    }

    /// Reloads the index from the directory, as opening it would: pending
    /// writes are flushed first, values leave memory and are read again on demand.
    /// Does nothing in `memory` durability.
    public func load() throws {
        guard disk != nil else { return }
        writeBehind?.drain()
        try restoreIndex()
    }

    /// Flushes pending writes, writes the manifest (so the next open is fast),
    /// and releases the directory's lock. Later calls to `set` throw
    /// ``KacheError/closed``, and reads return nil. Closing twice does nothing.
    public func close() throws {
        let wasOpen = store.withLock { state in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard wasOpen, let disk else { return }
        defer { disk.close() }
        writeBehind?.stop()
        try disk.syncEverything()
        try writeManifest(to: disk)
        store.withLock { $0.releaseAllValues() }
    }

    private func writeManifest(to disk: DiskStore) throws {
        try disk.withManifestWriter { () throws(KacheError) in
            let now = clock.nanosecondsSince1970()
            let (manifest, mark) = store.withLock { ($0.manifest(savedAt: now), $0.mutations) }
            try disk.writeManifest(manifest.encoded())
            // Complete only if nothing changed since the snapshot and every file
            // job it implies has run (in-flight changes are DiskStore's check).
            disk.clearStaleMarker { store.withLock { $0.mutations == mark } && (writeBehind?.isIdle ?? true) }
        }
    }

    /// Rebuilds the index from the manifest when it is current, else from the
    /// entry files' headers (keeping the key spaces the manifest names), then
    /// deletes what expired meanwhile and trims key spaces to capacity.
    func restoreIndex() throws {
        guard let disk else { return }
        // Not while a save takes its snapshot of the index being rebuilt.
        try disk.withManifestWriter { () throws in try restoreIndex(from: disk) }
    }

    private func restoreIndex(from disk: DiskStore) throws {
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
        let scan = (manifest == nil || disk.isManifestStale) ? disk.scanHeaders() : nil
        if scan != nil { disk.noteChange() }
        let now = clock.nanosecondsSince1970()
        let removals = store.withLock { state -> [Removal] in
            state.resetIndex()
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
