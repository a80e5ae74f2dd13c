import Foundation
import Logging

/// Where every version's bytes live: the one interface the engine writes,
/// reads, removes and recovers records through.
///
/// It chooses between a segment and a file of its own, appends (one write
/// call a batch, group commit in `fsync`), runs the write-behind writer of
/// `async` durability, writes tombstones and checkpoints, and gives dead
/// bytes back (`Reclaimer`). The index above it holds opaque locations and
/// answers through `RecordIndex`.
///
/// One file per part: here the interface, `RecordFiles` (the writes and
/// reads themselves), `WriteBehind`, `Reclaimer`, `+Recovery` (what a rebuild
/// after a crash finds, through `RecordScan`, the one scan of the directory's
/// records, which the inspection tools run read-only).
package final class RecordStore: Sendable {
    /// The directory: its layout, lock, files of their own and segment files.
    package let disk: DiskStore
    let files: RecordFiles
    /// The background writer, in `async` durability only.
    package let writeBehind: WriteBehind?
    let reclaimer: Reclaimer
    /// Records shorter than this go to segment files.
    package let segmentThreshold: Int

    /// - Parameters:
    ///   - writeBehindLimit: the queued bytes after which a caller helps write;
    ///     nil writes on the caller's thread (`sync`, `fsync`).
    ///   - queuedBytes: where the queue counts what it holds, for the memory budget.
    package init(
        disk: DiskStore, index: any RecordIndex, logger: Logger, segmentThreshold: Int, blockCompression: SegmentBlock.Compression = .fast,
        writeBehindLimit: Int?, queuedBytes: QueuedBytes, compactionThreshold: Double, now: @escaping @Sendable () -> Timestamp
    ) {
        self.disk = disk
        self.segmentThreshold = segmentThreshold
        let files = RecordFiles(
            disk: disk, index: index, logger: logger, blockCompression: blockCompression,
            writesTombstones: segmentThreshold > 0 || !disk.segments.lengths().isEmpty, counters: StorageCounters()
        )
        self.files = files
        let reclaimer = Reclaimer(files: files, compactionThreshold: compactionThreshold, now: now)
        self.reclaimer = reclaimer
        writeBehind = writeBehindLimit.map { limit in
            WriteBehind(files: files, limit: limit, held: queuedBytes) { reclaimer.reclaimIfDue() }
        }
    }

    package var segments: SegmentStore { disk.segments }

    // MARK: - Writing

    /// The segment bucket a record of `length` bytes expiring at `expiry`
    /// goes to; nil for a file of its own.
    package func bucket(forLength length: Int, expiry: Timestamp, now: Timestamp) -> SegmentStore.Bucket? {
        length < segmentThreshold ? SegmentStore.Bucket(expiry: expiry, now: now) : nil
    }

    /// `file`'s bytes where the write-behind queue keeps them until written
    /// (`StagingArea`); as they are when nothing is queued.
    package func stage(_ file: Data) -> Data {
        writeBehind?.staging.stage(file) ?? file
    }

    /// Writes one version now, if it is still current; throws when the disk refuses.
    package func write(_ write: RecordWrite) throws(StorageError) {
        try files.write(write)
    }

    /// Queues a version and the removals it caused for the writer
    /// (`async` durability): the caller returns at once, or helps write when
    /// the queue is over its limit.
    package func queue(_ write: RecordWrite, removals: [RecordRemoval]) {
        guard let writeBehind else { preconditionFailure("queue(_:removals:) is for async durability") }
        writeBehind.enqueue(write, removals: removals)
    }

    /// Records removals on disk: a tombstone each and the deletion of files
    /// of their own (queued in `async` durability).
    package func remove(_ removals: [RecordRemoval]) {
        guard !removals.isEmpty else { return }
        if let writeBehind {
            writeBehind.enqueue(removals.map { .delete($0) })
        } else {
            files.remove(removals)
        }
    }

    /// Records removals on disk now, on this thread, in any durability.
    package func removeNow(_ removals: [RecordRemoval]) {
        files.remove(removals)
    }

    // MARK: - Reading

    /// The segment file `location` names, to take with the location (under
    /// the index's lock, which files are retired under) so that it still
    /// reads if the file is deleted before the read.
    package func segmentFile(for location: RecordLocation) -> SegmentStore.SegmentFile? {
        location.isOwnFile ? nil : segments.file(location.segment)
    }

    /// Reads and verifies the record at `location`, checking that it holds this very key.
    package func readRecord(_ name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?, maximumLength: Int) -> RecordRead {
        files.readRecord(name, at: location, in: file, maximumLength: maximumLength)
    }

    /// Reads the record of `version`, the current version of its key,
    /// following it if compaction moves it meanwhile.
    /// - Returns: what the read found, and the location it was read at.
    package func read(
        _ version: RecordVersion, name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?, maximumLength: Int
    ) -> (RecordRead, RecordLocation) {
        files.read(version, name: name, at: location, in: file, maximumLength: maximumLength)
    }

    // MARK: - Checkpoints and durability

    /// Writes `manifest` as the checkpoint that recovery replays newer
    /// records from. Call inside `disk.withManifestWriter`.
    package func writeCheckpoint(_ manifest: [UInt8], nextSequence: UInt64) throws(StorageError) {
        try files.writeCheckpoint(manifest, nextSequence: nextSequence)
    }

    /// Flushes every file written to the device, then throws the first
    /// `async` write lost since the last time, if any.
    package func syncEverything() throws(StorageError) {
        try disk.syncEverything()
        if let lost = writeBehind?.takeLostWrite() { throw lost }
    }

    /// Gives dead segment bytes back if enough piled up. In `async` the
    /// writer thread does it after its batches; call it after a write otherwise.
    package func reclaimIfDue() {
        reclaimer.reclaimIfDue()
    }

    /// Gives back the dead bytes that the checkpoint just written covers.
    package func reclaimAfterCheckpoint() {
        reclaimer.reclaim(checkpointing: false)
    }

    // MARK: - The write-behind queue

    /// Runs every queued job and waits for those in flight.
    package func drain() {
        writeBehind?.drain()
    }

    /// Drains the queue and stops the writer thread.
    package func stop() {
        writeBehind?.stop()
    }

    /// Whether no write or removal is queued or running.
    package var isIdle: Bool { writeBehind?.isIdle ?? true }

    /// Whether a change now would wait on the disk: in `sync`/`fsync`, or
    /// when the queue is over its limit and the caller would help write.
    package var changesWaitForDisk: Bool { writeBehind.map(\.isOverLimit) ?? true }

    // MARK: - Statistics

    package var writeErrors: UInt64 { files.counters.writeErrors.load(ordering: .relaxed) }
    package var compactions: UInt64 { files.counters.compactions.load(ordering: .relaxed) }
    package var pendingWrites: Int { writeBehind?.pendingCount ?? 0 }
    package var bytesWritten: UInt64 { disk.bytesWritten }
}
