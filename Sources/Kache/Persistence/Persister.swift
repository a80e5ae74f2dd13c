import Foundation
import KacheStorage
import Logging

/// Carries index changes to the disk, in an order that can't go wrong.
///
/// A large entry's file is written under its name's stripe
/// (`DiskStore.withExclusiveAccess`); a small entry's record is appended to a
/// segment. Either way the index is told where the version landed only if it
/// is still the current one (`StoreState.markWritten`), and a version that
/// was replaced meanwhile is counted dead. So jobs may run late, twice over,
/// or in any order on any thread, and the index always points at the newest
/// version on disk.
///
/// A removal appends a tombstone (so recovery after a crash, which replays
/// the records newer than the last checkpoint, doesn't bring the key back)
/// and deletes the key's own file if it had one.
struct Persister: Sendable {
    /// A change to carry to disk.
    enum Job: Sendable {
        case write(Write)
        case delete(Removal)

        /// Bytes this job keeps in memory while queued (its file and the pinned value).
        var byteCount: Int {
            switch self {
            case let .write(write): return write.file.count + write.rawSize
            case let .delete(removal): return removal.key.utf8.count + 64
            }
        }
    }

    /// One version of one entry, encoded and sealed.
    struct Write: Sendable {
        var space: Int
        var key: String
        var name: EntryName
        var file: Data
        var rawSize: Int
        var sequence: UInt64
        /// The segment bucket its record is appended to; nil for a file of its own.
        var bucket: SegmentStore.Bucket?
    }

    let store: Store
    let disk: DiskStore
    let logger: Logger
    /// Tombstones are written only when segments may hold records of a key.
    let writesTombstones: Bool

    var segments: SegmentStore { disk.segments }

    // MARK: - Writing

    /// Writes one version if it is still current; throws when the disk refuses.
    func write(_ write: Write) throws(KacheError) {
        if write.bucket == nil {
            try writeOwnFile(write)
        } else {
            try append([write], bucket: write.bucket!)
        }
    }

    private func writeOwnFile(_ write: Write) throws(KacheError) {
        let written = try disk.withExclusiveAccess(to: write.name) { () throws(KacheError) -> Bool in
            guard store.withLock({ $0.isCurrent(space: write.space, key: write.key, sequence: write.sequence) }) else {
                return false
            }
            try storage { () throws(StorageError) in try disk.write(write.file, as: write.name) }
            return true
        }
        if written {
            let location = RecordLocation.ownFile(length: write.file.count)
            store.withLock { _ = $0.markWritten(space: write.space, key: write.key, sequence: write.sequence, location: location) }
        }
    }

    /// Appends the versions still current to the bucket's segment with one
    /// write call, then tells the index where each landed.
    private func append(_ writes: [Write], bucket: SegmentStore.Bucket) throws(KacheError) {
        let current = store.withLock { state in
            writes.filter { state.isCurrent(space: $0.space, key: $0.key, sequence: $0.sequence) }
        }
        guard !current.isEmpty else { return }
        var bytes = Data(capacity: current.reduce(0) { $0 + $1.file.count })
        for write in current { bytes.append(write.file) }
        let placement = try storage { () throws(StorageError) in try segments.append(bytes, bucket: bucket) }
        let ownFiles = store.withLock { state -> [Write] in
            var offset = placement.offset
            var replaced: [Write] = []
            for write in current {
                let location = RecordLocation(segment: placement.segment, offset: UInt32(offset), length: write.file.count)
                offset += write.file.count
                if state.markWritten(space: write.space, key: write.key, sequence: write.sequence, location: location) {
                    replaced.append(write)
                }
            }
            return replaced
        }
        // The previous versions were in files of their own: the segment holds the key now.
        for write in ownFiles {
            disk.withExclusiveAccess(to: write.name) {
                let stillInSegment = store.withLock { state in
                    state.record(space: write.space, key: write.key)?.isInSegment ?? false
                }
                if stillInSegment { disk.delete(write.name) }
            }
        }
    }

    // MARK: - The manifest

    /// The index as the manifest lists it now (under the store's lock).
    func takeManifestSnapshot(savedAt: Timestamp) -> ManifestSnapshot {
        store.withLock { $0.manifestSnapshot(savedAt: savedAt) }
    }

    /// Writes `snapshot` as the manifest: from now on it is the checkpoint
    /// that recovery replays newer records from. Call inside `disk.withManifestWriter`.
    func writeManifest(_ snapshot: ManifestSnapshot) throws(KacheError) {
        try storage { () throws(StorageError) in try disk.writeManifest(snapshot.bytes) }
        segments.noteCheckpoint(snapshot.nextSequence)
    }

    // MARK: - Removing

    /// Records the removals on disk: a tombstone each (appended together) and
    /// the deletion of files of their own, unless a newer version owns the name now.
    func delete(_ removals: [Removal]) {
        let withFiles = removals.filter(\.hasFile)
        guard !withFiles.isEmpty else { return }
        if writesTombstones {
            var bytes = Data()
            var sequences: [UInt64] = []
            for removal in withFiles where removal.tombstoneSequence != 0 {
                let name = EntryName(space: removal.space, key: removal.key)
                let kind = store.withLock { $0.spaces[removal.spaceIndex].kind }
                bytes.append(EntryFile.tombstone(name: name, kind: kind.rawValue, expiry: removal.record.expiry, sequence: removal.tombstoneSequence))
                sequences.append(removal.tombstoneSequence)
            }
            if !bytes.isEmpty {
                do throws(StorageError) {
                    let placement = try segments.append(bytes, bucket: .tombstones)
                    segments.noteAppended(placement.segment, bytes: bytes.count, sequence: sequences.max() ?? 0, live: false)
                } catch {
                    // The removal stands in memory; after a crash before the next
                    // checkpoint the key may come back, as in `async` durability.
                    logger.error("Kache could not append tombstones: \(KacheError(error))")
                    store.withLock { $0.counters.writeErrors += 1 }
                }
            }
        }
        for removal in withFiles where removal.mayHaveOwnFile {
            let name = EntryName(space: removal.space, key: removal.key)
            disk.withExclusiveAccess(to: name) {
                let keep = store.withLock { state in
                    state.record(space: removal.spaceIndex, key: removal.key).map { $0.isInOwnFile || $0.isPendingWrite } ?? false
                }
                if !keep { disk.delete(name) }
            }
        }
    }

    /// Deletes the file of one removed entry (see `delete(_:)`).
    func delete(_ removal: Removal) {
        delete([removal])
    }

    // MARK: - The write-behind queue

    /// Runs a batch of the write-behind queue: small records appended per
    /// bucket with one write call each, large files written one by one,
    /// removals last. A failed write can't reach its caller any more: the
    /// entry leaves the cache (so nothing stale is served later), the error
    /// is counted and logged, and returned for the next `save()` to throw.
    /// - Returns: the first failure that lost a write, nil when none did.
    func perform(_ jobs: [Persister.Job]) -> KacheError? {
        var byBucket: [SegmentStore.Bucket: [Write]] = [:]
        var removals: [Removal] = []
        var lost: KacheError?
        for job in jobs {
            switch job {
            case let .write(write):
                if let bucket = write.bucket {
                    byBucket[bucket, default: []].append(write)
                } else {
                    do { try writeOwnFile(write) } catch { lost = lost ?? failed([write], error) }
                }
            case let .delete(removal):
                removals.append(removal)
            }
        }
        for (bucket, writes) in byBucket {
            do { try append(writes, bucket: bucket) } catch { lost = lost ?? failed(writes, error) }
        }
        delete(removals)
        return lost
    }

    /// Takes the versions of `writes` that are still current out of the cache.
    /// - Returns: `error` if that lost any of them (a newer version replaced the others).
    private func failed(_ writes: [Write], _ error: KacheError) -> KacheError? {
        var lost: KacheError?
        for write in writes {
            logger.error("Kache could not write an entry: \(error)", metadata: ["key": "\(write.key.prefix(120))"])
            let removal = store.withLock { state -> Removal? in
                guard state.isCurrent(space: write.space, key: write.key, sequence: write.sequence) else { return nil }
                state.counters.writeErrors += 1
                return state.remove(space: write.space, key: write.key)
            }
            if var removal {
                lost = error
                removal.hasFile = true
                delete(removal)
            }
        }
        return lost
    }

    // MARK: - Reading

    /// What reading one version's record found.
    enum RecordRead {
        case entry(EntryFile.Header, payload: Data)
        case missing
        case damaged(EntryFile.Damage, inode: UInt64)
        case unreadable(errno: Int32)
    }

    /// Reads and verifies the record at `location` (a file of its own, or
    /// one `pread` in a segment), checking that it holds this very key.
    /// `file`: the segment file, taken under the store's lock together with
    /// the location, so that it still reads if the file was deleted since.
    func readRecord(_ name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?, maximumLength: Int) -> RecordRead {
        if location.isOwnFile {
            switch disk.read(name, maximumLength: maximumLength) {
            case let .entry(header, payload): return .entry(header, payload: payload)
            case .missing: return .missing
            case let .damaged(damage, inode): return .damaged(damage, inode: inode)
            case let .unreadable(code): return .unreadable(errno: code)
            }
        }
        guard let file, file.id == location.segment else { return .missing }
        guard let bytes = file.read(offset: Int(location.offset), length: location.length) else {
            return .unreadable(errno: errno)
        }
        let decoded = bytes.withUnsafeBytes { raw in
            Result { () throws(EntryFile.Damage) in try EntryFile.decode(raw) }
        }
        switch decoded {
        case let .success((header, payload)):
            guard header.key == name.canonicalKey, header.space == name.space, !header.isTombstone else {
                return .damaged(.wrongEntry(expectedKey: name.canonicalKey, foundKey: header.key), inode: 0)
            }
            return .entry(header, payload: payload)
        case let .failure(damage):
            return .damaged(damage, inode: 0)
        }
    }

    /// Reads the record of a live entry whose value is not in memory, verifies
    /// it, and promotes the value.
    ///
    /// A missing or damaged record reads as a miss and the entry leaves the
    /// index (a damaged file of its own is moved to quarantine; a damaged
    /// record in a segment stays where it is, counted dead, and the rest of
    /// its segment is still served), counted and logged, as a change under
    /// way, so the manifest is marked stale first. A record that can't be read
    /// (`EMFILE`, `EACCES`, `EIO`…) is not damage: the read is a miss, counted
    /// in `readErrors` and logged, and nothing changes.
    /// `insideChange`: the caller runs as a change under way already.
    func read(
        space: Int, key: String, name: EntryName, sequence: UInt64, location: RecordLocation, file: SegmentStore.SegmentFile?,
        maximumLength: Int, insideChange: Bool = false
    ) -> Data? {
        var location = location
        var file = file
        // Compaction may move the record between the lookup and the read: look again, a few times.
        for _ in 0 ..< 4 {
            let result = readRecord(name, at: location, in: file, maximumLength: maximumLength)
            if case .missing = result, !location.isOwnFile,
               let (moved, movedFile) = store.withLock({ state in
                   state.currentLocation(space: space, key: key, sequence: sequence).map { ($0, segments.file($0.segment)) }
               }), moved != location
            {
                location = moved
                file = movedFile
                continue
            }
            return settle(result, space: space, key: key, name: name, sequence: sequence, location: location, insideChange: insideChange)
        }
        return nil
    }

    private func settle(_ result: RecordRead, space: Int, key: String, name: EntryName, sequence: UInt64, location: RecordLocation, insideChange: Bool) -> Data? {
        switch result {
        case let .entry(header, payload) where header.sequence == sequence:
            store.withLock { $0.promote(space: space, key: key, sequence: sequence, value: payload) }
            return payload
        case .entry, .missing:
            // The file holds another version (a newer one landed after the lookup)
            // or is gone: nothing to trust for this version.
            changingIndex(insideChange: insideChange) {
                store.withLock { state in
                    state.counters.misses += 1
                    state.drop(space: space, key: key, sequence: sequence)
                }
            }
            return nil
        case let .damaged(damage, inode):
            changingIndex(insideChange: insideChange) {
                var moved: Int?
                if location.isOwnFile {
                    moved = disk.withExclusiveAccess(to: name) { disk.quarantine(name, inode: inode) }
                    logger.warning("Kache moved a damaged entry file to quarantine: \(damage)", metadata: ["file": "\(disk.path(of: name))"])
                } else {
                    logger.warning(
                        "Kache found a damaged record in a segment; it reads as a miss and its bytes count as dead: \(damage)",
                        metadata: ["segment": "\(segments.path(of: location.segment))", "offset": "\(location.offset)"]
                    )
                }
                store.withLock { state in
                    state.counters.misses += 1
                    if let moved { state.noteQuarantined(bytes: moved) } else if !location.isOwnFile { state.counters.quarantined += 1 }
                    state.drop(space: space, key: key, sequence: sequence)
                }
            }
            return nil
        case let .unreadable(code):
            noteUnreadable(name, errno: code)
            return nil
        }
    }

    /// Counts and logs a read that failed for a reason other than the file's bytes.
    func noteUnreadable(_ name: EntryName, errno code: Int32) {
        logger.warning(
            "Kache could not read an entry's record; it reads as a miss and stays in place",
            metadata: ["file": "\(disk.path(of: name))", "errno": "\(code)", "error": "\(String(cString: strerror(code)))"]
        )
        store.withLock { state in
            state.counters.misses += 1
            state.counters.readErrors += 1
        }
    }

    /// Runs `body`, an index change with file work, as a change under way
    /// (`DiskStore.beginChange()`), unless the caller is one already; does
    /// nothing once the cache is closing.
    func changingIndex(insideChange: Bool, _ body: () -> Void) {
        if insideChange { return body() }
        guard disk.beginChange() else { return }
        defer { disk.endChange() }
        body()
    }
}
