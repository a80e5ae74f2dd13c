import Foundation
import KacheStorage

extension CacheDirectory {
    // MARK: - Report types

    /// One entry as the directory holds it.
    public struct Entry: Sendable, Equatable, Codable {
        /// The key (for a Queue item, its sequence number).
        public var key: String
        /// The key space's name: empty for the top level, else a Pool's or a Queue's.
        public var keySpace: String
        /// The kind of key space.
        public var kind: KeySpaceStatistics.Kind
        /// The value's length in bytes.
        public var size: Int
        /// The bytes its value takes on disk: in a file of its own, the payload
        /// (LZ4-compressed when that was smaller); in a segment file, what its
        /// record costs (`fileSize`), since a block compresses its records together.
        public var storedSize: Int
        /// What its record costs on disk: a file of its own's whole length
        /// (header, key, key-space name and payload); in a segment file, its
        /// share of its block (a whole record in a segment file of format 2).
        public var fileSize: Int
        /// When it expires.
        public var expiry: Date
        /// Its write order within the directory.
        public var sequence: UInt64
        /// Its file, relative to the cache directory: `objects/xx/…` for a file
        /// of its own, `segments/….seg` for a record in a segment.
        public var file: String
        /// Where its record's block (or, in a segment file of format version
        /// 2, its record) starts in that segment file; nil for a file of its own.
        public var offset: Int?
        /// Its record's index in that block (0 for a record of version 2); nil for a file of its own.
        public var index: Int?

        /// Whether its time is up at `now`.
        public func isExpired(at now: Date) -> Bool {
            Timestamp(now) >= Timestamp(expiry)
        }

        init(header: EntryFile.Header, fileLength: Int, file: String, location: RecordLocation? = nil) {
            key = header.key
            keySpace = header.space
            kind = KeySpaceStatistics.Kind(KeySpace.Kind(record: header.kind))
            size = header.rawLength
            storedSize = location.map { $0.isOwnFile ? header.storedLength : fileLength } ?? header.storedLength
            fileSize = fileLength
            expiry = header.expiry.date
            sequence = header.sequence
            self.file = file
            offset = location.flatMap { $0.isOwnFile ? nil : $0.offset }
            index = location.flatMap { $0.isOwnFile ? nil : $0.index }
        }

        /// Where its record is in its segment file; nil for a file of its own.
        var location: RecordLocation? {
            guard let offset, let segment = SegmentStore.id(ofFileName: (file as NSString).lastPathComponent) else { return nil }
            return RecordLocation(segment: segment, offset: offset, index: index ?? 0, length: fileSize)
        }

        init(saved entry: Manifest.Entry, in space: Manifest.Space) {
            let name = EntryName(space: space.name, key: entry.key)
            key = entry.key
            keySpace = space.name
            kind = KeySpaceStatistics.Kind(space.kind)
            size = entry.rawSize
            storedSize = entry.location.isOwnFile
                ? max(0, entry.fileSize - EntryFile.headerSize - entry.key.utf8.count - space.name.utf8.count)
                : entry.fileSize
            fileSize = entry.fileSize
            expiry = entry.expiry.date
            sequence = entry.sequence
            let location = entry.location
            if location.isOwnFile {
                file = "\(DiskStore.objectsFolder)/\(name.shard)/\(name.fileName)"
            } else {
                file = "\(DiskStore.segmentsFolder)/\(SegmentStore.fileName(location.segment))"
                offset = location.offset
                index = location.index
            }
        }
    }

    /// A file that is not a valid entry file.
    public struct DamagedFile: Sendable, Equatable, Codable {
        /// Its path relative to the cache directory.
        public var file: String
        /// What is wrong with it, as a phrase ("checksum mismatch").
        public var reason: String
    }

    /// One key space: the counts ``KeySpaceStatistics`` has (same names, so
    /// its JSON decodes as one), plus what the files say about it.
    public struct KeySpaceSummary: Sendable, Equatable, Codable {
        /// The key space's name (empty for the top level).
        public var name: String
        /// Its kind.
        public var kind: KeySpaceStatistics.Kind
        /// Entries it holds, expired ones not yet swept included.
        public var count: Int
        /// Of those, entries whose time is up.
        public var expired: Int
        /// The most entries it holds (`Int.max` for the top level, and for a key
        /// space known only from entry files, which the next writer sizes).
        public var capacity: Int
        /// Entries evicted by a full Pool or dropped by a full Queue, as last saved.
        public var evictions: UInt64
        /// Entries removed because their time was up, as last saved.
        public var expirations: UInt64
        /// Items pushed (Queues), as last saved.
        public var pushes: UInt64
        /// Items popped (Queues), as last saved.
        public var pops: UInt64
        /// Bytes of its values, uncompressed.
        public var rawBytes: Int
        /// Bytes of its entries' files.
        public var bytesOnDisk: Int
    }

    /// One segment file: how much of it still holds live entries.
    public struct SegmentSummary: Sendable, Equatable, Codable {
        /// Its path relative to the cache directory (`segments/….seg`).
        public var file: String
        /// Its length in bytes.
        public var bytes: Int
        /// Bytes of records that hold an entry of the index.
        public var liveBytes: Int
        /// How many records hold an entry of the index.
        public var liveRecords: Int
        /// Bytes past its last whole record, which the next writer cuts off.
        public var tornTailBytes: Int

        /// Bytes that hold nothing live (replaced, removed, expired or evicted records, tombstones).
        public var deadBytes: Int { bytes - liveBytes }
        /// The dead fraction of the file.
        public var fragmentation: Double { bytes == 0 ? 0 : Double(deadBytes) / Double(bytes) }
    }

    /// Live entries by how soon they expire (each bucket excludes the shorter ones).
    public struct ExpiryHistogram: Sendable, Equatable, Codable {
        /// Entries whose time is up but that no writer has swept yet.
        public var expired = 0
        /// Expiring within a minute.
        public var withinMinute = 0
        /// Within an hour (and not within a minute).
        public var withinHour = 0
        /// Within a day.
        public var withinDay = 0
        /// Within a week.
        public var withinWeek = 0
        /// Later than a week from now.
        public var later = 0

        /// Creates an empty histogram.
        public init() {}

        /// Counts one entry expiring at `expiry`; at `now` or before is expired, as for a read.
        mutating func add(expiry: Timestamp, now: Timestamp) {
            let (left, overflow) = expiry.subtractingReportingOverflow(now)
            let second: Int64 = 1_000_000_000
            switch overflow ? Int64.max : left {
            case ...0: expired += 1
            case ...(60 * second): withinMinute += 1
            case ...(3600 * second): withinHour += 1
            case ...(86400 * second): withinDay += 1
            case ...(604_800 * second): withinWeek += 1
            default: later += 1
            }
        }
    }

    /// Where the entries of an inspection come from.
    public enum IndexSource: String, Sendable, Equatable, Codable {
        /// The manifest, which is current: no file changed since it was saved.
        case manifest
        /// The entry files' headers: the manifest is missing or older than the
        /// files (a writer is running, or did not close). Opening does the same.
        case entryFiles = "entry-files"
    }

    /// Everything ``CacheDirectory/inspect(now:largest:)`` found, without the entry list.
    public struct Summary: Sendable, Equatable, Codable {
        /// The directory's path.
        public var path: String
        /// The instant expiry was measured against.
        public var inspectedAt: Date
        /// The entry file format version this build reads (files of another version are damaged).
        public var formatVersion: Int
        /// The manifest's format version, nil when there is no manifest.
        public var manifestVersion: Int?
        /// When the manifest was saved, nil when there is none.
        public var manifestSavedAt: Date?
        /// Whether the manifest describes the files exactly (no change since it was saved).
        public var manifestIsCurrent: Bool
        /// Where the entries were read from.
        public var indexSource: IndexSource
        /// Whether a process holds the writer lock.
        public var lockHeld: Bool
        /// The pid of that process, when it is known.
        public var writerPID: Int32?
        /// Entries, expired ones not yet swept included (as ``Statistics/entries``).
        public var entries: Int
        /// Entries whose time is not up.
        public var liveEntries: Int
        /// Entries whose time is up but that no writer has swept yet.
        public var expiredEntries: Int
        /// Bytes of every entry's value, uncompressed (as ``Statistics/rawBytes``).
        public var rawBytes: Int
        /// Bytes of the payloads as stored (compressed where LZ4 made them smaller).
        public var storedBytes: Int
        /// `rawBytes / storedBytes`: how many times smaller the payloads are stored (1 when empty).
        public var compressionRatio: Double
        /// Valid entry files under `objects/` (as ``Statistics/filesOnDisk`` when the index knows them all).
        public var filesOnDisk: Int
        /// Their total length, headers included (as ``Statistics/bytesOnDisk``).
        public var bytesOnDisk: Int
        /// What they occupy on the file system (whole blocks, as `du` counts).
        public var allocatedBytes: Int
        /// What the whole directory occupies, as `du -s` counts it: entry files,
        /// manifest, lock, quarantine and the folders themselves.
        public var directoryBytes: Int
        /// The segment files, with the live and dead bytes of each.
        public var segments: [SegmentSummary]
        /// Bytes of segment records that hold no live entry, over all segment files.
        public var deadBytes: Int
        /// The disk budget the writer last saved in the manifest, nil when none
        /// (or no manifest); `directoryBytes` is what it limits.
        public var diskBudget: Int?
        /// Valid entry files the index does not list (a current manifest omits them,
        /// or their key space has another kind); the next writer ignores them.
        public var unindexedFiles: Int
        /// Files under `objects/` whose header is not valid (``CacheDirectory/verify()`` also checks payloads).
        public var damagedFiles: [DamagedFile]
        /// Files being written, in `tmp/` and `.`-prefixed in the shard
        /// folders: writes in progress, or left by a crash (the next rebuild removes them).
        public var temporaryFiles: Int
        /// Files moved aside into `quarantine/`.
        public var quarantinedFiles: Int
        /// Their total length.
        public var quarantinedBytes: Int
        /// Entries by how soon they expire.
        public var expiry: ExpiryHistogram
        /// The largest entries by value size, largest first.
        public var largestEntries: [Entry]
        /// Every key space: the top level, Pools, Queues.
        public var keySpaces: [KeySpaceSummary]
    }

    /// The summary and every entry, from one reading of the directory.
    public struct Inspection: Sendable, Equatable {
        /// Counts, sizes and state.
        public var summary: Summary
        /// Every entry the index holds, in write order.
        public var entries: [Entry]
    }

    // MARK: - Inspecting

    /// Reads the directory's manifest and the header of every entry file
    /// (never a payload), and sums up what it holds. Read-only: no lock, no change.
    ///
    /// The entries are those the next writer to open the directory would find:
    /// the manifest's when it is current, else the entry files'.
    /// - Parameters:
    ///   - now: the instant expiry is measured against.
    ///   - largest: how many of the largest entries the summary lists.
    /// - Throws: ``CacheDirectoryError/damagedManifest(path:reason:)``,
    ///   ``CacheDirectoryError/io(path:reason:)``.
    /// - Complexity: O(files): one open and one small read each.
    public func inspect(now: Date = Date(), largest: Int = 5) throws(CacheDirectoryError) -> Inspection {
        let (read, scan) = try consistentRead(checksums: false)
        return try summarize(read: read, manifest: try read.decoded(), scan: scan, now: now, largest: largest)
    }

    /// Reads the manifest and scans the files until both describe the same
    /// moment: a writer that saved, or started changing files, during the scan
    /// makes it start over (three tries at most, then the last reading stands).
    func consistentRead(checksums: Bool) throws(CacheDirectoryError) -> (ManifestRead, ObjectScan) {
        var attempt = 0
        while true {
            attempt += 1
            let manifest = try readManifest()
            let scan = try scanObjects(checksums: checksums)
            let unchanged = identity(of: DiskStore.manifestFile) == manifest.identity
                && exists(DiskStore.dirtyFile) == !manifest.isCurrent
            if unchanged || manifest.manifest == nil || attempt == 3 {
                var settled = manifest
                if !unchanged { settled.isCurrent = false }
                return (settled, scan)
            }
        }
    }

    private func summarize(
        read: ManifestRead, manifest: Manifest?, scan: ObjectScan, now: Date, largest: Int
    ) throws(CacheDirectoryError) -> Inspection {
        let index = IndexBuilder(manifest: manifest, useManifestEntries: read.isCurrent, files: scan.files)
        let tmp = try fileCount(in: DiskStore.tmpFolder)
        let quarantine = try fileCount(in: DiskStore.quarantineFolder)
        let holder = readLockHolder()

        var histogram = ExpiryHistogram()
        var spaces = index.spaces.map { space in
            KeySpaceSummary(
                name: space.name, kind: KeySpaceStatistics.Kind(space.kind), count: 0, expired: 0, capacity: space.capacity,
                evictions: space.counters.evictions, expirations: space.counters.expirations,
                pushes: space.counters.pushes, pops: space.counters.pops, rawBytes: 0, bytesOnDisk: 0
            )
        }
        var rawBytes = 0
        var storedBytes = 0
        let nowStamp = Timestamp(now)
        for (entry, spaceIndex, expiry) in index.entries {
            histogram.add(expiry: expiry, now: nowStamp)
            rawBytes += entry.size
            storedBytes += entry.storedSize
            spaces[spaceIndex].count += 1
            spaces[spaceIndex].rawBytes += entry.size
            spaces[spaceIndex].bytesOnDisk += entry.fileSize
            if expiry <= nowStamp { spaces[spaceIndex].expired += 1 }
        }
        let entries = index.entries.map(\.entry)
        let ownFiles = scan.files.filter(\.location.isOwnFile)
        let allocated = ownFiles.reduce(0) { $0 + $1.allocatedBytes } + scan.segments.reduce(0) { $0 + $1.allocatedBytes }
        var live: [String: (bytes: Int, records: Int)] = [:]
        for entry in entries where entry.offset != nil {
            live[entry.file, default: (0, 0)].bytes += entry.fileSize
            live[entry.file, default: (0, 0)].records += 1
        }
        let segments = scan.segments.map { segment in
            SegmentSummary(
                file: segment.file, bytes: segment.length, liveBytes: live[segment.file]?.bytes ?? 0,
                liveRecords: live[segment.file]?.records ?? 0, tornTailBytes: segment.tornTailBytes
            )
        }
        let largestEntries = entries.sorted { a, b in
            a.size != b.size ? a.size > b.size : a.sequence < b.sequence
        }.prefix(max(0, largest))

        let summary = Summary(
            path: root,
            inspectedAt: now,
            formatVersion: Int(EntryFile.version),
            manifestVersion: read.version,
            manifestSavedAt: manifest.map { $0.savedAt.date },
            manifestIsCurrent: read.isCurrent && manifest != nil,
            indexSource: index.source,
            lockHeld: holder != nil,
            writerPID: holder?.pid,
            entries: index.entries.count,
            liveEntries: index.entries.count - histogram.expired,
            expiredEntries: histogram.expired,
            rawBytes: rawBytes,
            storedBytes: storedBytes,
            compressionRatio: storedBytes == 0 ? 1 : Double(rawBytes) / Double(storedBytes),
            filesOnDisk: ownFiles.count + scan.segments.count,
            bytesOnDisk: ownFiles.reduce(0) { $0 + $1.fileLength } + scan.segments.reduce(0) { $0 + $1.length },
            allocatedBytes: allocated,
            directoryBytes: allocated + DiskStore.footprint(of: root) + allocation(of: DiskStore.manifestFile),
            segments: segments,
            deadBytes: segments.reduce(0) { $0 + $1.deadBytes },
            diskBudget: manifest?.diskBudget,
            unindexedFiles: index.unindexedFiles,
            damagedFiles: scan.damaged,
            temporaryFiles: tmp.count + scan.temporaryFiles.count,
            quarantinedFiles: quarantine.count,
            quarantinedBytes: quarantine.bytes,
            expiry: histogram,
            largestEntries: Array(largestEntries),
            keySpaces: spaces
        )
        return Inspection(summary: summary, entries: entries)
    }
}

/// Rebuilds the index as opening the directory would: key spaces from the
/// manifest (the top level always first), entries from the manifest when it
/// is current, else from the files' headers in write order, where a key space
/// the manifest does not name is created unbounded and a file whose key space
/// has another kind is left out.
struct IndexBuilder {
    private(set) var spaces: [Manifest.Space] = []
    /// Every entry, the index of its key space in `spaces`, and its exact
    /// expiry (the entry's `Date` rounds it), in write order.
    private(set) var entries: [(entry: CacheDirectory.Entry, space: Int, expiry: Timestamp)] = []
    private(set) var unindexedFiles = 0
    let source: CacheDirectory.IndexSource
    private var spaceIndex: [String: Int] = [:]

    init(manifest: Manifest?, useManifestEntries: Bool, files: [FoundFile]) {
        source = manifest != nil && useManifestEntries ? .manifest : .entryFiles
        // Since version 4 a settled entry is listed by its sequence alone: the engine's rebuild finds its record.
        let listsEveryEntry = manifest?.settled.isEmpty ?? true
        addSpace(Manifest.Space(name: "", kind: .topLevel, capacity: .max, counters: KeySpaceCounters(), entries: []))
        for space in manifest?.spaces ?? [] {
            var bare = space
            bare.entries = []
            if let existing = spaceIndex[space.name] {
                guard spaces[existing].kind == space.kind else { continue }
                let entries = spaces[existing].entries
                spaces[existing] = bare
                spaces[existing].entries = entries
            } else {
                addSpace(bare)
            }
        }
        if source == .manifest, listsEveryEntry, let manifest {
            var listed = Set<String>()
            for space in manifest.spaces {
                guard let index = spaceIndex[space.name], spaces[index].kind == space.kind else { continue }
                for entry in space.entries {
                    let restored = CacheDirectory.Entry(saved: entry, in: space)
                    listed.insert(restored.file)
                    entries.append((restored, index, entry.expiry))
                }
            }
            unindexedFiles = files.count(where: { $0.location.isOwnFile && !listed.contains($0.file) })
        } else {
            // The engine's own rebuild after a crash: the checkpoint rule, tombstones, newest version wins.
            var state = StoreState(memoryLimit: 0, keepsFiles: true)
            for space in spaces.dropFirst() {
                _ = try? state.keySpace(named: space.name, kind: space.kind, capacity: space.capacity)
            }
            _ = state.restore(found: files.map(\.record), checkpoint: manifest)
            var byVersion: [String: FoundFile] = [:]
            for file in files { byVersion["\(file.header.space)\u{0}\(file.header.key)\u{0}\(file.header.sequence)"] = file }
            for space in state.spaces where spaceIndex[space.name] == nil {
                addSpace(Manifest.Space(name: space.name, kind: space.kind, capacity: .max, counters: KeySpaceCounters(), entries: []))
            }
            state.forEachEntry { space, key, record in
                let name = state.spaces[space].name
                guard let file = byVersion["\(name)\u{0}\(key)\u{0}\(record.sequence)"] else { return }
                entries.append((CacheDirectory.Entry(header: file.header, fileLength: file.fileLength, file: file.file, location: record.location), spaceIndex[name]!, record.expiry))
            }
            unindexedFiles = files.count(where: { $0.location.isOwnFile }) - entries.count(where: { $0.entry.offset == nil })
        }
        entries.sort { $0.entry.sequence < $1.entry.sequence }
    }

    private mutating func addSpace(_ space: Manifest.Space) {
        spaces.append(space)
        spaceIndex[space.name] = spaces.count - 1
    }
}
