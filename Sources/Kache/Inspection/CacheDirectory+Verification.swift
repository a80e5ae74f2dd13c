import Foundation
import KacheStorage

extension CacheDirectory {
    // MARK: - Report types

    /// Something wrong with a cache directory.
    public struct Problem: Sendable, Equatable, Codable {
        /// The kinds of problem.
        public enum Kind: String, Sendable, Equatable, Codable {
            /// A file under `objects/` is not a valid entry: bad header, checksum,
            /// length, payload, or a name that is not its own.
            case damagedFile = "damaged-file"
            /// A file under `objects/` could not be opened or read (permission,
            /// I/O error, descriptors exhausted): not damage, so it is left in place.
            case unreadableFile = "unreadable-file"
            /// The manifest does not decode.
            case damagedManifest = "damaged-manifest"
            /// A current manifest lists an entry whose file is not there.
            case missingFile = "missing-file"
            /// A current manifest lists another version of an entry than its file holds.
            case mismatchedFile = "mismatched-file"
        }

        /// What kind of problem it is.
        public var kind: Kind
        /// The file concerned, relative to the cache directory.
        public var file: String
        /// What is wrong, as a phrase.
        public var reason: String
    }

    /// The state of a directory's manifest.
    public enum ManifestState: String, Sendable, Equatable, Codable {
        /// There is none (no writer has saved or closed yet); opening reads the entry files.
        case absent
        /// It describes the files exactly.
        case current
        /// Files changed since it was saved (a writer is running, or did not close); opening reads the entry files.
        case stale
        /// It does not decode.
        case damaged
    }

    /// What ``CacheDirectory/verify()`` found.
    public struct Verification: Sendable, Equatable, Codable {
        /// The directory's path.
        public var path: String
        /// Entry files read whole and checked.
        public var filesChecked: Int
        /// Their total length.
        public var bytesChecked: Int
        /// The manifest's state.
        public var manifest: ManifestState
        /// Everything wrong, files in path order; empty when all is well.
        public var problems: [Problem]

        /// Whether nothing is wrong.
        public var isHealthy: Bool { problems.isEmpty }
    }

    /// What ``CacheDirectory/repair()`` did.
    public struct Repair: Sendable, Equatable, Codable {
        /// What was wrong, as verified while holding the writer lock.
        public var verification: Verification
        /// The damaged files moved into `quarantine/` (paths as they were).
        public var quarantined: [String]
        /// Whether the manifest was rewritten from the entry files.
        public var manifestRewritten: Bool
        /// Entries the rewritten manifest lists.
        public var manifestEntries: Int
    }

    // MARK: - Verifying

    /// Reads every entry file whole and checks its header, lengths, checksum,
    /// payload and name; decodes the manifest; and, when the manifest is
    /// current, checks that every entry it lists has its file, in that version.
    /// Read-only: no lock, no change.
    ///
    /// - Throws: ``CacheDirectoryError/io(path:reason:)`` when a folder can't be listed.
    ///   A damaged manifest is a ``Problem``, not an error.
    /// - Complexity: O(bytes): every file is read once.
    public func verify() throws(CacheDirectoryError) -> Verification {
        let (read, scan) = try consistentRead(checksums: true)
        return verification(read: read, scan: scan)
    }

    private func verification(read: ManifestRead, scan: ObjectScan) -> Verification {
        var problems = scan.damaged.map { Problem(kind: .damagedFile, file: $0.file, reason: $0.reason) }
            + scan.unreadable.map { Problem(kind: .unreadableFile, file: $0.file, reason: $0.reason) }
        let state: ManifestState
        if let damage = read.damage {
            state = .damaged
            problems.append(Problem(kind: .damagedManifest, file: DiskStore.manifestFile, reason: damage))
        } else if let manifest = read.manifest {
            state = read.isCurrent ? .current : .stale
            if read.isCurrent {
                problems += disagreements(between: manifest, and: scan)
            }
        } else {
            state = .absent
        }
        problems.sort { $0.file < $1.file }
        return Verification(
            path: root, filesChecked: scan.files.count + scan.damaged.count, bytesChecked: scan.bytesRead,
            manifest: state, problems: problems
        )
    }

    /// Entries a current manifest lists whose file is missing or holds another version.
    private func disagreements(between manifest: Manifest, and scan: ObjectScan) -> [Problem] {
        let files = Dictionary(
            scan.files.filter(\.location.isOwnFile).map { ($0.file, $0.header.sequence) }, uniquingKeysWith: { first, _ in first }
        )
        let records = Set(scan.files.filter { !$0.location.isOwnFile }.map { "\($0.header.space)\u{0}\($0.header.key)\u{0}\($0.header.sequence)" })
        let damaged = Set((scan.damaged + scan.unreadable).map(\.file))
        var problems: [Problem] = []
        for space in manifest.spaces {
            for saved in space.entries {
                let entry = Entry(saved: saved, in: space)
                guard !damaged.contains(entry.file) else { continue }
                let owner = space.name.isEmpty ? "top-level key" : "key in \(space.name)"
                if entry.offset != nil {
                    if !records.contains("\(space.name)\u{0}\(saved.key)\u{0}\(saved.sequence)") {
                        problems.append(Problem(
                            kind: .missingFile, file: entry.file,
                            reason: "the manifest lists \(owner) \"\(entry.key.prefix(80))\" in this segment, but its record is missing"
                        ))
                    }
                    continue
                }
                switch files[entry.file] {
                case nil:
                    problems.append(Problem(
                        kind: .missingFile, file: entry.file,
                        reason: "the manifest lists \(owner) \"\(entry.key.prefix(80))\", but its file is missing"
                    ))
                case let sequence? where sequence != saved.sequence:
                    problems.append(Problem(
                        kind: .mismatchedFile, file: entry.file,
                        reason: "the manifest lists version \(saved.sequence) of \(owner) \"\(entry.key.prefix(80))\", the file holds version \(sequence)"
                    ))
                default:
                    break
                }
            }
        }
        return problems
    }

    // MARK: - Repairing

    /// Verifies the directory and, if anything is wrong, takes the writer
    /// lock, verifies again, moves every damaged file (and a damaged manifest)
    /// into `quarantine/`, and rewrites the manifest from the entry files that
    /// remain (keeping the key spaces' capacities and counters when the old
    /// manifest decodes). A healthy directory is left untouched, lock and all.
    ///
    /// A file that can't be opened or read (permission, I/O error, descriptors
    /// exhausted) is reported as ``Problem/Kind/unreadableFile`` and left in
    /// place: that says nothing about its bytes. The manifest then stays
    /// stale, so the next open reads the files again.
    ///
    /// Taking the lock does what any writer's opening does to the directory:
    /// missing folders are created and `tmp/` is cleared; a repair also
    /// deletes the temporary files a crash left in the shard folders.
    /// - Throws: ``CacheDirectoryError/locked(path:holderPID:)`` when a writer
    ///   holds the directory, ``CacheDirectoryError/io(path:reason:)``.
    /// - Complexity: O(bytes), twice when something is wrong.
    public func repair() throws(CacheDirectoryError) -> Repair {
        let first = try verify()
        guard !first.isHealthy else {
            return Repair(verification: first, quarantined: [], manifestRewritten: false, manifestEntries: 0)
        }
        let disk: DiskStore
        do {
            disk = try DiskStore(root: root, syncsEveryWrite: true)
        } catch {
            throw CacheDirectoryError(opening: error, root: root)
        }
        defer { disk.close() }
        // Under the lock nothing else changes the files: look again before touching anything.
        let read = try readManifest()
        let scan = try scanObjects(checksums: true)
        let found = verification(read: read, scan: scan)
        guard !found.isHealthy else {
            return Repair(verification: found, quarantined: [], manifestRewritten: false, manifestEntries: 0)
        }
        disk.noteChange()
        disk.deleteTemporaryFiles(scan.temporaryFiles)
        var moved: [String] = []
        // A segment's damaged runs stay where they are: its other records are
        // live. They count as dead bytes, and compaction leaves them behind.
        for damaged in scan.damaged where !damaged.file.hasPrefix(DiskStore.segmentsFolder + "/")
            && disk.quarantine(path: path(damaged.file), inode: 0) != nil
        {
            moved.append(damaged.file)
        }
        if read.damage != nil, disk.quarantine(path: path(DiskStore.manifestFile), inode: 0) != nil {
            moved.append(DiskStore.manifestFile)
        }
        let manifest = CacheDirectory.manifest(
            rebuiltFrom: scan.files, keepingKeySpacesOf: read.manifest, unreadable: Set(scan.unreadable.map(\.file))
        )
        do {
            try disk.writeManifest(manifest.encoded())
        } catch {
            throw .io(path: path(DiskStore.manifestFile), reason: KacheError(error).description)
        }
        // A file that could not be read is not in the new manifest: leave it
        // stale, so the next open reads the files again rather than orphan it.
        disk.clearStaleMarker { scan.unreadable.isEmpty }
        return Repair(
            verification: found, quarantined: moved, manifestRewritten: true,
            manifestEntries: manifest.spaces.reduce(0) { $0 + $1.entries.count }
        )
    }

    /// A manifest listing every entry file, in the key spaces of `old` where their kinds agree.
    ///
    /// Its checkpoint covers every record found, so the records it does not
    /// list count as dead from then on. With files that could not be read
    /// (`unreadable`), it can't: it keeps the old checkpoint, and the old
    /// manifest's lines for those files, so nothing in them is judged dead.
    static func manifest(rebuiltFrom files: [FoundFile], keepingKeySpacesOf old: Manifest?, unreadable: Set<String> = []) -> Manifest {
        let index = IndexBuilder(manifest: old, useManifestEntries: false, files: files)
        var spaces = index.spaces
        var nextSequence = unreadable.isEmpty ? files.reduce(old?.nextSequence ?? 1) { max($0, $1.header.sequence + 1) } : old?.nextSequence ?? 1
        if !unreadable.isEmpty, let old {
            for space in old.spaces {
                guard let index = spaces.firstIndex(where: { $0.name == space.name && $0.kind == space.kind }) else { continue }
                for entry in space.entries where unreadable.contains(Entry(saved: entry, in: space).file) {
                    spaces[index].entries.append(entry)
                }
            }
        }
        for (entry, space, expiry) in index.entries {
            spaces[space].entries.append(Manifest.Entry(
                key: entry.key, expiry: expiry, sequence: entry.sequence, rawSize: entry.size, fileSize: entry.fileSize,
                place: entry.location?.place ?? 0, diskSequence: entry.sequence
            ))
            if unreadable.isEmpty { nextSequence = max(nextSequence, entry.sequence + 1) }
        }
        return Manifest(savedAt: Timestamp(Date()), nextSequence: nextSequence, spaces: spaces)
    }
}

extension CacheDirectoryError {
    /// The error of a writer's opening of the directory at `root`.
    init(opening error: StorageError, root: String) {
        switch error {
        case let .directoryLocked(_, holderPID): self = .locked(path: root, holderPID: holderPID)
        case let .directoryUnusable(path, reason): self = .io(path: path, reason: reason)
        default: self = .io(path: root, reason: KacheError(error).description)
        }
    }
}
