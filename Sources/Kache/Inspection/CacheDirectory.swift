import Foundation
#if canImport(Glibc)
import Glibc
import KacheStorage
#endif

/// A cache directory seen from outside, by a tool rather than by the process
/// that writes to it: what it holds, whether its files are sound, and who
/// writes to it.
///
/// Everything here except ``repair()`` is read-only: it takes no lock, creates,
/// changes and deletes nothing, and so works while another process writes to
/// the directory (it then sees the directory as that process last left it on disk).
///
/// ```swift
/// let directory = try CacheDirectory(url: URL(fileURLWithPath: "/var/cache/app"))
/// let inspection = try directory.inspect()
/// print(inspection.summary.liveEntries, inspection.summary.bytesOnDisk)
/// ```
public struct CacheDirectory: Sendable {
    /// The directory, as given.
    public let url: URL
    /// Its standardized path, used for every file operation.
    let root: String

    /// Refers to the cache directory at `url` after checking that it is one:
    /// a folder with an `objects/` folder in it. Reads nothing else.
    ///
    /// - Throws: ``CacheDirectoryError/missing(path:)`` when nothing is there,
    ///   ``CacheDirectoryError/notACacheDirectory(path:reason:)`` when it is not
    ///   a folder or not a Kache directory, ``CacheDirectoryError/io(path:reason:)``
    ///   when it can't be examined.
    public init(url: URL) throws(CacheDirectoryError) {
        self.url = url
        root = url.standardizedFileURL.path
        var info = stat()
        guard stat(root, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .missing(path: root) }
            throw .io(path: root, reason: CacheDirectory.describe(errno: code))
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .notACacheDirectory(path: root, reason: "it is a file, not a folder")
        }
        let objects = path(DiskStore.objectsFolder)
        guard lstat(objects, &info) == 0 else {
            let code = errno
            if code == ENOENT { throw .notACacheDirectory(path: root, reason: "it has no \(DiskStore.objectsFolder)/ folder") }
            throw .io(path: objects, reason: CacheDirectory.describe(errno: code))
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .notACacheDirectory(path: root, reason: "its \(DiskStore.objectsFolder) is not a folder")
        }
    }

    /// The absolute path of `relative` inside the directory.
    func path(_ relative: String) -> String {
        "\(root)/\(relative)"
    }

    static func describe(errno code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    // MARK: - Key spaces

    /// The key spaces the manifest names, with the capacities and counters it
    /// saved; empty when there is no manifest. Reads only the manifest.
    ///
    /// A tool that opens the directory for writing passes the saved capacities
    /// of ``Kache/defaultPoolName`` and ``Kache/defaultQueueName`` to its
    /// configuration, so that opening does not resize them.
    /// - Throws: ``CacheDirectoryError/damagedManifest(path:reason:)``,
    ///   ``CacheDirectoryError/io(path:reason:)``.
    public func savedKeySpaces() throws(CacheDirectoryError) -> [KeySpaceStatistics] {
        guard let manifest = try readManifest().decoded() else { return [] }
        return manifest.spaces.map { KeySpaceStatistics(saved: $0) }
    }

    /// The disk budget the manifest saved, nil when there is none (or no manifest).
    /// - Throws: ``CacheDirectoryError/damagedManifest(path:reason:)``,
    ///   ``CacheDirectoryError/io(path:reason:)``.
    public func savedDiskBudget() throws(CacheDirectoryError) -> Int? {
        try readManifest().decoded()?.diskBudget
    }

    // MARK: - One entry

    /// What ``lookUp(key:inKeySpace:now:)`` found.
    public enum Lookup: Sendable, Equatable {
        /// A live entry: its value and what its file says about it.
        case found(Data, Entry)
        /// The entry is there but its time is up.
        case expired(Entry)
        /// No file holds this key.
        case missing
        /// The file of this key is damaged (`file` is relative to the directory).
        case damaged(file: String, reason: String)
    }

    /// Reads the value of `key` in the key space `space` (empty for the top
    /// level, else a Pool's or a Queue's name) from its file, and verifies it.
    ///
    /// The file is the truth this reads: while a process writes to the
    /// directory in `async` durability, a value it set in the last moments may
    /// not be in its file yet.
    /// - Throws: ``CacheDirectoryError/io(path:reason:)`` when the file exists but can't be read.
    /// - Complexity: O(n) in the file's length; one open and one read. With
    ///   segment files, the index is read first (the manifest when it is
    ///   current, else every record's header), since a key's records may be
    ///   in several places.
    public func lookUp(key: String, inKeySpace space: String = "", now: Date = Date()) throws(CacheDirectoryError) -> Lookup {
        let name = EntryName(space: space, key: key)
        var relative = "\(DiskStore.objectsFolder)/\(name.shard)/\(name.fileName)"
        var outcome: DiskStore.RecordFileRead
        var location: RecordLocation?
        let segments = try listing(DiskStore.segmentsFolder).contains { SegmentStore.id(ofFileName: $0) != nil }
        if segments {
            // Records of one key may be in several places: the index says which is the live one.
            let (read, scan) = try consistentRead(checksums: false)
            let index = IndexBuilder(manifest: try read.decoded(), useManifestEntries: read.isCurrent, files: scan.files)
            guard let entry = index.entries.first(where: { $0.entry.key == name.canonicalKey && $0.entry.keySpace == space })?.entry else {
                return .missing
            }
            relative = entry.file
            location = entry.location
            outcome = readRecord(of: entry)
        } else {
            outcome = DiskStore.readRecord(atPath: path(relative))
        }
        switch outcome {
        case .missing:
            return .missing
        case let .unreadable(code):
            throw .io(path: path(relative), reason: CacheDirectory.describe(errno: code))
        case let .damaged(damage, _):
            return .damaged(file: relative, reason: damage.description)
        case .notARegularFile where location != nil, .tooLong where location != nil:
            return .damaged(file: relative, reason: "the segment file is not a regular file")
        case .notARegularFile:
            return .damaged(file: relative, reason: CacheDirectory.reason(.notARegularFile))
        case let .tooLong(length, _):
            return .damaged(file: relative, reason: CacheDirectory.reason(.tooLong(length: length)))
        case let .record(header, payload, fileLength, _):
            guard header.key == name.canonicalKey, header.space == space else {
                return .damaged(file: relative, reason: EntryFile.Damage.wrongEntry(expectedKey: name.canonicalKey, foundKey: header.key).description)
            }
            let entry = Entry(header: header, fileLength: fileLength, file: relative, location: location)
            return header.expiry > Timestamp(now) ? .found(payload, entry) : .expired(entry)
        }
    }
}

/// Why a ``CacheDirectory`` could not be examined or repaired.
public enum CacheDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing exists at the path.
    case missing(path: String)
    /// Something exists at the path, but it is not a Kache cache directory.
    case notACacheDirectory(path: String, reason: String)
    /// The manifest exists and does not decode (bad magic, checksum, version, truncation).
    case damagedManifest(path: String, reason: String)
    /// A writer holds the directory's lock (``CacheDirectory/repair()`` only).
    case locked(path: String, holderPID: Int32?)
    /// A file or folder could not be read, listed or changed.
    case io(path: String, reason: String)

    /// A sentence that says what happened.
    public var description: String {
        switch self {
        case let .missing(path):
            return "There is no cache directory at \(path)."
        case let .notACacheDirectory(path, reason):
            return "\(path) is not a Kache cache directory: \(reason)."
        case let .damagedManifest(path, reason):
            return "The manifest \(path) is damaged: \(reason)."
        case let .locked(path, pid):
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "The cache directory \(path) is locked by \(holder), which is writing to it."
        case let .io(path, reason):
            return "\(path) could not be read: \(reason)."
        }
    }
}

extension KeySpaceStatistics {
    /// The counts a manifest saved for one key space.
    init(saved space: Manifest.Space) {
        self.init(name: space.name, kind: Kind(space.kind), count: space.entries.count, capacity: space.capacity, counters: space.counters)
    }

    init(name: String, kind: Kind, count: Int, capacity: Int, counters: KeySpaceCounters) {
        self.name = name
        self.kind = kind
        self.count = count
        self.capacity = capacity
        evictions = counters.evictions
        expirations = counters.expirations
        pushes = counters.pushes
        pops = counters.pops
    }
}

extension KeySpaceStatistics.Kind {
    init(_ kind: KeySpace.Kind) {
        self = switch kind {
        case .topLevel: .topLevel
        case .pool: .pool
        case .queue: .queue
        }
    }
}
