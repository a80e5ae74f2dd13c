import Foundation
import KacheStorage
import Synchronization
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
        do {
            return try DiskStore.listFolder(path(relative))
        } catch {
            throw .io(path: path(relative), reason: "the folder can't be listed: \(KacheError(error))")
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

/// Every entry file under `objects/`.
struct ObjectScan: Sendable {
    var files: [FoundFile] = []
    var damaged: [CacheDirectory.DamagedFile] = []
    /// Files that could not be opened or read (permission, I/O error,
    /// descriptors exhausted): not damage, so never quarantined.
    var unreadable: [CacheDirectory.DamagedFile] = []
    /// Bytes read (whole files when checksums were checked, else headers).
    var bytesRead = 0
    /// Files being written in the shard folders (or left there by a crash).
    var temporaryFiles = 0
    /// The segment files.
    var segments: [FoundSegment] = []
}

/// Reading one entry file whole, read-only, and checking it.
enum EntryFileCheck {
    enum Outcome {
        case entry(EntryFile.Header, payload: Data, fileLength: Int)
        case missing
        case damaged(String)
        /// The file is there but could not be opened or read (permissions, I/O).
        case unreadable(Int32)
    }

    /// Opens `path` read-only, reads it whole and decodes it: magic, version,
    /// lengths, checksum, and that its LZ4 payload decompresses.
    /// - Complexity: O(n) in the file's length.
    static func readWhole(path: String) -> Outcome {
        switch DiskStore.readWholeFile(path: path) {
        case .missing: return .missing
        case .notARegularFile: return .damaged("a symbolic link or not a regular file, not an entry file")
        case let .tooLong(length, _): return .damaged("\(length) bytes, longer than any entry file")
        case let .unreadable(code): return .unreadable(code)
        case let .bytes(bytes, _): return decode(bytes)
        }
    }

    /// Decodes one record's bytes.
    static func decode(_ bytes: Data) -> Outcome {
        let decoded = bytes.withUnsafeBytes { raw in
            Result { () throws(EntryFile.Damage) in try EntryFile.decode(raw) }
        }
        switch decoded {
        case let .success((header, payload)): return .entry(header, payload: payload, fileLength: bytes.count)
        case let .failure(damage): return .damaged(damage.description)
        }
    }
}

extension CacheDirectory {
    /// Finds every entry file in the 256 shard folders under `objects/`, on all
    /// cores, reading its header (or, with `checksums`, the whole file, checked).
    ///
    /// A file that is not a valid entry, or sits under a name that is not its
    /// own, is listed as damaged; a file that vanishes while the scan runs (a
    /// writer replaced or deleted it) is skipped. Folders other than the shards are not looked at.
    /// - Throws: ``CacheDirectoryError/io(path:reason:)`` when a shard can't be listed.
    /// - Complexity: O(files): one open and one read each.
    func scanObjects(checksums: Bool) throws(CacheDirectoryError) -> ObjectScan {
        let result = Mutex<(scan: ObjectScan, error: CacheDirectoryError?)>((ObjectScan(), nil))
        DispatchQueue.concurrentPerform(iterations: 256) { shard in
            let shardName = DiskStore.shardName(shard)
            let folder = "\(DiskStore.objectsFolder)/\(shardName)"
            var scan = ObjectScan()
            do throws(CacheDirectoryError) {
                for fileName in try listing(folder) {
                    // A write in progress (or one a crash interrupted), not an entry.
                    if DiskStore.isTemporaryName(fileName) {
                        scan.temporaryFiles += 1
                        continue
                    }
                    examine(file: "\(folder)/\(fileName)", fileName: fileName, shard: shardName, checksums: checksums, into: &scan)
                }
            } catch {
                result.withLock { $0.error = $0.error ?? error }
                return
            }
            result.withLock {
                $0.scan.files.append(contentsOf: scan.files)
                $0.scan.damaged.append(contentsOf: scan.damaged)
                $0.scan.unreadable.append(contentsOf: scan.unreadable)
                $0.scan.bytesRead += scan.bytesRead
                $0.scan.temporaryFiles += scan.temporaryFiles
            }
        }
        let (found, error) = result.withLock { $0 }
        if let error { throw error }
        var scan = found
        try scanSegments(into: &scan)
        var sorted = scan
        sorted.damaged.sort { $0.file < $1.file }
        sorted.unreadable.sort { $0.file < $1.file }
        return sorted
    }

    private func examine(file relative: String, fileName: String, shard: String, checksums: Bool, into scan: inout ObjectScan) {
        let fullPath = path(relative)
        let found: (header: EntryFile.Header, length: Int)
        if checksums {
            switch EntryFileCheck.readWhole(path: fullPath) {
            case .missing:
                return
            case let .unreadable(code):
                scan.unreadable.append(DamagedFile(file: relative, reason: "can't be read: \(CacheDirectory.describe(errno: code))"))
                return
            case let .damaged(reason):
                scan.damaged.append(DamagedFile(file: relative, reason: reason))
                return
            case let .entry(header, _, length):
                found = (header, length)
                scan.bytesRead += length
            }
        } else {
            switch DiskStore.readHeader(path: fullPath, verifyingChecksum: false) {
            case .failure(.missing):
                return
            case let .failure(.unreadable(code)):
                scan.unreadable.append(DamagedFile(file: relative, reason: "can't be read: \(CacheDirectory.describe(errno: code))"))
                return
            case let .failure(.damaged(damage)):
                scan.damaged.append(DamagedFile(file: relative, reason: damage.description))
                return
            case let .success(file):
                found = (file.header, file.fileLength)
                scan.bytesRead += min(file.fileLength, EntryFile.headerSize + file.header.key.utf8.count + file.header.space.utf8.count)
            }
        }
        let name = EntryName(space: found.header.space, key: found.header.key)
        guard name.fileName == fileName, name.shard == shard else {
            scan.damaged.append(DamagedFile(file: relative, reason: "holds an entry whose file name is \(name.shard)/\(name.fileName)"))
            return
        }
        var info = stat()
        let allocated = lstat(fullPath, &info) == 0 ? Int(info.st_blocks) * 512 : found.length
        scan.files.append(FoundFile(
            header: found.header, fileLength: found.length, allocatedBytes: allocated, file: relative,
            location: .ownFile(length: found.length)
        ))
    }

    /// Reads every segment file whole, read-only, and lists its records with
    /// the engine's own segment scan (`SegmentStore.scan`: every checksum
    /// verified, damaged runs skipped, a torn tail noted).
    private func scanSegments(into scan: inout ObjectScan) throws(CacheDirectoryError) {
        for name in try listing(DiskStore.segmentsFolder).sorted() {
            guard let id = SegmentStore.id(ofFileName: name) else { continue }
            let relative = "\(DiskStore.segmentsFolder)/\(name)"
            let bytes: Data
            switch DiskStore.readWholeFile(path: path(relative)) {
            case .missing:
                continue
            case .notARegularFile, .tooLong:
                scan.damaged.append(DamagedFile(file: relative, reason: "not a regular file"))
                continue
            case let .unreadable(code):
                scan.unreadable.append(DamagedFile(file: relative, reason: "can't be read: \(CacheDirectory.describe(errno: code))"))
                continue
            case let .bytes(data, _):
                bytes = data
            }
            let found = SegmentStore.scan(bytes)
            scan.bytesRead += bytes.count
            for range in found.damagedRanges {
                scan.damaged.append(DamagedFile(file: relative, reason: "bytes \(range.lowerBound)..<\(range.upperBound) are not valid records"))
            }
            for record in found.records {
                scan.files.append(FoundFile(
                    header: record.header, fileLength: record.length, allocatedBytes: record.length, file: relative,
                    location: RecordLocation(segment: id, offset: UInt32(record.offset), length: record.length)
                ))
            }
            scan.segments.append(FoundSegment(
                id: id, file: relative, length: bytes.count, allocatedBytes: allocation(of: relative),
                tornTailBytes: bytes.count - found.validLength
            ))
        }
    }

    /// Reads and verifies the record of `entry` (its own file or its place in a segment).
    func readRecord(of entry: Entry) -> EntryFileCheck.Outcome {
        guard let offset = entry.offset else { return EntryFileCheck.readWhole(path: path(entry.file)) }
        switch DiskStore.readWholeFile(path: path(entry.file)) {
        case .missing:
            return .missing
        case .notARegularFile, .tooLong:
            return .damaged("the segment file is not a regular file")
        case let .unreadable(code):
            return .unreadable(code)
        case let .bytes(bytes, _):
            guard offset + entry.fileSize <= bytes.count else { return .damaged(EntryFile.Damage.truncated(length: bytes.count - offset).description) }
            return EntryFileCheck.decode(bytes.subdata(in: offset ..< offset + entry.fileSize))
        }
    }
}
