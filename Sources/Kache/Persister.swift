import Foundation
import Logging

/// Carries index changes to the files, in an order that can't go wrong.
///
/// Every write, deletion and quarantine of one file name runs under that
/// name's stripe (`DiskStore.withExclusiveAccess`), and first asks the index
/// whether it is still wanted: a write only if its version is still the
/// current one, a deletion only if the key has no newer version. So jobs may
/// run late, twice over, or in any order on any thread, and the file of a key
/// always ends as its newest version, or absent.
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
    }

    let store: Store
    let disk: DiskStore
    let logger: Logger

    /// Writes the file if this version is still current; throws when the disk refuses.
    func write(_ write: Write) throws(KacheError) {
        let written = try disk.withExclusiveAccess(to: write.name) { () throws(KacheError) -> Bool in
            guard store.withLock({ $0.isCurrent(space: write.space, key: write.key, sequence: write.sequence) }) else {
                return false
            }
            try disk.write(write.file, as: write.name)
            return true
        }
        if written {
            store.withLock { $0.markWritten(space: write.space, key: write.key, sequence: write.sequence, fileSize: write.file.count) }
        }
    }

    /// Deletes the file of a removed entry unless a newer version owns it now.
    func delete(_ removal: Removal) {
        guard removal.hasFile else { return }
        let name = EntryName(space: removal.space, key: removal.key)
        disk.withExclusiveAccess(to: name) {
            guard !store.withLock({ $0.hasEntry(space: removal.spaceIndex, key: removal.key) }) else { return }
            disk.delete(name)
        }
    }

    /// Runs a job of the write-behind queue. A failed write can't reach its
    /// caller any more: the entry leaves the cache (so nothing stale is served
    /// later), the error is counted and logged.
    func perform(_ job: Job) {
        switch job {
        case let .write(write):
            do {
                try self.write(write)
            } catch {
                logger.error("Kache could not write an entry file: \(error)", metadata: ["key": "\(write.key.prefix(120))"])
                let removal = store.withLock { state -> Removal? in
                    guard state.isCurrent(space: write.space, key: write.key, sequence: write.sequence) else { return nil }
                    state.counters.writeErrors += 1
                    return state.remove(space: write.space, key: write.key)
                }
                if var removal {
                    removal.hasFile = true
                    delete(removal)
                }
            }
        case let .delete(removal):
            delete(removal)
        }
    }

    /// Reads the file of a live entry whose value is not in memory, verifies it,
    /// and promotes the value.
    ///
    /// A missing or damaged file reads as a miss and the entry leaves the index
    /// (a damaged file is moved to quarantine, counted and logged), as a change
    /// under way, so the manifest is marked stale first. A file that can't be
    /// opened or read (`EMFILE`, `EACCES`, `EIO`…) is not damage: the read is a
    /// miss, counted in `readErrors` and logged, and nothing changes.
    /// `insideChange`: the caller runs as a change under way already.
    func read(space: Int, key: String, name: EntryName, sequence: UInt64, maximumLength: Int, insideChange: Bool = false) -> Data? {
        switch disk.read(name, maximumLength: maximumLength) {
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
                let moved = disk.withExclusiveAccess(to: name) { disk.quarantine(name, inode: inode) }
                logger.warning("Kache moved a damaged entry file to quarantine: \(damage)", metadata: ["file": "\(disk.path(of: name))"])
                store.withLock { state in
                    state.counters.misses += 1
                    if let moved { state.noteQuarantined(bytes: moved) }
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
            "Kache could not read an entry file; it reads as a miss and stays in place",
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
