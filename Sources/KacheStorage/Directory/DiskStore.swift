import CKacheSystem
import Foundation
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The cache directory: files of their own written atomically, read with
/// verification, moved to quarantine when damaged; the segment files
/// (`SegmentStore`); the lock, the manifest's bytes and the `dirty` marker.
/// It knows entry names and bytes, never Pools, Queues or expiry rules.
///
/// One file per part: here the layout and the lock, then `+Writing`,
/// `+ShardFolders` (made when first written to), `+Reading`, `+Quarantine`,
/// `+Scanning` (what `RecordScan` reads: a folder's names, a file's header),
/// `+Footprint` (what `du` counts), and `+Changes` (changes under way, the
/// `dirty` marker, saves one at a time).
///
/// ```
/// <directory>/
///   lock          held by the writing process (DirectoryLock)
///   manifest      key spaces and the index, replaced atomically by save()
///   dirty         present while the manifest is older than the files
///   segments/     small entries' records appended back to back (SegmentStore)
///   objects/xx/…  one file per large entry (EntryFile), named by EntryName, and
///                 `.`-prefixed files being written (removed by the rebuild after a crash);
///                 a shard folder `xx` is made when its first file is written
///   tmp/          the manifest being written; cleared on open
///   quarantine/   damaged files, moved aside
/// ```
package final class DiskStore: Sendable {
    /// The cache directory's path.
    package let root: String
    /// Flush file data and directory entries on every write (`fsync` durability).
    package let syncsEveryWrite: Bool
    /// The file system's allocation unit, for counting files as `du` does.
    package let allocationUnit: Int
    /// The segment files, where small entries' records are appended.
    package let segments: SegmentStore
    let lock: DirectoryLock
    /// Writes, deletions and quarantines of one name are serialized by one of
    /// these stripes, so that a newer version is never overwritten by an older one.
    let stripes: [Locked<Void>]
    let tmpCounter = Atomic<UInt64>(0)
    let writtenBytes = Atomic<UInt64>(0)
    /// The errno of a `syncfs` that failed, 0 if none did (`syncEverything`).
    let failedFlush = Atomic<Int32>(0)
    let markerPresent = Locked(false)
    /// Changes under way: their index change may be visible while their file
    /// work is not done yet (see `beginChange()`).
    let changesUnderWay = Atomic<Int>(0)
    /// Serializes saves: each takes its snapshot and writes it while no other
    /// does, so an older snapshot never replaces a newer manifest.
    let manifestWriter = Locked(())
    /// Set by `stopChanges()`: from then on no change may begin, so none can
    /// touch a file after the lock is released.
    let isClosing = Atomic<Bool>(false)
    /// Set while `withChangesPaused` runs: changes that begin meanwhile wait.
    let isPaused = Atomic<Bool>(false)
    /// One pause at a time.
    let pauser = Locked(())
    /// The shard folders whose entry in `objects/` is known flushed to the
    /// device (`fsync` durability only; see `flushShardFolderEntry`).
    let flushedShards = Locked<Set<String>>([])

    package static let objectsFolder = "objects"
    package static let segmentsFolder = "segments"
    package static let tmpFolder = "tmp"
    package static let quarantineFolder = "quarantine"
    package static let manifestFile = "manifest"
    package static let dirtyFile = "dirty"
    package static let lockFile = "lock"

    /// Opens (creating if needed) the directory, takes its writer lock and
    /// clears what a crash left in `tmp/`. If it throws, it holds nothing.
    package init(root: String, syncsEveryWrite: Bool, segmentLength: Int = 4 << 20) throws(StorageError) {
        self.root = root
        self.syncsEveryWrite = syncsEveryWrite
        segments = SegmentStore(folder: "\(root)/\(Self.segmentsFolder)", maximumLength: segmentLength, syncsEveryWrite: syncsEveryWrite)
        var made: [String] = []
        for folder in ["", Self.objectsFolder, Self.segmentsFolder, Self.tmpFolder, Self.quarantineFolder] {
            let path = folder.isEmpty ? root : "\(root)/\(folder)"
            if try DiskStore.makeDirectory(path) { made.append(path) }
        }
        lock = try DirectoryLock(path: "\(root)/\(Self.lockFile)")
        // A file's fsync never flushes the entry of its folder: without this,
        // a power cut could take a new directory, or its `segments/`, with
        // every value an `fsync` set had acknowledged in it.
        if syncsEveryWrite {
            for parent in Set(made.map { ($0 as NSString).deletingLastPathComponent }) { DiskStore.syncFolder(parent) }
        }
        var fileSystem = statvfs()
        allocationUnit = statvfs(root, &fileSystem) == 0 && fileSystem.f_bsize > 0 ? Int(fileSystem.f_bsize) : 4096
        stripes = (0 ..< 64).map { _ in Locked(()) }
        do {
            let objects = "\(root)/\(Self.objectsFolder)"
            let present = try DiskStore.presentShardFolders(in: objects)
            if syncsEveryWrite, DiskStore.syncFolder(objects) { flushedShards.withLock { $0 = present } }
            for leftover in (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(Self.tmpFolder)")) ?? [] {
                unlink("\(root)/\(Self.tmpFolder)/\(leftover)")
            }
            markerPresent.withLock { $0 = access("\(root)/\(Self.dirtyFile)", F_OK) == 0 }
            _ = try segments.openExisting()
        } catch {
            lock.release()
            throw error
        }
    }

    /// Stops new changes from beginning and waits for those under way to
    /// finish their file work. Call before the last save of `close()`.
    package func stopChanges() {
        isClosing.store(true, ordering: .sequentiallyConsistent)
        while changesUnderWay.load(ordering: .sequentiallyConsistent) > 0 { usleep(100) }
    }

    /// Stops changes and releases the writer lock. Calling it again does nothing.
    package func close() {
        stopChanges()
        lock.release()
    }

    /// Releases the lock the way a killed process does: no new change begins,
    /// and those under way are not waited for. Tests only.
    package func abandon() {
        isClosing.store(true, ordering: .sequentiallyConsistent)
        lock.release()
    }

    package static func shardName(_ shard: Int) -> String {
        shard < 16 ? "0" + String(shard, radix: 16) : String(shard, radix: 16)
    }

    /// Creates a folder readable only by its owner, refusing a symlink in its place.
    /// - Returns: whether it made the folder (false: one was there).
    @discardableResult
    static func makeDirectory(_ path: String) throws(StorageError) -> Bool {
        if mkdir(path, 0o700) == 0 { return true }
        let code = errno
        var info = stat()
        // A file where a folder of the path should be: the directory can't be created, as when it is not writable.
        if code == ENOTDIR { throw .directoryUnusable(path: path, reason: "a part of its path is not a folder") }
        guard code == EEXIST, lstat(path, &info) == 0 else {
            throw .fileOperation("Creating the folder", path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .directoryUnusable(path: path, reason: "it exists and is not a folder")
        }
        return false
    }

    /// The name of a file being written for `name`, in the same shard folder.
    ///
    /// Not in `tmp/`: on ext4, a new inode is placed near its folder's, and
    /// without a journal the allocator skips every inode freed recently,
    /// so creating all temporary files in one folder while overwrites and
    /// evictions free inodes makes each create slower (measured with plain
    /// POSIX calls: 2.6× fewer files per second than creating them in the
    /// shard folders). A rename within one folder is also the cheaper kind.
    /// The leading dot marks it: scans skip such names, and the rebuild after
    /// a crash deletes them.
    package static func temporaryName(for name: EntryName, serial: UInt64) -> String {
        ".\(name.fileName).\(processID).\(serial)"
    }

    /// This process's ID, asked once: `getpid` is a system call, and every
    /// write names a temporary file with it.
    static let processID = getpid()

    /// Whether a file name in a shard folder is a write in progress, or one a crash interrupted.
    package static func isTemporaryName(_ fileName: String) -> Bool {
        fileName.hasPrefix(".")
    }

    package func path(of name: EntryName) -> String {
        "\(root)/\(Self.objectsFolder)/\(name.shard)/\(name.fileName)"
    }

    // MARK: - Ordering

    /// Runs `body` while no other write, deletion or quarantine of `name` runs.
    package func withExclusiveAccess<R: Sendable, E: Error>(to name: EntryName, _ body: () throws(E) -> R) throws(E) -> R {
        try stripes[name.stripe % stripes.count].withLock { (_: inout Void) throws(E) -> R in try body() }
    }
}
