import Foundation
import Logging

/// Reads and writes records in the directory's files, in an order that
/// can't go wrong.
///
/// A large entry's file is written under its name's stripe
/// (`DiskStore.withExclusiveAccess`); a small entry's record is appended to a
/// segment. Either way the index commits where the version landed only if it
/// is still the current one (`RecordIndex.commit`), and a version replaced
/// meanwhile is counted dead. So writes may run late, twice over, or in any
/// order on any thread, and the index always points at the newest version on disk.
///
/// A removal appends a tombstone (so recovery after a crash, which replays
/// the records newer than the last checkpoint, doesn't bring the key back)
/// and deletes the key's own file if it had one.
package struct RecordFiles: Sendable {
    /// A change to carry to disk.
    package enum Job: Sendable {
        case write(RecordWrite)
        /// Boxed, so that a job is one word: the queue moves every job in and
        /// out of its deque, and a removal inline made each job 100 bytes.
        indirect case delete(RecordRemoval)

        /// Bytes this job keeps in memory while queued (its file and the pinned value).
        package var byteCount: Int {
            switch self {
            case let .write(write): return write.encodedLength + write.rawSize
            case let .delete(removal): return removal.key.utf8.count + 64
            }
        }
    }

    let disk: DiskStore
    let index: any RecordIndex
    let logger: Logger
    /// How blocks' values are compressed.
    let blockCompression: SegmentBlock.Compression
    /// Tombstones are written only when segments may hold records of a key.
    let writesTombstones: Bool
    let counters: StorageCounters

    var segments: SegmentStore { disk.segments }

    // MARK: - Writing

    /// Writes one version if it is still current; throws when the disk refuses.
    func write(_ write: RecordWrite) throws(StorageError) {
        do {
            if let bucket = write.bucket {
                commit(try land([write], bucket: bucket))
            } else {
                try writeOwnFile(write, file: write.file!)
            }
        } catch {
            counters.writeErrors.add(1, ordering: .relaxed)
            throw error
        }
    }

    private func writeOwnFile(_ write: RecordWrite, file: Data) throws(StorageError) {
        let written = try disk.withExclusiveAccess(to: write.name) { () throws(StorageError) -> Bool in
            guard index.areCurrent([write.version]) == [true] else { return false }
            try disk.write(file, as: write.name)
            return true
        }
        if written {
            remove(index.commit([(write.version, .ownFile(length: file.count))]).evicted)
            // After the commit: the file is in place even if its folder's flush fails.
            try disk.flushFolders(of: write.name)
        }
    }

    /// Gathers the versions still current into blocks and appends them to
    /// the bucket's segment with one write call.
    /// - Returns: where each landed, for `commit` to tell the index.
    private func land(_ writes: [RecordWrite], bucket: SegmentStore.Bucket) throws(StorageError) -> [Landed] {
        let areCurrent = index.areCurrent(writes.map(\.version))
        let current = zip(writes, areCurrent).filter(\.1).map(\.0)
        guard !current.isEmpty else { return [] }
        let locations = try appendBlocks(current.map { $0.record! }, bucket: bucket)
        return zip(current, locations).map { Landed(write: $0, location: $1) }
    }

    /// A record appended to a segment, not committed to the index yet.
    private struct Landed {
        var write: RecordWrite
        var location: RecordLocation
    }

    /// Commits where records landed, in one call: the commit takes the
    /// store's lock, which a set then waits for, and a commit per bucket (W8
    /// spreads a batch over dozens) handed that lock back and forth 20,000
    /// times a million sets.
    private func commit(_ landed: [Landed]) {
        guard !landed.isEmpty else { return }
        let commit = index.commit(landed.map { (version: $0.write.version, location: $0.location) })
        remove(commit.evicted)
        // Keys whose previous version had a file of its own, which the segment
        // replaces: almost always none, so no key of the batch is hashed to find out.
        guard !commit.leftOwnFiles.isEmpty else { return }
        let left = Set(commit.leftOwnFiles)
        for write in landed.lazy.map(\.write) where left.contains(write.version) {
            disk.withExclusiveAccess(to: write.name) {
                if !index.keepsOwnFile(space: write.version.space, key: write.version.key) { disk.delete(write.name) }
            }
        }
    }

    /// Gathers `records`, in order, into blocks of about
    /// `SegmentBlock.targetRawLength` raw bytes, and appends them all to the
    /// bucket's segment with one write call.
    /// - Returns: each record's location.
    func appendBlocks(_ records: [SegmentBlock.Record], bucket: SegmentStore.Bucket) throws(StorageError) -> [RecordLocation] {
        var bytes = Data()
        // Each record's block offset within `bytes`, its index in its block and its share.
        var placed: [(offset: Int, index: Int, share: Int)] = []
        placed.reserveCapacity(records.count)
        // Each block is a run of `records`, sealed where it lies.
        var start = records.startIndex
        var length = 0
        func seal(through end: Int) {
            let (sealed, charges) = SegmentBlock.Builder.seal(records[start ..< end], compression: blockCompression)
            for (index, charge) in charges.enumerated() { placed.append((bytes.count, index, charge)) }
            bytes.append(sealed)
            (start, length) = (end, 0)
        }
        for index in records.indices {
            let weight = records[index].weight
            if !SegmentBlock.Builder.fits(weight: weight, after: length, count: index - start) { seal(through: index) }
            length += weight
        }
        seal(through: records.endIndex)
        let placement = try segments.append(bytes, bucket: bucket)
        return placed.map { record in
            RecordLocation(segment: placement.segment, offset: placement.offset + record.offset, index: record.index, length: record.share)
        }
    }

    /// Writes `manifest` as the manifest: from now on it is the checkpoint
    /// that recovery replays newer records from. Call inside `disk.withManifestWriter`.
    func writeCheckpoint(_ manifest: [UInt8], nextSequence: UInt64) throws(StorageError) {
        try disk.writeManifest(manifest)
        segments.noteCheckpoint(nextSequence)
    }

    // MARK: - Removing

    /// Records the removals on disk: a tombstone each (appended together) and
    /// the deletion of files of their own, unless a newer version owns the name now.
    func remove(_ removals: [RecordRemoval]) {
        guard !removals.isEmpty else { return }
        if writesTombstones {
            let tombstones = removals.filter { $0.tombstoneSequence != 0 }.map { removal in
                SegmentBlock.Record(
                    key: removal.name.canonicalKey, space: removal.name.space, kind: removal.kind, expiry: removal.expiry,
                    sequence: removal.tombstoneSequence, isTombstone: true, value: Data()
                )
            }
            if !tombstones.isEmpty {
                do throws(StorageError) {
                    let locations = try appendBlocks(tombstones, bucket: .tombstones)
                    for (location, tombstone) in zip(locations, tombstones) {
                        segments.noteAppended(location, sequence: tombstone.sequence, live: false)
                    }
                } catch {
                    // The removal stands in memory; after a crash before the next
                    // checkpoint the key may come back, as in `async` durability.
                    logger.error("Kache could not append tombstones: \(error)")
                    counters.writeErrors.add(1, ordering: .relaxed)
                }
            }
        }
        for removal in removals where removal.mayHaveOwnFile {
            disk.withExclusiveAccess(to: removal.name) {
                if !index.keepsOwnFile(space: removal.space, key: removal.key) { disk.delete(removal.name) }
            }
        }
    }

    // MARK: - Batches of the write-behind queue

    /// Runs a batch of the write-behind queue: small records appended per
    /// bucket with one write call each, large files written one by one,
    /// removals last. A failed write can't reach its caller any more: the
    /// entry leaves the cache (so nothing stale is served later), the error
    /// is counted and logged, and returned for the next `save()` to throw.
    /// - Returns: the first failure that lost a write, nil when none did.
    func perform(_ jobs: [Job], gathering: GatheredBlocks? = nil) -> StorageError? {
        var byBucket: [SegmentStore.Bucket: [RecordWrite]] = [:]
        var removals: [RecordRemoval] = []
        var lost: StorageError?
        for job in jobs {
            switch job {
            case let .write(write):
                if let bucket = write.bucket {
                    byBucket[bucket, default: []].append(write)
                } else {
                    do { try writeOwnFile(write, file: write.file!) } catch { lost = lost ?? failed([write], error) }
                }
            case let .delete(removal):
                removals.append(removal)
            }
        }
        var landed: [Landed] = []
        for (bucket, writes) in byBucket {
            let ready = gathering?.gather(writes, bucket: bucket) ?? writes
            guard !ready.isEmpty else { continue }
            do { landed += try land(ready, bucket: bucket) } catch { lost = lost ?? failed(ready, error) }
        }
        commit(landed)
        remove(removals)
        return lost
    }

    /// Appends the writes `gathering` held back for longer than it lets them
    /// wait (all of them when `all`), in blocks as full as they got.
    /// - Returns: the first failure that lost a write, nil when none did.
    func appendGathered(_ gathering: GatheredBlocks, all: Bool) -> StorageError? {
        var lost: StorageError?
        var landed: [Landed] = []
        let overdue = gathering.takeOverdue(all: all)
        for (bucket, writes) in overdue {
            do { landed += try land(writes, bucket: bucket) } catch { lost = lost ?? failed(writes, error) }
        }
        commit(landed)
        for writes in overdue.values { gathering.release(writes) }
        return lost
    }

    /// Takes the versions of `writes` that are still current out of the cache.
    /// - Returns: `error` if that lost any of them (a newer version replaced the others).
    private func failed(_ writes: [RecordWrite], _ error: StorageError) -> StorageError? {
        var lost: StorageError?
        for write in writes {
            logger.error("Kache could not write an entry: \(error)", metadata: ["key": "\(write.version.key.prefix(120))"])
            counters.writeErrors.add(1, ordering: .relaxed)
            if var removal = index.removeUnwritten(write.version) {
                lost = error
                removal.mayHaveOwnFile = true
                remove([removal])
            }
        }
        return lost
    }

    // MARK: - Reading

    /// Reads and verifies the record at `location` (a file of its own, or
    /// one `pread` in a segment), checking that it holds this very key.
    /// `file`: the segment file, taken with the location, so that it still
    /// reads if the file was deleted since.
    func readRecord(_ name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?, maximumLength: Int) -> RecordRead {
        if location.isOwnFile { return disk.read(name, maximumLength: maximumLength) }
        guard let file, file.id == location.segment else { return .missing }
        do {
            let (header, payload) = try SegmentStore.readRecord(at: location) { file.read(offset: $0, into: $1) }
            guard header.key == name.canonicalKey, header.space == name.space, !header.isTombstone else {
                return .damaged(.wrongEntry(expectedKey: name.canonicalKey, foundKey: header.key), inode: 0)
            }
            return .entry(header, payload: payload)
        } catch {
            switch error {
            case let .unreadable(code): return .unreadable(errno: code)
            case let .damaged(damage): return .damaged(damage, inode: 0)
            }
        }
    }

    /// Reads the record of `version`, the current version of its key, at
    /// `location`. Compaction may move the record between the lookup and the
    /// read: then the index is asked again, a few times.
    /// - Returns: what the read found, and the location it was read at.
    func read(
        _ version: RecordVersion, name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?, maximumLength: Int
    ) -> (RecordRead, RecordLocation) {
        var location = location
        var file = file
        for _ in 0 ..< 4 {
            let result = readRecord(name, at: location, in: file, maximumLength: maximumLength)
            if case .missing = result, !location.isOwnFile, let moved = index.locations(of: [version])[0], moved != location {
                location = moved
                file = moved.isOwnFile ? nil : segments.file(moved.segment)
                continue
            }
            return (result, location)
        }
        return (.missing, location)
    }
}
