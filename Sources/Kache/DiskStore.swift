import CKacheSystem
import Foundation
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The cache directory: one file per entry, written atomically, read with
/// verification, moved to quarantine when damaged. It knows entry names and
/// bytes, never Pools, Queues or expiry rules.
///
/// ```
/// <directory>/
///   lock          held by the writing process (DirectoryLock)
///   manifest      key spaces and the index, replaced atomically by save()
///   dirty         present while the manifest is older than the files
///   objects/xx/…  one file per entry (EntryFile), named by EntryName, and
///                 `.`-prefixed files being written (removed by the rebuild after a crash)
///   tmp/          the manifest being written; cleared on open
///   quarantine/   damaged files, moved aside
/// ```
final class DiskStore: Sendable {
    /// The cache directory's path.
    let root: String
    /// Flush file data and directory entries on every write (`fsync` durability).
    let syncsEveryWrite: Bool
    /// The file system's allocation unit, for counting files as `du` does.
    let allocationUnit: Int
    private let lock: DirectoryLock
    /// Writes, deletions and quarantines of one name are serialized by one of
    /// these stripes, so that a newer version is never overwritten by an older one.
    private let stripes: [Locked<Void>]
    private let tmpCounter = Atomic<UInt64>(0)
    private let markerPresent = Locked(false)
    /// Changes under way: their index change may be visible while their file
    /// work is not done yet (see `beginChange()`).
    private let changesUnderWay = Atomic<Int>(0)
    /// Serializes saves: each takes its snapshot and writes it while no other
    /// does, so an older snapshot never replaces a newer manifest.
    private let manifestWriter = Locked(())

    static let objectsFolder = "objects"
    static let tmpFolder = "tmp"
    static let quarantineFolder = "quarantine"
    static let manifestFile = "manifest"
    static let dirtyFile = "dirty"
    static let lockFile = "lock"

    /// Opens (creating if needed) the directory, takes its writer lock and
    /// clears what a crash left in `tmp/`.
    init(root: String, syncsEveryWrite: Bool) throws(KacheError) {
        self.root = root
        self.syncsEveryWrite = syncsEveryWrite
        for folder in ["", Self.objectsFolder, Self.tmpFolder, Self.quarantineFolder] {
            try DiskStore.makeDirectory(folder.isEmpty ? root : "\(root)/\(folder)")
        }
        lock = try DirectoryLock(path: "\(root)/\(Self.lockFile)")
        var fileSystem = statvfs()
        allocationUnit = statvfs(root, &fileSystem) == 0 && fileSystem.f_bsize > 0 ? Int(fileSystem.f_bsize) : 4096
        stripes = (0 ..< 64).map { _ in Locked(()) }
        do {
            for shard in 0 ..< 256 {
                try DiskStore.makeDirectory("\(root)/\(Self.objectsFolder)/\(DiskStore.shardName(shard))")
            }
            for leftover in (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(Self.tmpFolder)")) ?? [] {
                unlink("\(root)/\(Self.tmpFolder)/\(leftover)")
            }
            markerPresent.withLock { $0 = access("\(root)/\(Self.dirtyFile)", F_OK) == 0 }
        } catch {
            lock.release()
            throw error
        }
    }

    /// Releases the writer lock.
    func close() {
        lock.release()
    }

    static func shardName(_ shard: Int) -> String {
        shard < 16 ? "0" + String(shard, radix: 16) : String(shard, radix: 16)
    }

    /// Creates a folder readable only by its owner, refusing a symlink in its place.
    private static func makeDirectory(_ path: String) throws(KacheError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        var info = stat()
        guard code == EEXIST, lstat(path, &info) == 0 else {
            throw .fileOperation("Creating the folder", path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .directoryUnusable(path: path, reason: "it exists and is not a folder")
        }
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
    static func temporaryName(for name: EntryName, serial: UInt64) -> String {
        ".\(name.fileName).\(processID).\(serial)"
    }

    /// This process's ID, asked once: `getpid` is a system call, and every
    /// write names a temporary file with it.
    private static let processID = getpid()

    /// Whether a file name in a shard folder is a write in progress, or one a crash interrupted.
    static func isTemporaryName(_ fileName: String) -> Bool {
        fileName.hasPrefix(".")
    }

    func path(of name: EntryName) -> String {
        "\(root)/\(Self.objectsFolder)/\(name.shard)/\(name.fileName)"
    }

    // MARK: - Ordering

    /// Runs `body` while no other write, deletion or quarantine of `name` runs.
    func withExclusiveAccess<R: Sendable, E: Error>(to name: EntryName, _ body: () throws(E) -> R) throws(E) -> R {
        try stripes[name.stripe % stripes.count].withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    // MARK: - Writing

    /// Writes `bytes` as the file of `name`: to a temporary file first, then
    /// renamed into place, so a reader or a crash sees the old file or the new
    /// one, never a mix. With `syncsEveryWrite` the data and the folder are flushed.
    /// Call inside `withExclusiveAccess(to:)`.
    func write(_ bytes: Data, as name: EntryName) throws(KacheError) {
        let serial = tmpCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let tmp = "\(root)/\(Self.objectsFolder)/\(name.shard)/\(Self.temporaryName(for: name, serial: serial))"
        let final = path(of: name)
        do {
            let fd = try FileDescriptor.open(
                FilePath(tmp), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite]
            )
            try fd.closeAfter {
                _ = try bytes.withUnsafeBytes { try fd.writeAll($0) }
                if syncsEveryWrite, fsync(fd.rawValue) != 0 { throw Errno(rawValue: errno) }
            }
            guard rename(tmp, final) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(tmp)
            throw KacheError.fileOperation("Writing the entry file", path: final, errno: (error as? Errno)?.rawValue ?? EIO)
        }
        if syncsEveryWrite { syncFolder("\(root)/\(Self.objectsFolder)/\(name.shard)") }
    }

    /// Deletes the file of `name` if there is one. Call inside `withExclusiveAccess(to:)`.
    func delete(_ name: EntryName) {
        unlink(path(of: name))
    }

    /// Flushes a folder's entries (after a rename or unlink) to the device.
    private func syncFolder(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }

    /// Flushes every file written so far to the device (one `syncfs` of the
    /// file system, cheaper than an fsync per file).
    func syncEverything() throws(KacheError) {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .fileOperation("Opening the cache directory", path: root, errno: errno) }
        defer { Glibc.close(fd) }
        guard kache_syncfs(fd) == 0 else { throw .fileOperation("Flushing the cache directory", path: root, errno: errno) }
    }

    // MARK: - Reading

    /// The result of reading one entry file.
    enum ReadResult {
        case entry(EntryFile.Header, payload: Data)
        case missing
        /// The file is not a valid entry for `name`; `inode` identifies the file read.
        case damaged(EntryFile.Damage, inode: UInt64)
    }

    /// Reads and verifies the file of `name` (checksum, format, that it holds
    /// this very key), and decompresses its payload. Never traps.
    /// - Parameter maximumLength: longer files are damaged without being read.
    func read(_ name: EntryName, maximumLength: Int) -> ReadResult {
        let fd = open(path(of: name), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .damaged(.truncated(length: 0), inode: 0) }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .damaged(.badMagic, inode: 0) }
        let length = Int(info.st_size)
        let inode = UInt64(info.st_ino)
        guard length <= maximumLength else { return .damaged(.lengthMismatch(expected: maximumLength, actual: length), inode: inode) }
        var file = Data(count: length)
        let complete = file.withUnsafeMutableBytes { DiskStore.readFully(fd, into: $0) }
        guard complete else { return .damaged(.truncated(length: length), inode: inode) }
        let decoded = file.withUnsafeBytes { raw in
            Result { () throws(EntryFile.Damage) in try EntryFile.decode(raw) }
        }
        switch decoded {
        case let .success((header, payload)):
            guard header.key == name.canonicalKey, header.space == name.space else {
                return .damaged(.wrongEntry(expectedKey: name.canonicalKey, foundKey: header.key), inode: inode)
            }
            return .entry(header, payload: payload)
        case let .failure(damage):
            return .damaged(damage, inode: inode)
        }
    }

    /// Reads until `buffer` is full; false on an error or an early end of file.
    private static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.read(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    // MARK: - Quarantine

    /// Moves a damaged file of `name` aside into `quarantine/`, if it is still
    /// the file that was read (`inode`, 0 for any). Returns whether it moved one.
    /// Call inside `withExclusiveAccess(to:)`.
    @discardableResult
    func quarantine(_ name: EntryName, inode: UInt64) -> Bool {
        quarantine(path: path(of: name), inode: inode)
    }

    /// Moves the file at `path` into `quarantine/` under a unique name.
    @discardableResult
    func quarantine(path source: String, inode: UInt64) -> Bool {
        var info = stat()
        guard lstat(source, &info) == 0, inode == 0 || UInt64(info.st_ino) == inode else { return false }
        let serial = tmpCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let base = (source as NSString).lastPathComponent
        let target = "\(root)/\(Self.quarantineFolder)/\(base).\(Int(Date().timeIntervalSince1970)).\(getpid()).\(serial)"
        if rename(source, target) == 0 { return true }
        return unlink(source) == 0
    }

    // MARK: - Scanning

    /// An entry file found by `scanHeaders`.
    struct ScannedFile: Sendable {
        var header: EntryFile.Header
        var fileLength: Int
    }

    /// Reads the header of every file under `objects/` (never a payload), on
    /// all cores. Files that are not valid entries, or that sit under a name
    /// that is not their own, are moved to quarantine and counted; temporary
    /// files a crash left are deleted.
    /// - Complexity: O(files), one open and one small read each.
    func scanHeaders() -> (files: [ScannedFile], quarantined: Int) {
        let results = Locked<[ScannedFile]>([])
        let quarantined = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 256) { shard in
            let folder = "\(root)/\(Self.objectsFolder)/\(DiskStore.shardName(shard))"
            var files: [ScannedFile] = []
            var damaged = 0
            for fileName in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = "\(folder)/\(fileName)"
                // The scan runs at open, under the lock, before any write: a
                // temporary file here is one a crash interrupted.
                if DiskStore.isTemporaryName(fileName) {
                    unlink(path)
                    continue
                }
                switch DiskStore.readHeader(path: path) {
                case let .success(file):
                    let name = EntryName(space: file.header.space, key: file.header.key)
                    if name.fileName == fileName, name.shard == DiskStore.shardName(shard) {
                        files.append(file)
                    } else {
                        damaged += quarantine(path: path, inode: 0) ? 1 : 0
                    }
                case .failure(.missing):
                    continue
                case .failure:
                    damaged += quarantine(path: path, inode: 0) ? 1 : 0
                }
            }
            results.withLock { $0.append(contentsOf: files) }
            quarantined.wrappingAdd(damaged, ordering: .relaxed)
        }
        return (results.withLock { $0 }, quarantined.load(ordering: .relaxed))
    }

    /// Deletes the temporary files in the shard folders. Only for the lock
    /// holder while nothing writes: these are writes a crash interrupted.
    func removeTemporaryFiles() {
        for shard in 0 ..< 256 {
            let folder = "\(root)/\(Self.objectsFolder)/\(DiskStore.shardName(shard))"
            for fileName in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where DiskStore.isTemporaryName(fileName) {
                unlink("\(folder)/\(fileName)")
            }
        }
    }

    enum HeaderReadFailure: Error {
        case missing
        case damaged(EntryFile.Damage)
    }

    /// Reads and checks one file's header and names and, when `verifyingChecksum`,
    /// the checksum of the whole file (never decompressing it).
    ///
    /// The rebuild after a crash verifies: a bit flipped in a header's expiry or
    /// kind still parses, and would otherwise be swept as expired or filed under
    /// the wrong key space instead of being quarantined.
    static func readHeader(path: String, verifyingChecksum: Bool = true) -> Result<ScannedFile, HeaderReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .failure(errno == ENOENT ? .missing : .damaged(.badMagic)) }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.damaged(.badMagic)) }
        let length = Int(info.st_size)
        // Header and both names fit in 48 + 2 × 65,535 bytes.
        let wanted = verifyingChecksum ? length : min(length, EntryFile.headerSize + 2 * Int(UInt16.max))
        var prefix = [UInt8](repeating: 0, count: min(wanted, 4096))
        var got = prefix.withUnsafeMutableBytes { DiskStore.readFully(fd, at: 0, into: $0) }
        if got == prefix.count, wanted > prefix.count {
            prefix = [UInt8](repeating: 0, count: wanted)
            got = prefix.withUnsafeMutableBytes { DiskStore.readFully(fd, at: 0, into: $0) }
        }
        guard got >= 0 else { return .failure(.damaged(.truncated(length: 0))) }
        let decoded = prefix.withUnsafeBytes { raw in
            Result { () throws(EntryFile.Damage) in
                let read = UnsafeRawBufferPointer(rebasing: raw[..<got])
                let header = try EntryFile.decodeHeader(read, fileLength: length)
                if verifyingChecksum {
                    guard got == length else { throw .truncated(length: got) }
                    try EntryFile.verifyChecksum(read)
                }
                return header
            }
        }
        return decoded.map { ScannedFile(header: $0, fileLength: length) }.mapError { .damaged($0) }
    }

    /// Reads from `offset` until `buffer` is full or the file ends; the bytes
    /// read, or -1 on an error.
    private static func readFully(_ fd: Int32, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return -1 }
            guard n > 0 else { break }
            done += n
        }
        return done
    }

    // MARK: - Manifest

    /// Writes the manifest atomically and durably: temporary file, fsync, rename, fsync of the folder.
    func writeManifest(_ bytes: [UInt8]) throws(KacheError) {
        let final = "\(root)/\(Self.manifestFile)"
        let tmp = "\(root)/\(Self.tmpFolder)/manifest.\(getpid())"
        do {
            let fd = try FileDescriptor.open(
                FilePath(tmp), .writeOnly, options: [.create, .truncate, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite]
            )
            try fd.closeAfter {
                _ = try bytes.withUnsafeBytes { try fd.writeAll($0) }
                if fsync(fd.rawValue) != 0 { throw Errno(rawValue: errno) }
            }
            guard rename(tmp, final) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(tmp)
            throw KacheError.fileOperation("Writing the manifest", path: final, errno: (error as? Errno)?.rawValue ?? EIO)
        }
        syncFolder(root)
    }

    /// Runs `body` (snapshot, write, clear the marker) while no other save does.
    func withManifestWriter<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try manifestWriter.withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    /// The manifest's bytes, or nil when there is none. A manifest that is not
    /// a regular file (a symlink planted in its place) reads as no bytes, which
    /// fails to decode, so it is quarantined and never followed.
    func readManifest() throws(KacheError) -> [UInt8]? {
        let path = "\(root)/\(Self.manifestFile)"
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: return []
            case let code: throw .fileOperation("Reading the manifest", path: path, errno: code)
            }
        }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .fileOperation("Reading the manifest", path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let got = bytes.withUnsafeMutableBytes { DiskStore.readFully(fd, at: 0, into: $0) }
        guard got >= 0 else { throw .fileOperation("Reading the manifest", path: path, errno: errno) }
        return Array(bytes[..<got])
    }

    /// Moves a manifest that does not decode into quarantine.
    func quarantineManifest() {
        quarantine(path: "\(root)/\(Self.manifestFile)", inode: 0)
    }

    // MARK: - The dirty marker

    /// Whether the `dirty` marker is present: files changed since the manifest was written.
    var isManifestStale: Bool { markerPresent.withLock { $0 } }

    /// Called before an index change and the file work it implies: counts the
    /// change as under way and marks the manifest as stale. Pair with `endChange()`
    /// once the file work is done (or queued for the write-behind thread).
    func beginChange() {
        changesUnderWay.wrappingAdd(1, ordering: .sequentiallyConsistent)
        noteChange()
    }

    /// Ends a change begun with `beginChange()`.
    func endChange() {
        changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    /// Marks the manifest as stale, once.
    func noteChange() {
        markerPresent.withLock { present in
            guard !present else { return }
            let fd = open("\(root)/\(Self.dirtyFile)", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd >= 0 { Glibc.close(fd) }
            if syncsEveryWrite { syncFolder(root) }
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
    func clearStaleMarker(if isStillComplete: () -> Bool) {
        markerPresent.withLock { present in
            guard present, changesUnderWay.load(ordering: .sequentiallyConsistent) == 0, isStillComplete() else { return }
            unlink("\(root)/\(Self.dirtyFile)")
            syncFolder(root)
            present = false
        }
    }
}
