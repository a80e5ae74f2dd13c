#if canImport(Glibc)
import Glibc
#endif

/// Changes under way and the `dirty` marker: the manifest is trusted at open
/// only if no change touched the files since it was written.
extension DiskStore {
    /// Runs `body` (snapshot, write, clear the marker) while no other save does.
    package func withManifestWriter<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try manifestWriter.withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    // MARK: - The dirty marker

    /// Whether the `dirty` marker is present: files changed since the manifest was written.
    package var isManifestStale: Bool { markerPresent.withLock { $0 } }

    /// Whether `withChangesPaused` holds changes back now (`beginChange` waits).
    package var changesArePaused: Bool { isPaused.load(ordering: .sequentiallyConsistent) }

    /// Called before an index change and the file work it implies: counts the
    /// change as under way and marks the manifest as stale. Pair with `endChange()`
    /// once the file work is done (or queued for the write-behind thread).
    ///
    /// Returns false, counting nothing, once `stopChanges()` was called: the
    /// caller must then touch no file. (Both sides use sequentially consistent
    /// atomics: a change either counts before the closer looks, or sees it closing.)
    ///
    /// While `withChangesPaused` runs, it waits. A change must not begin
    /// another inside it (the inner one would wait for a pause that waits for
    /// the outer one): nested work says so and skips this.
    package func beginChange() -> Bool {
        while true {
            changesUnderWay.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if isClosing.load(ordering: .sequentiallyConsistent) {
                changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                return false
            }
            if !isPaused.load(ordering: .sequentiallyConsistent) { break }
            changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            while isPaused.load(ordering: .sequentiallyConsistent), !isClosing.load(ordering: .sequentiallyConsistent) {
                usleep(100)
            }
        }
        noteChange()
        return true
    }

    /// Runs `body` while no change is under way: those under way finish first,
    /// and those that begin meanwhile wait until it returns. For rebuilding the
    /// index (`load()`), which must not reset it under a write in flight.
    package func withChangesPaused<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try pauser.withLock { (_: inout Void) throws(E) -> R in
            isPaused.store(true, ordering: .sequentiallyConsistent)
            defer { isPaused.store(false, ordering: .sequentiallyConsistent) }
            while changesUnderWay.load(ordering: .sequentiallyConsistent) > 0 { usleep(100) }
            return try body()
        }
    }

    /// Ends a change begun with `beginChange()`.
    package func endChange() {
        changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    /// Marks the manifest as stale, once.
    package func noteChange() {
        markerPresent.withLock { present in
            guard !present else { return }
            let fd = open("\(root)/\(Self.dirtyFile)", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd >= 0 { Glibc.close(fd) }
            // Flushed in every durability, once per save: records written
            // after it can reach the disk before the next save (writeback, a
            // torn tail), and an open that then trusted the old manifest
            // would hide them until a later crash brought them back.
            syncFolder(root)
            present = true
        }
    }

    /// Removes the marker after a manifest was written, if no change is under
    /// way and `isStillComplete` (checked while no change can mark it again)
    /// says that the manifest's snapshot is still the index and its files.
    ///
    /// A change counts from before it touches the index until its file work is
    /// done, so a snapshot that saw an index change whose file is not written
    /// (or deleted) yet never clears the marker: the next open then rebuilds
    /// from the files instead of trusting a manifest the files don't match.
    package func clearStaleMarker(if isStillComplete: () -> Bool) {
        markerPresent.withLock { present in
            guard present, changesUnderWay.load(ordering: .sequentiallyConsistent) == 0, isStillComplete() else { return }
            unlink("\(root)/\(Self.dirtyFile)")
            syncFolder(root)
            present = false
        }
    }
}
