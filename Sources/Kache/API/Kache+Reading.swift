import Foundation
import KacheStorage

extension Kache {
    /// Reads the record of a live entry whose value is not in memory, and
    /// promotes the value.
    ///
    /// A missing or damaged record reads as a miss and the entry leaves the
    /// index (a damaged file of its own is moved to quarantine; a damaged
    /// record in a segment stays where it is, counted dead, and the rest of
    /// its segment is still served), counted and logged, as a change under
    /// way, so the manifest is marked stale first. A record that can't be read
    /// (`EMFILE`, `EACCES`, `EIO`…) is not damage: the read is a miss, counted
    /// in `readErrors` and logged, and nothing changes.
    /// `insideChange`: the caller runs as a change under way already.
    func readFromDisk(
        _ version: RecordVersion, name: EntryName, at location: RecordLocation, in file: SegmentStore.SegmentFile?,
        records: RecordStore, insideChange: Bool
    ) -> Data? {
        let (space, key, sequence) = (version.space, version.key, version.sequence)
        let (result, location) = records.read(version, name: name, at: location, in: file, maximumLength: maximumFileLength)
        switch result {
        case let .entry(header, payload) where header.sequence == sequence:
            store.withLock { $0.promote(space: space, key: key, sequence: sequence, value: payload) }
            return payload
        case .entry, .missing:
            // The record holds another version (a newer one landed after the
            // lookup) or is gone: nothing to trust for this version.
            changingIndex(insideChange: insideChange) {
                store.withLock { state in
                    state.counters.misses += 1
                    state.removeVersion(space: space, key: key, sequence: sequence)
                }
            }
            return nil
        case let .damaged(damage, inode):
            changingIndex(insideChange: insideChange) {
                quarantineDamaged(name, at: location, inode: inode, damage: damage, records: records)
                store.withLock { state in
                    state.counters.misses += 1
                    state.removeVersion(space: space, key: key, sequence: sequence)
                }
            }
            return nil
        case let .unreadable(code):
            noteUnreadable(name, errno: code)
            return nil
        }
    }

    /// Moves a damaged file of its own to quarantine, or leaves a damaged
    /// record in its segment (counted dead once its entry leaves); logs and
    /// counts either.
    func quarantineDamaged(_ name: EntryName, at location: RecordLocation, inode: UInt64, damage: EntryFile.Damage, records: RecordStore) {
        let disk = records.disk
        if location.isOwnFile {
            let moved = disk.withExclusiveAccess(to: name) { disk.quarantine(name, inode: inode) }
            configuration.logger.warning("Kache moved a damaged entry file to quarantine: \(damage)", metadata: ["file": "\(disk.path(of: name))"])
            if let moved { store.withLock { $0.noteQuarantined(bytes: moved) } }
        } else {
            configuration.logger.warning(
                "Kache found a damaged record in a segment; it reads as a miss and its bytes count as dead: \(damage)",
                metadata: ["segment": "\(records.segments.path(of: location.segment))", "offset": "\(location.offset)"]
            )
            store.withLock { $0.counters.quarantined += 1 }
        }
    }

    /// Counts and logs a read that failed for a reason other than the record's bytes.
    func noteUnreadable(_ name: EntryName, errno code: Int32) {
        configuration.logger.warning(
            "Kache could not read an entry's record; it reads as a miss and stays in place",
            metadata: ["file": "\(disk.map { $0.path(of: name) } ?? "")", "errno": "\(code)", "error": "\(String(cString: strerror(code)))"]
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
        guard let disk, !insideChange else { return body() }
        guard disk.beginChange() else { return }
        defer { disk.endChange() }
        body()
    }
}
