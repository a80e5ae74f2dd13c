import Foundation
import KacheStorage
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

// The read-only primitives behind inspection and verification: every file is
// opened read-only, no lock is taken, nothing is created, changed or removed.

// MARK: - The manifest

/// The manifest as found on disk.
struct ManifestRead: Sendable {
    /// The manifest file's path.
    var path: String
    /// The manifest, or nil when there is none.
    var manifest: Manifest?
    /// Why it did not decode, when it exists and is damaged.
    var damage: String?
    /// Its raw format version field, when the file is long enough to have one.
    var version: Int?
    /// Whether the `dirty` marker was absent, so the manifest describes the files exactly.
    var isCurrent: Bool
    /// The manifest's inode and modification time, to notice a save during a scan.
    var identity: FileIdentity?

    /// The manifest, or a `damagedManifest` error.
    func decoded() throws(CacheDirectoryError) -> Manifest? {
        if let damage { throw .damagedManifest(path: path, reason: damage) }
        return manifest
    }
}

/// What distinguishes one version of a file from the next.
struct FileIdentity: Sendable, Equatable {
    var inode: UInt64
    var modified: Int64
}

extension CacheDirectory {
    /// Reads and decodes the manifest, noting whether the `dirty` marker says it is stale.
    func readManifest() throws(CacheDirectoryError) -> ManifestRead {
        let manifestPath = path(DiskStore.manifestFile)
        // The marker is created before any change to the files and removed only
        // after a manifest that covers them was written: look at it first.
        let isCurrent = !exists(DiskStore.dirtyFile)
        let identity = identity(of: DiskStore.manifestFile)
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            if exists(DiskStore.manifestFile) {
                throw .io(path: manifestPath, reason: CacheDirectory.describe(errno: EACCES))
            }
            return ManifestRead(path: manifestPath, manifest: nil, damage: nil, version: nil, isCurrent: false, identity: nil)
        }
        let version = data.count >= 14 ? Int(UInt16(data[data.startIndex + 12]) | UInt16(data[data.startIndex + 13]) << 8) : nil
        let decoded = data.withUnsafeBytes { raw in
            Result { () throws(Manifest.Damage) in try Manifest(decoding: raw) }
        }
        switch decoded {
        case let .success(manifest):
            return ManifestRead(path: manifestPath, manifest: manifest, damage: nil, version: version, isCurrent: isCurrent, identity: identity)
        case let .failure(damage):
            return ManifestRead(path: manifestPath, manifest: nil, damage: damage.description, version: version, isCurrent: false, identity: identity)
        }
    }

    /// Whether `relative` exists (as anything, a dangling symlink included).
    func exists(_ relative: String) -> Bool {
        var info = stat()
        return lstat(path(relative), &info) == 0
    }

    func identity(of relative: String) -> FileIdentity? {
        var info = stat()
        guard lstat(path(relative), &info) == 0 else { return nil }
        return FileIdentity(inode: UInt64(info.st_ino), modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
    }

    /// The names in the folder `relative`; empty when it does not exist.
    func listing(_ relative: String) throws(CacheDirectoryError) -> [String] {
        do throws(StorageError) {
            return try DiskStore.listFolder(path(relative))
        } catch {
            throw CacheDirectoryError(listing: error)
        }
    }

    /// Bytes the file system allocated for `relative` (0 when it is not there).
    func allocation(of relative: String) -> Int {
        var info = stat()
        return lstat(path(relative), &info) == 0 ? Int(info.st_blocks) * 512 : 0
    }

    /// Files in a folder and their total length.
    func fileCount(in relative: String) throws(CacheDirectoryError) -> (count: Int, bytes: Int) {
        var bytes = 0
        let names = try listing(relative)
        for name in names {
            var info = stat()
            if lstat(path("\(relative)/\(name)"), &info) == 0 { bytes += Int(info.st_size) }
        }
        return (names.count, bytes)
    }
}

// MARK: - Entry files

/// One record as the scan found it: a file of its own, or one record of a segment file.
struct FoundFile: Sendable {
    var header: EntryFile.Header
    var fileLength: Int
    /// Bytes the file system allocated for it (whole blocks, as `du` counts);
    /// a segment record's own length.
    var allocatedBytes: Int
    /// Its path relative to the cache directory.
    var file: String
    /// Where it is (segment 0: a file of its own).
    var location: RecordLocation

    var record: FoundRecord { FoundRecord(header: header, location: location) }
}

/// One segment file as the scan found it.
struct FoundSegment: Sendable {
    var id: UInt32
    /// Its path relative to the cache directory.
    var file: String
    var length: Int
    var allocatedBytes: Int
    /// Bytes past the last whole record (a torn append a crash left; the next writer cuts them).
    var tornTailBytes: Int
}

/// Every record in the directory, in inspection's terms: what `RecordScan`
/// found, each damaged or unreadable file with the reason a person reads.
struct ObjectScan: Sendable {
    var files: [FoundFile] = []
    /// Sorted by path.
    var damaged: [CacheDirectory.DamagedFile] = []
    /// Files that could not be opened or read (permission, I/O error,
    /// descriptors exhausted): not damage, so never quarantined. Sorted by path.
    var unreadable: [CacheDirectory.DamagedFile] = []
    /// Bytes read (whole files when checksums were checked, else headers).
    var bytesRead = 0
    /// Files being written in the shard folders (or left there by a crash),
    /// relative to the directory.
    var temporaryFiles: [String] = []
    /// The segment files.
    var segments: [FoundSegment] = []

    init(_ scan: RecordScan) {
        files = scan.files.map { found in
            FoundFile(
                header: found.header, fileLength: found.fileLength, allocatedBytes: found.allocatedBytes, file: found.file,
                location: .ownFile(length: found.fileLength)
            )
        }
        damaged = scan.damaged.map { CacheDirectory.DamagedFile(file: $0.file, reason: CacheDirectory.reason($0)) }
        unreadable = scan.unreadable.map {
            CacheDirectory.DamagedFile(file: $0.file, reason: "can't be read: \(CacheDirectory.describe(errno: $0.errno))")
        }
        bytesRead = scan.bytesRead
        temporaryFiles = scan.temporaryFiles
        for segment in scan.segments {
            for range in segment.contents.damagedRanges {
                damaged.append(CacheDirectory.DamagedFile(
                    file: segment.file, reason: "bytes \(range.lowerBound)..<\(range.upperBound) are not valid records"
                ))
            }
            for record in segment.contents.records {
                files.append(FoundFile(
                    header: record.header, fileLength: record.length, allocatedBytes: record.length, file: segment.file,
                    location: record.location(in: segment.id)
                ))
            }
            segments.append(FoundSegment(
                id: segment.id, file: segment.file, length: segment.length, allocatedBytes: segment.allocatedBytes,
                tornTailBytes: segment.length - segment.contents.validLength
            ))
        }
        damaged.sort { $0.file < $1.file }
        unreadable.sort { $0.file < $1.file }
    }
}

extension CacheDirectory {
    /// Reads every record in the directory, read-only (`RecordScan` with the
    /// `.readOnly` policy): the header of every file of its own (with
    /// `checksums`, the whole file, decoded) and every segment file whole.
    ///
    /// A file that is not a valid entry, or sits under a name that is not its
    /// own, is listed as damaged; a file that vanishes while the scan runs (a
    /// writer replaced or deleted it) is skipped.
    /// - Throws: ``CacheDirectoryError/io(path:reason:)`` when a folder can't be listed.
    /// - Complexity: O(files): one open and one read each.
    func scanObjects(checksums: Bool) throws(CacheDirectoryError) -> ObjectScan {
        do throws(StorageError) {
            return ObjectScan(try RecordScan(root: root, depth: checksums ? .records : .headers, policy: .readOnly))
        } catch {
            throw CacheDirectoryError(listing: error)
        }
    }

    /// What is wrong with a file the scan found damaged, as a phrase.
    static func reason(_ damaged: RecordScan.DamagedFile) -> String {
        // A segment file is listed here only when it is not a file that can be read whole.
        if damaged.file.hasPrefix("\(DiskStore.segmentsFolder)/") { return "not a regular file" }
        return reason(damaged.damage)
    }

    /// What is wrong with a file of its own, as a phrase.
    static func reason(_ damage: RecordScan.Damage) -> String {
        switch damage {
        case let .format(damage): return damage.description
        case .notARegularFile: return "a symbolic link or not a regular file, not an entry file"
        case let .tooLong(length): return "\(length) bytes, longer than any entry file"
        case let .misplaced(name): return "holds an entry whose file name is \(name.shard)/\(name.fileName)"
        }
    }

    /// Reads and verifies the record of `entry` (its own file or its place in a segment).
    func readRecord(of entry: Entry) -> DiskStore.RecordFileRead {
        guard let location = entry.location else { return DiskStore.readRecord(atPath: path(entry.file)) }
        return DiskStore.readSegmentRecord(atPath: path(entry.file), at: location)
    }
}

extension CacheDirectoryError {
    /// A folder that could not be listed.
    init(listing error: StorageError) {
        let folder = switch error {
        case let .directoryLocked(path, _), let .directoryUnusable(path, _), let .diskFull(path), let .io(_, path, _): path
        }
        self = .io(path: folder, reason: "the folder can't be listed: \(KacheError(error))")
    }
}
