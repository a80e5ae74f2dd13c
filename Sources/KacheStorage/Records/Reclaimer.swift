import Foundation
import Synchronization

/// Gives the dead bytes of segment files back to the file system.
///
/// Records turn dead when their entry is replaced, removed, expired or
/// evicted. A file may lose them only once a checkpoint (a manifest written)
/// covers every record in it, because recovery after a crash replays the
/// records written since the last checkpoint. So reclaiming is three steps:
///
/// 1. **Checkpoint** when enough was appended since the last one: write the
///    manifest (the index as it is now).
/// 2. **Delete whole files** that are sealed, covered and hold nothing live:
///    one unlink, nothing copied. Records are grouped by expiry bucket, so
///    this is how most space comes back: a bucket's entries end together.
/// 3. **Compact** covered files whose dead bytes pass `compactionThreshold`:
///    copy their live records forward (same sequence numbers, so a crash at
///    any point leaves two equal copies at worst), flush the copies, point
///    the index at them, then delete the file.
///
/// One reclaim runs at a time, on whichever thread finds it due (the
/// write-behind thread in `async`, a writer in `sync`/`fsync`); each step
/// holds the store's lock only for short bookkeeping.
package final class Reclaimer: Sendable {
    let files: RecordFiles
    let compactionThreshold: Double
    /// The time now, for the expiry buckets of copied records.
    let now: @Sendable () -> Timestamp
    private let running = Atomic<Bool>(false)

    /// Checkpoint once this many bytes were appended since the last one (or
    /// the live bytes, if more: a checkpoint writes every live entry's line).
    static let checkpointInterval = 4 << 20
    /// The most bytes one reclaim copies, so a writer that runs it waits little.
    static let compactionBytesPerRound = 8 << 20

    init(files: RecordFiles, compactionThreshold: Double, now: @escaping @Sendable () -> Timestamp) {
        self.files = files
        self.compactionThreshold = compactionThreshold
        self.now = now
    }

    private var index: any RecordIndex { files.index }
    private var disk: DiskStore { files.disk }
    private var segments: SegmentStore { files.segments }

    /// Reclaims if a checkpoint is due or the disk budget is overrun by dead
    /// bytes; returns at once if another thread is reclaiming. Call outside
    /// any change under way (it pauses changes to delete files).
    package func reclaimIfDue() {
        // Over the budget, reclaim sooner, but not on every set: a checkpoint
        // can only free what was appended since the last one.
        let soon = segments.maximumLength / 4
        let (hasDeadBytes, dueByAppends, dueIfOverBudget) = segments.withLedger { ledger in
            (ledger.deadBytes > 0,
             ledger.appendedSinceCheckpoint >= max(Reclaimer.checkpointInterval, ledger.liveBytes),
             ledger.appendedSinceCheckpoint >= soon)
        }
        guard hasDeadBytes, dueByAppends || dueIfOverBudget && index.isOverBudgetWithDeadBytes else { return }
        reclaim(checkpointing: true)
    }

    /// Runs the three steps (the first only when `checkpointing`), unless
    /// another thread is at it.
    package func reclaim(checkpointing: Bool) {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        defer { running.store(false, ordering: .releasing) }
        if checkpointing {
            do {
                try checkpoint()
            } catch {
                files.logger.warning("Kache could not write a checkpoint; dead segment bytes stay for now: \(error)")
                return
            }
        }
        // Files that hold nothing live or enough dead bytes are sealed: from
        // now on they only lose bytes, and can go.
        segments.sealFilesWorthReclaiming(threshold: compactionThreshold)
        deleteEmptyFiles()
        compact()
        deleteEmptyFiles()
    }

    /// Writes the manifest as it is now, once every file is flushed; the
    /// dirty marker stays (only `save()` clears it).
    ///
    /// Recovery takes the versions a checkpoint lists as the live ones below
    /// its sequence, so one it lists must be on the device first: else a
    /// power cut takes its record, and the version it replaced, which a save
    /// had made durable, is dropped as replaced. The snapshot comes first, so
    /// the flush covers every version it lists (as `save()` does).
    private func checkpoint() throws(StorageError) {
        try disk.withManifestWriter { () throws(StorageError) in
            // Dated by the machine's clock, as `save()` dates it.
            guard let (manifest, nextSequence) = index.checkpoint(savedAt: Timestamp(Date())) else { return }
            try disk.syncEverything()
            try files.writeCheckpoint(manifest, nextSequence: nextSequence)
        }
    }

    /// Deletes the sealed, covered files that hold nothing live
    /// (`SegmentStore.retireEmptyFiles`).
    ///
    /// Retired while no reader is between a record's location and its file
    /// (`RecordIndex.excludingReaders`): one that looked up a record before
    /// still reads it after the unlink, and none finds a location in a retired file after.
    func deleteEmptyFiles() {
        let retired = index.excludingReaders { segments.retireEmptyFiles() }
        segments.unlinkRetired(retired)
    }

    /// Copies the live records of the files most worth compacting forward.
    private func compact() {
        let candidates = segments.withLedger { $0.compactionCandidates(threshold: compactionThreshold) }
        var copied = 0
        for id in candidates where copied < Reclaimer.compactionBytesPerRound {
            guard disk.beginChange() else { return }
            defer { disk.endChange() }
            guard let file = segments.file(id), let scan = try? SegmentStore.scan(file) else { continue }
            let bytes = file.read(offset: 0, length: scan.validLength) ?? Data()
            guard bytes.count == scan.validLength else { continue }
            // The records the index still points at, by bucket.
            let spaces = index.spaces(named: Set(scan.records.map(\.header.space)))
            let found = scan.records.compactMap { record -> (version: RecordVersion, record: SegmentStore.ScannedRecord)? in
                guard !record.header.isTombstone, let space = spaces[record.header.space] else { return nil }
                return (RecordVersion(space: space, key: record.header.key, sequence: record.header.sequence), record)
            }
            let current = index.locations(of: found.map(\.version))
            let now = now()
            // Each block that holds a live record is decoded once.
            var blocks: [Int: [(header: EntryFile.Header, payload: Data)]] = [:]
            var byBucket: [SegmentStore.Bucket: [(version: RecordVersion, from: RecordLocation, record: SegmentBlock.Record)]] = [:]
            for ((version, record), location) in zip(found, current) where location == record.location(in: id) {
                if blocks[record.offset] == nil { blocks[record.offset] = SegmentStore.records(at: record.offset, in: bytes) ?? [] }
                guard let decoded = blocks[record.offset], record.index < decoded.count else { continue }
                let header = decoded[record.index].header
                let copy = SegmentBlock.Record(
                    key: header.key, space: header.space, kind: header.kind, expiry: header.expiry,
                    sequence: header.sequence, value: decoded[record.index].payload
                )
                byBucket[SegmentStore.Bucket(expiry: header.expiry, now: now), default: []].append((version, location!, copy))
            }
            for (bucket, records) in byBucket {
                guard let copies = try? files.appendBlocks(records.map(\.record), bucket: bucket) else { return }
                guard (try? segments.flush(copies[0].segment)) != nil else {
                    // Appended but not known to be on the device: dead copies,
                    // counted so that their file can go once nothing in it lives.
                    for (record, copy) in zip(records, copies) {
                        segments.noteAppended(copy, sequence: record.record.sequence, live: false)
                    }
                    return
                }
                copied += copies.reduce(0) { $0 + $1.length }
                files.remove(index.relocate(zip(records, copies).map { ($0.version, $0.from, $1) }))
            }
            files.counters.compactions.add(1, ordering: .relaxed)
        }
    }
}
