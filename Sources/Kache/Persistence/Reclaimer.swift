import Foundation
import KacheStorage
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
final class Reclaimer: Sendable {
    let persister: Persister
    let compactionThreshold: Double
    let clock: any WallClock
    private let running = Atomic<Bool>(false)

    /// Checkpoint once this many bytes were appended since the last one (or
    /// the live bytes, if more: a checkpoint writes every live entry's line).
    static let checkpointInterval = 4 << 20
    /// The most bytes one reclaim copies, so a writer that runs it waits little.
    static let compactionBytesPerRound = 8 << 20

    init(persister: Persister, compactionThreshold: Double, clock: any WallClock) {
        self.persister = persister
        self.compactionThreshold = compactionThreshold
        self.clock = clock
    }

    private var store: Store { persister.store }
    private var disk: DiskStore { persister.disk }
    private var segments: SegmentStore { persister.segments }

    /// Reclaims if a checkpoint is due or the disk budget is overrun by dead
    /// bytes; returns at once if another thread is reclaiming. Call outside
    /// any change under way (it pauses changes to delete files).
    func reclaimIfDue() {
        // Over the budget, reclaim sooner, but not on every set: a checkpoint
        // can only free what was appended since the last one.
        let soon = segments.maximumLength / 4
        let (hasDeadBytes, dueByAppends, dueIfOverBudget) = segments.withLedger { ledger in
            (ledger.deadBytes > 0,
             ledger.appendedSinceCheckpoint >= max(Reclaimer.checkpointInterval, ledger.liveBytes),
             ledger.appendedSinceCheckpoint >= soon)
        }
        guard hasDeadBytes, dueByAppends || dueIfOverBudget && store.withLock({ $0.isOverDiskBudgetWithDeadBytes }) else { return }
        reclaim(checkpointing: true)
    }

    /// Runs the three steps (the first only when `checkpointing`), unless
    /// another thread is at it.
    func reclaim(checkpointing: Bool) {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        defer { running.store(false, ordering: .releasing) }
        if checkpointing {
            do {
                try checkpoint()
            } catch {
                persister.logger.warning("Kache could not write a checkpoint; dead segment bytes stay for now: \(error)")
                return
            }
        }
        sealFilesWorthReclaiming()
        deleteEmptyFiles()
        compact()
        deleteEmptyFiles()
    }

    /// Seals the open files that hold nothing live or whose dead bytes pass
    /// the threshold: from now on they only lose bytes, and can go.
    private func sealFilesWorthReclaiming() {
        segments.sealFilesWorthReclaiming(threshold: compactionThreshold)
    }

    /// Writes the manifest as it is now; the dirty marker stays (only `save()` clears it).
    private func checkpoint() throws(KacheError) {
        try disk.withManifestWriter { () throws(KacheError) in
            guard !store.withLock({ $0.isClosed }) else { return }
            try persister.writeManifest(persister.takeManifestSnapshot(savedAt: clock.nanosecondsSince1970()))
        }
    }

    /// Deletes the sealed, covered files that hold nothing live
    /// (`SegmentStore.retireEmptyFiles`).
    ///
    /// Retired under the store's lock: readers take a record's location and
    /// its file under it, so one that looked up a record before still reads
    /// it after the unlink, and none finds a location in a retired file after.
    func deleteEmptyFiles() {
        let retired = store.withLock { _ in segments.retireEmptyFiles() }
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
            let now = clock.nanosecondsSince1970()
            let live = store.withLock { state in
                scan.records.filter { record in
                    guard !record.header.isTombstone, let space = state.spaceIndex[record.header.space] else { return false }
                    let here = RecordLocation(segment: id, offset: UInt32(record.offset), length: record.length)
                    return state.currentLocation(space: space, key: record.header.key, sequence: record.header.sequence) == here
                }
            }
            var byBucket: [SegmentStore.Bucket: [SegmentStore.ScannedRecord]] = [:]
            for record in live {
                byBucket[SegmentStore.Bucket(expiry: record.header.expiry, now: now), default: []].append(record)
            }
            for (bucket, records) in byBucket {
                var out = Data(capacity: records.reduce(0) { $0 + $1.length })
                for record in records { out.append(bytes[record.offset ..< record.offset + record.length]) }
                guard let placement = try? segments.append(out, bucket: bucket),
                      (try? segments.flush(placement.segment)) != nil
                else { return }
                copied += out.count
                store.withLock { state in
                    var offset = placement.offset
                    for record in records {
                        let from = RecordLocation(segment: id, offset: UInt32(record.offset), length: record.length)
                        let to = RecordLocation(segment: placement.segment, offset: UInt32(offset), length: record.length)
                        offset += record.length
                        if let space = state.spaceIndex[record.header.space] {
                            _ = state.relocate(space: space, key: record.header.key, sequence: record.header.sequence, from: from, to: to)
                        }
                    }
                }
            }
            store.withLock { $0.counters.compactions += 1 }
        }
    }
}
