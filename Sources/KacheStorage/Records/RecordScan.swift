import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One reading of every record in a cache directory: each file of its own in
/// the 256 shard folders under `objects/` (on all cores), then every segment
/// file, read whole with each block's checksum verified and only its keys
/// decompressed (`SegmentStore.scan`), under `.recovering` on all cores.
/// The rebuild after a crash (`RecordStore.findRecords`)
/// and the tools that inspect, verify and repair a directory (`CacheDirectory`)
/// both read the directory through it; its `Policy` says what it does with
/// what it meets.
///
/// A file that vanishes while the scan runs (a writer replaced or deleted it)
/// is skipped. Folders other than the shards and `segments/` are not looked at.
///
/// ```swift
/// let scan = try RecordScan(root: path, depth: .headers, policy: .readOnly)
/// print(scan.files.count, scan.damaged.count)
/// ```
package struct RecordScan: Sendable {
    /// How much of each file of its own is read.
    package enum Depth: Sendable {
        /// The header and names (`DiskStore.readHeader`), never the payload.
        case headers
        /// The whole file, its checksum verified, its payload not decompressed
        /// (`DiskStore.readHeader`): a flipped bit in an expiry or a key-space
        /// kind still parses, and must not go unseen by the rebuild.
        case checksums
        /// The whole record decoded (`DiskStore.readRecord`): checksum,
        /// lengths, and that the payload decompresses.
        case records
    }

    /// What the scan does with what it meets.
    package enum Policy: Sendable {
        /// Opens every file read-only and changes nothing, with or without the
        /// lock: damaged and unreadable files are listed, temporary files counted.
        case readOnly
        /// The rebuild's, by the writer that holds `disk`'s lock. A damaged file
        /// of its own goes to quarantine; a file that can't be read throws (that
        /// is not damage, and the index can't be rebuilt without it). At open
        /// (`atOpen`), temporary files are what a crash left, and are deleted,
        /// and a torn segment tail is cut; later they may be writes under way,
        /// and are left alone. Segment files are read through `disk.segments`, on
        /// all cores.
        case recovering(DiskStore, atOpen: Bool)
    }

    /// Why a file holds no valid record.
    package enum Damage: Sendable, Equatable {
        /// Its bytes do not decode.
        case format(EntryFile.Damage)
        /// A symbolic link, or not a regular file (`DiskStore.readHeader`
        /// reports it as bad magic instead).
        case notARegularFile
        /// Longer than any record.
        case tooLong(length: Int)
        /// A valid record, under a name that is not its own.
        case misplaced(EntryName)
    }

    /// A file that holds no valid record.
    package struct DamagedFile: Sendable {
        /// Its path relative to the directory.
        package var file: String
        package var damage: Damage
    }

    /// A file that could not be opened or read (permission, I/O error,
    /// descriptors exhausted): not damage, so never quarantined.
    package struct UnreadableFile: Sendable {
        /// Its path relative to the directory.
        package var file: String
        package var errno: Int32
    }

    /// A file of its own that holds a valid record under its own name.
    package struct OwnFile: Sendable {
        /// Its path relative to the directory.
        package var file: String
        package var header: EntryFile.Header
        package var fileLength: Int
        /// Bytes the file system allocated for it (whole blocks, as `du`
        /// counts) under `.readOnly`; its length under `.recovering`.
        package var allocatedBytes: Int
    }

    /// A segment file and what it holds.
    package struct Segment: Sendable {
        package var id: UInt32
        /// Its path relative to the directory.
        package var file: String
        /// Its length: the bytes read, or under `.recovering` the length the
        /// writer's table has for it.
        package var length: Int
        /// Bytes the file system allocated for it under `.readOnly`; 0 under `.recovering`.
        package var allocatedBytes: Int
        /// Its records, its damaged runs, and where the last record ends
        /// (past it, a torn tail; under `.recovering` at open, cut off). The
        /// records are empty when they were handed to a `SegmentVisitor` instead.
        package var contents: SegmentStore.Scan
        /// The newest sequence among its records (0 when it has none).
        package var latestSequence: UInt64
    }

    /// Takes a segment's valid blocks one by one as the scan reads them, on
    /// the core that reads them, instead of the scan keeping their records
    /// (`RecordStore.findRecords(atOpen:segmentsOnly:visiting:)`). Called once
    /// for each segment, from several threads at once, with its length and `read`, which
    /// scans the segment and hands each block to `take` while it is still in
    /// the core's cache (blocks gathered for a whole segment first were
    /// cold again by the time they were taken).
    package typealias SegmentVisitor = @Sendable (
        _ id: UInt32, _ length: Int, _ read: (_ take: (SegmentStore.ScannedBlock) -> Void) -> Void
    ) -> Void

    /// Files of their own that hold a valid record under their own name, in no particular order.
    package private(set) var files: [OwnFile] = []
    /// The segment files, in the order of their numbers.
    package private(set) var segments: [Segment] = []
    /// Files that hold no valid record (a segment file's damaged runs are in
    /// its `contents`); under `.recovering`, those of their own were moved to quarantine.
    package private(set) var damaged: [DamagedFile] = []
    /// Files that can't be read; only under `.readOnly`, as `.recovering` throws.
    package private(set) var unreadable: [UnreadableFile] = []
    /// The temporary files in the shard folders (paths relative to the
    /// directory): writes in progress, or left by a crash.
    package private(set) var temporaryFiles: [String] = []
    /// Damaged files moved to quarantine, under `.recovering`.
    package private(set) var quarantined = 0
    /// Bytes read: whole files, or at `.headers` depth each file's header and names.
    package private(set) var bytesRead = 0

    private init() {}

    /// The segment files and what they hold, taken out of the scan (so that
    /// a caller can let each one's records go as it is done with them).
    package mutating func takeSegments() -> [Segment] {
        defer { segments = [] }
        return segments
    }

    /// Scans the directory at `root`.
    /// - Throws: when a folder can't be listed; under `.recovering`, also when
    ///   a file can't be opened or read.
    /// - Complexity: O(files) opens; O(bytes) reads, but O(files) small reads at `.headers` depth.
    /// - Parameter segmentsOnly: read only the segment files (the files of
    ///   their own are listed by a current manifest).
    /// - Parameter visit: under `.recovering`, takes each segment's records
    ///   instead of `segments` keeping them.
    package init(root: String, depth: Depth, policy: Policy, segmentsOnly: Bool = false, visit: SegmentVisitor? = nil) throws(StorageError) {
        if !segmentsOnly { try scanFilesOfTheirOwn(root: root, depth: depth, policy: policy) }
        try scanSegments(root: root, policy: policy, visit: visit)
    }

    // MARK: - Files of their own

    private mutating func scanFilesOfTheirOwn(root: String, depth: Depth, policy: Policy) throws(StorageError) {
        let merged = Locked<(scan: RecordScan, failure: StorageError?)>((RecordScan(), nil))
        DispatchQueue.concurrentPerform(iterations: 256) { shard in
            var part = RecordScan()
            do throws(StorageError) {
                try part.scanShard(shard, root: root, depth: depth, policy: policy)
            } catch {
                merged.withLock { $0.failure = $0.failure ?? error }
            }
            merged.withLock { $0.scan.add(part) }
        }
        let (scan, failure) = merged.withLock { $0 }
        if let failure { throw failure }
        self = scan
    }

    private mutating func scanShard(_ shard: Int, root: String, depth: Depth, policy: Policy) throws(StorageError) {
        let shardName = DiskStore.shardName(shard)
        let folder = "\(DiskStore.objectsFolder)/\(shardName)"
        for fileName in try DiskStore.listFolder("\(root)/\(folder)") {
            let file = "\(folder)/\(fileName)"
            let path = "\(root)/\(file)"
            if DiskStore.isTemporaryName(fileName) {
                temporaryFiles.append(file)
                if case .recovering(_, atOpen: true) = policy { unlink(path) }
                continue
            }
            switch RecordScan.read(path: path, depth: depth) {
            case .missing:
                continue
            case let .unreadable(code):
                if case .recovering = policy {
                    throw .fileOperation("Reading an entry file's header", path: path, errno: code)
                }
                unreadable.append(UnreadableFile(file: file, errno: code))
            case let .damaged(damage):
                noteDamaged(file, path: path, damage, policy: policy)
            case let .found(header, length, read):
                bytesRead += read
                let name = EntryName(space: header.space, key: header.key)
                guard name.fileName == fileName, name.shard == shardName else {
                    noteDamaged(file, path: path, .misplaced(name), policy: policy)
                    continue
                }
                var allocated = length
                if case .readOnly = policy {
                    var info = stat()
                    if lstat(path, &info) == 0 { allocated = Int(info.st_blocks) * 512 }
                }
                files.append(OwnFile(file: file, header: header, fileLength: length, allocatedBytes: allocated))
            }
        }
    }

    private mutating func noteDamaged(_ file: String, path: String, _ damage: Damage, policy: Policy) {
        damaged.append(DamagedFile(file: file, damage: damage))
        if case let .recovering(disk, _) = policy, disk.quarantine(path: path, inode: 0) != nil {
            quarantined += 1
        }
    }

    private mutating func add(_ part: RecordScan) {
        files.append(contentsOf: part.files)
        damaged.append(contentsOf: part.damaged)
        unreadable.append(contentsOf: part.unreadable)
        temporaryFiles.append(contentsOf: part.temporaryFiles)
        quarantined += part.quarantined
        bytesRead += part.bytesRead
    }

    /// What reading one file of its own found.
    private enum FileRead {
        /// A valid record: its header, the file's length, and the bytes read.
        case found(EntryFile.Header, length: Int, bytesRead: Int)
        case missing
        case damaged(Damage)
        case unreadable(Int32)
    }

    private static func read(path: String, depth: Depth) -> FileRead {
        guard depth != .records else {
            switch DiskStore.readRecord(atPath: path) {
            case .missing: return .missing
            case .notARegularFile: return .damaged(.notARegularFile)
            case let .tooLong(length, _): return .damaged(.tooLong(length: length))
            case let .unreadable(code): return .unreadable(code)
            case let .damaged(damage, _): return .damaged(.format(damage))
            case let .record(header, _, length, _): return .found(header, length: length, bytesRead: length)
            }
        }
        switch DiskStore.readHeader(path: path, verifyingChecksum: depth == .checksums) {
        case .failure(.missing): return .missing
        case let .failure(.unreadable(code)): return .unreadable(code)
        case let .failure(.damaged(damage)): return .damaged(.format(damage))
        case let .success(file):
            let names = EntryFile.headerSize + file.header.key.utf8.count + file.header.space.utf8.count
            return .found(file.header, length: file.fileLength, bytesRead: depth == .checksums ? file.fileLength : min(file.fileLength, names))
        }
    }

    // MARK: - Segment files

    /// A segment file to read: by its path, or through the writer's open descriptor.
    private struct SegmentSource {
        var id: UInt32
        /// Its path relative to the directory.
        var file: String
        /// The writer's open file and the length its table has, under `.recovering`.
        var open: (file: SegmentStore.SegmentFile, length: Int)?
    }

    private mutating func scanSegments(root: String, policy: Policy, visit: SegmentVisitor?) throws(StorageError) {
        let sources = try RecordScan.segmentFiles(root: root, policy: policy)
        if case let .recovering(disk, atOpen) = policy {
            try scanSegmentsOnAllCores(sources, disk: disk, atOpen: atOpen, visit: visit)
            return
        }
        for source in sources {
            let path = "\(root)/\(source.file)"
            let bytes: Data
            switch DiskStore.readWholeFile(path: path) {
            case .missing:
                continue
            case .notARegularFile:
                damaged.append(DamagedFile(file: source.file, damage: .notARegularFile))
                continue
            case let .tooLong(length, _):
                damaged.append(DamagedFile(file: source.file, damage: .tooLong(length: length)))
                continue
            case let .unreadable(code):
                unreadable.append(UnreadableFile(file: source.file, errno: code))
                continue
            case let .bytes(data, _):
                bytes = data
            }
            bytesRead += bytes.count
            var info = stat()
            let allocated = lstat(path, &info) == 0 ? Int(info.st_blocks) * 512 : 0
            let contents = SegmentStore.scan(bytes)
            segments.append(Segment(
                id: source.id, file: source.file, length: bytes.count, allocatedBytes: allocated,
                contents: contents, latestSequence: contents.latestSequence
            ))
        }
    }

    /// The rebuild's reading of the segments through the writer's open
    /// files, on all cores (the keys of a million records took W8's open
    /// 0.2 s on one). `visit` takes each one's records on the core that read
    /// them, while they are still in its cache.
    private mutating func scanSegmentsOnAllCores(
        _ sources: [SegmentSource], disk: DiskStore, atOpen: Bool, visit: SegmentVisitor?
    ) throws(StorageError) {
        let reads = Locked([Result<(scan: SegmentStore.Scan, latest: UInt64), StorageError>?](repeating: nil, count: sources.count))
        // Longest first: the cores take segments in turn, so a long one taken
        // last would leave the other cores idle while it is read (segments
        // range from a few KiB to 4 MiB, one per expiry bucket).
        let longestFirst = sources.indices.sorted { (sources[$0].open?.length ?? 0) > (sources[$1].open?.length ?? 0) }
        DispatchQueue.concurrentPerform(iterations: sources.count) { turn in
            let index = longestFirst[turn]
            guard let open = sources[index].open else { return }
            let read = Result { () throws(StorageError) -> (scan: SegmentStore.Scan, latest: UInt64) in
                guard let bytes = open.file.mapped(length: open.length) else {
                    throw .fileOperation("Reading a segment file", path: open.file.path, errno: errno)
                }
                guard let visit else {
                    let scan = SegmentStore.scan(bytes)
                    return (scan, scan.latestSequence)
                }
                var scan = SegmentStore.Scan()
                // Only a restore from a current manifest visits: every block it lists was flushed before that manifest.
                visit(sources[index].id, open.length) { take in scan = SegmentStore.scan(bytes, verifying: .keys, blocks: take) }
                return (scan, scan.latestSequence)
            }
            reads.withLock { $0[index] = read }
        }
        for (source, read) in zip(sources, reads.withLock { $0 }) {
            guard let open = source.open, let read else { continue }
            let (scan, latest) = try read.get()
            bytesRead += open.length
            if atOpen, scan.validLength < open.length { disk.segments.truncate(source.id, to: scan.validLength) }
            segments.append(Segment(
                id: source.id, file: source.file, length: open.length, allocatedBytes: 0, contents: scan, latestSequence: latest
            ))
        }
    }

    /// The segment files in the order of their numbers: those in `segments/`
    /// under `.readOnly`, the writer's open ones under `.recovering`.
    private static func segmentFiles(root: String, policy: Policy) throws(StorageError) -> [SegmentSource] {
        switch policy {
        case .readOnly:
            return try DiskStore.listFolder("\(root)/\(DiskStore.segmentsFolder)").sorted().compactMap { name in
                SegmentStore.id(ofFileName: name).map { SegmentSource(id: $0, file: "\(DiskStore.segmentsFolder)/\(name)") }
            }
        case let .recovering(disk, _):
            return disk.segments.lengths().compactMap { id, length in
                disk.segments.file(id).map { file in
                    SegmentSource(
                        id: id, file: "\(DiskStore.segmentsFolder)/\((file.path as NSString).lastPathComponent)", open: (file, length)
                    )
                }
            }
        }
    }
}
