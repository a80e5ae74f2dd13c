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
///   segments/     small entries' records appended back to back (SegmentStore)
///   objects/xx/…  one file per large entry (EntryFile), named by EntryName, and
///                 `.`-prefixed files being written (removed by the rebuild after a crash)
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
    private let lock: DirectoryLock
    /// Writes, deletions and quarantines of one name are serialized by one of
    /// these stripes, so that a newer version is never overwritten by an older one.
    private let stripes: [Locked<Void>]
    private let tmpCounter = Atomic<UInt64>(0)
    private let writtenBytes = Atomic<UInt64>(0)
    private let markerPresent = Locked(false)
    /// Changes under way: their index change may be visible while their file
    /// work is not done yet (see `beginChange()`).
    private let changesUnderWay = Atomic<Int>(0)
    /// Serializes saves: each takes its snapshot and writes it while no other
    /// does, so an older snapshot never replaces a newer manifest.
    private let manifestWriter = Locked(())
    /// Set by `stopChanges()`: from then on no change may begin, so none can
    /// touch a file after the lock is released.
    private let isClosing = Atomic<Bool>(false)
    /// Set while `withChangesPaused` runs: changes that begin meanwhile wait.
    private let isPaused = Atomic<Bool>(false)
    /// One pause at a time.
    private let pauser = Locked(())

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
        for folder in ["", Self.objectsFolder, Self.segmentsFolder, Self.tmpFolder, Self.quarantineFolder] {
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
    private static func makeDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) == 0 { return }
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
    private static let processID = getpid()

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

    // MARK: - Writing

    /// Writes `bytes` as the file of `name`: to a temporary file first, then
    /// renamed into place, so a reader or a crash sees the old file or the new
    /// one, never a mix. With `syncsEveryWrite` the data and the folder are flushed.
    /// Call inside `withExclusiveAccess(to:)`.
    package func write(_ bytes: Data, as name: EntryName) throws(StorageError) {
        let serial = tmpCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let tmp = "\(root)/\(Self.objectsFolder)/\(name.shard)/\(Self.temporaryName(for: name, serial: serial))"
        try replace(path(of: name), with: bytes, through: tmp, flushing: syncsEveryWrite, operation: "Writing the entry file")
        writtenBytes.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
        if syncsEveryWrite { syncFolder("\(root)/\(Self.objectsFolder)/\(name.shard)") }
    }

    /// Writes `bytes` to the new file `tmp`, flushes it when `flushing`, and
    /// renames it to `final`: a reader or a crash sees the old file or the
    /// new one, never a mix. On failure `tmp` is removed and `final` is untouched.
    private func replace(
        _ final: String, with bytes: some ContiguousBytes, through tmp: String, flushing: Bool, operation: String
    ) throws(StorageError) {
        do {
            try DiskStore.injectFault(.open, tmp)
            let fd = try FileDescriptor.open(
                FilePath(tmp), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite]
            )
            try fd.closeAfter {
                try DiskStore.injectFault(.write, tmp)
                _ = try bytes.withUnsafeBytes { try fd.writeAll($0) }
                if flushing {
                    try DiskStore.injectFault(.fsync, tmp)
                    if fsync(fd.rawValue) != 0 { throw Errno(rawValue: errno) }
                }
            }
            try DiskStore.injectFault(.rename, final)
            guard rename(tmp, final) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(tmp)
            throw StorageError.fileOperation(operation, path: final, errno: (error as? Errno)?.rawValue ?? EIO)
        }
    }

    /// Deletes the file of `name` if there is one. Call inside `withExclusiveAccess(to:)`.
    package func delete(_ name: EntryName) {
        unlink(path(of: name))
    }

    /// Bytes handed to the file system for entries since open.
    package var bytesWritten: UInt64 { writtenBytes.load(ordering: .relaxed) + segments.bytesWritten }

    /// Flushes a folder's entries (after a rename or unlink) to the device.
    private func syncFolder(_ path: String) { DiskStore.syncFolder(path) }

    /// Flushes a folder's entries (after a create, rename or unlink) to the device.
    package static func syncFolder(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }

    /// Flushes every file written so far to the device (one `syncfs` of the
    /// file system, cheaper than an fsync per file).
    package func syncEverything() throws(StorageError) {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .fileOperation("Opening the cache directory", path: root, errno: errno) }
        defer { Glibc.close(fd) }
        if let code = DiskFaults.failure(.fsync, path: root) { throw .fileOperation("Flushing the cache directory", path: root, errno: code) }
        guard kache_syncfs(fd) == 0 else { throw .fileOperation("Flushing the cache directory", path: root, errno: errno) }
    }

    // MARK: - Reading

    /// The result of reading one entry file.
    package enum ReadResult {
        case entry(EntryFile.Header, payload: Data)
        case missing
        /// The file is not a valid entry for `name`; `inode` identifies the file read.
        case damaged(EntryFile.Damage, inode: UInt64)
        /// The file could not be opened or read (`EMFILE`, `EACCES`, `EIO`,
        /// `ENOMEM`…): that says nothing about its bytes, so it is not damage.
        case unreadable(errno: Int32)
    }

    /// What reading a whole file found, before its bytes are decoded.
    package enum WholeFile {
        case bytes(Data, inode: UInt64)
        case missing
        /// A symbolic link, or not a regular file: never followed, never an entry.
        case notARegularFile
        /// Longer than the caller accepts; not read.
        case tooLong(length: Int, inode: UInt64)
        case unreadable(errno: Int32)
    }

    /// Reads the file at `path` whole, refusing a symbolic link in its place
    /// (`O_NOFOLLOW`) and anything but a regular file (`O_NONBLOCK`, so a FIFO
    /// planted in its place can't block the open). The one whole-file read of
    /// the engine (entry files, the manifest) and of `CacheDirectory`.
    package static func readWholeFile(path: String, maximumLength: Int = .max) -> WholeFile {
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .missing
            // O_NOFOLLOW met a symbolic link planted in the file's place.
            case ELOOP: return .notARegularFile
            case let code: return .unreadable(errno: code)
            }
        }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .unreadable(errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .notARegularFile }
        let length = Int(info.st_size)
        let inode = UInt64(info.st_ino)
        guard length <= maximumLength else { return .tooLong(length: length, inode: inode) }
        var bytes = Data(count: length)
        let got = bytes.withUnsafeMutableBytes { readFully(fd, path: path, at: 0, into: $0) }
        guard got >= 0 else { return .unreadable(errno: errno) }
        bytes.count = got
        return .bytes(bytes, inode: inode)
    }

    /// Reads and verifies the file of `name` (checksum, format, that it holds
    /// this very key), and decompresses its payload. Never traps.
    /// - Parameter maximumLength: longer files are damaged without being read.
    package func read(_ name: EntryName, maximumLength: Int) -> ReadResult {
        let bytes: Data
        let inode: UInt64
        switch DiskStore.readWholeFile(path: path(of: name), maximumLength: maximumLength) {
        case .missing: return .missing
        case .notARegularFile: return .damaged(.badMagic, inode: 0)
        case let .tooLong(length, inode): return .damaged(.lengthMismatch(expected: maximumLength, actual: length), inode: inode)
        case let .unreadable(code): return .unreadable(errno: code)
        case let .bytes(data, fileInode):
            bytes = data
            inode = fileInode
        }
        let decoded = bytes.withUnsafeBytes { raw in
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

    // MARK: - Quarantine

    /// Moves a damaged file of `name` aside into `quarantine/`, if it is still
    /// the file that was read (`inode`, 0 for any). Call inside `withExclusiveAccess(to:)`.
    /// - Returns: the bytes the moved file occupies (0 when it was deleted
    ///   instead), or nil when it moved nothing.
    @discardableResult
    package func quarantine(_ name: EntryName, inode: UInt64) -> Int? {
        quarantine(path: path(of: name), inode: inode)
    }

    /// Moves the file at `path` into `quarantine/` under a unique name.
    @discardableResult
    package func quarantine(path source: String, inode: UInt64) -> Int? {
        var info = stat()
        guard lstat(source, &info) == 0, inode == 0 || UInt64(info.st_ino) == inode else { return nil }
        let serial = tmpCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let base = (source as NSString).lastPathComponent
        let target = "\(root)/\(Self.quarantineFolder)/\(base).\(Int(Date().timeIntervalSince1970)).\(Self.processID).\(serial)"
        if rename(source, target) == 0 { return Int(info.st_blocks) * 512 }
        return unlink(source) == 0 ? 0 : nil
    }

    // MARK: - Scanning

    /// An entry file found by `scanHeaders`.
    package struct ScannedFile: Sendable {
        package var header: EntryFile.Header
        package var fileLength: Int
    }

    /// Reads the header of every file under `objects/` (never a payload), on
    /// all cores. Files that are not valid entries, or that sit under a name
    /// that is not their own, are moved to quarantine and counted. Temporary
    /// files are deleted when `deletingTemporaryFiles` (at open, under the
    /// lock and before any write, they are what a crash left); otherwise they
    /// may be writes in progress and are left alone.
    ///
    /// - Throws: when a folder can't be listed or a file can't be opened or
    ///   read (descriptors exhausted, permission, I/O error): the index can't
    ///   be rebuilt without it, and such a file is not damage, so nothing is
    ///   moved for it.
    /// - Complexity: O(files), one open and one small read each.
    package func scanHeaders(deletingTemporaryFiles: Bool) throws(StorageError) -> (files: [ScannedFile], quarantined: Int) {
        let results = Locked<(files: [ScannedFile], quarantined: Int, failure: StorageError?)>(([], 0, nil))
        DispatchQueue.concurrentPerform(iterations: 256) { shard in
            let folder = "\(root)/\(Self.objectsFolder)/\(DiskStore.shardName(shard))"
            var files: [ScannedFile] = []
            var damaged = 0
            do throws(StorageError) {
                for fileName in try DiskStore.listFolder(folder) {
                    let path = "\(folder)/\(fileName)"
                    if DiskStore.isTemporaryName(fileName) {
                        if deletingTemporaryFiles { unlink(path) }
                        continue
                    }
                    switch DiskStore.readHeader(path: path) {
                    case let .success(file):
                        let name = EntryName(space: file.header.space, key: file.header.key)
                        if name.fileName == fileName, name.shard == DiskStore.shardName(shard) {
                            files.append(file)
                        } else {
                            damaged += quarantine(path: path, inode: 0) == nil ? 0 : 1
                        }
                    case .failure(.missing):
                        continue
                    case let .failure(.unreadable(code)):
                        throw .fileOperation("Reading an entry file's header", path: path, errno: code)
                    case .failure(.damaged):
                        damaged += quarantine(path: path, inode: 0) == nil ? 0 : 1
                    }
                }
            } catch {
                results.withLock { $0.failure = $0.failure ?? error }
            }
            results.withLock {
                $0.files.append(contentsOf: files)
                $0.quarantined += damaged
            }
        }
        let (files, quarantined, failure) = results.withLock { $0 }
        if let failure { throw failure }
        return (files, quarantined)
    }

    /// Deletes the temporary files in the shard folders. Only for the lock
    /// holder while nothing writes: these are writes a crash interrupted.
    package func removeTemporaryFiles() {
        for shard in 0 ..< 256 {
            let folder = "\(root)/\(Self.objectsFolder)/\(DiskStore.shardName(shard))"
            for fileName in (try? DiskStore.listFolder(folder)) ?? [] where DiskStore.isTemporaryName(fileName) {
                unlink("\(folder)/\(fileName)")
            }
        }
    }

    /// The names in a folder (without `.` and `..`); empty when it does not exist.
    /// - Throws: when it exists and can't be listed, with the reason.
    package static func listFolder(_ path: String) throws(StorageError) -> [String] {
        if let code = DiskFaults.failure(.open, path: path + "/") {
            throw .fileOperation("Listing the folder", path: path, errno: code)
        }
        guard let folder = opendir(path) else {
            if errno == ENOENT { return [] }
            throw .fileOperation("Listing the folder", path: path, errno: errno)
        }
        defer { closedir(folder) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(folder) else {
                if errno != 0 { throw .fileOperation("Listing the folder", path: path, errno: errno) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
    }

    package enum HeaderReadFailure: Error {
        case missing
        case damaged(EntryFile.Damage)
        /// Not damage: see `ReadResult.unreadable`.
        case unreadable(Int32)
    }

    /// Reads and checks one file's header and names and, when `verifyingChecksum`,
    /// the checksum of the whole file (never decompressing it).
    ///
    /// The rebuild after a crash verifies: a bit flipped in a header's expiry or
    /// kind still parses, and would otherwise be swept as expired or filed under
    /// the wrong key space instead of being quarantined.
    package static func readHeader(path: String, verifyingChecksum: Bool = true) -> Result<ScannedFile, HeaderReadFailure> {
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .failure(.missing)
            case ELOOP: return .failure(.damaged(.badMagic))
            case let code: return .failure(.unreadable(code))
            }
        }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(errno)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.damaged(.badMagic)) }
        let length = Int(info.st_size)
        // Header and both names fit in 48 + 2 × 65,535 bytes.
        let wanted = verifyingChecksum ? length : min(length, EntryFile.headerSize + 2 * Int(UInt16.max))
        var prefix = [UInt8](repeating: 0, count: min(wanted, 4096))
        var got = prefix.withUnsafeMutableBytes { DiskStore.readFully(fd, path: path, at: 0, into: $0) }
        if got == prefix.count, wanted > prefix.count {
            prefix = [UInt8](repeating: 0, count: wanted)
            got = prefix.withUnsafeMutableBytes { DiskStore.readFully(fd, path: path, at: 0, into: $0) }
        }
        guard got >= 0 else { return .failure(.unreadable(errno)) }
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
    package static func readFully(_ fd: Int32, path: String, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let code = DiskFaults.failure(.read, path: path) {
            errno = code
            return -1
        }
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

    // MARK: - Footprint

    /// Bytes the directory occupies besides entry files and the manifest, as
    /// `du` counts them: every folder, the lock and the dirty marker, and
    /// everything in `tmp/` and `quarantine/`. Links are not followed.
    /// - Complexity: O(folders + files outside the shard folders).
    package func measureFootprint() -> Int {
        DiskStore.footprint(of: root)
    }

    /// `measureFootprint()` of the directory at `root`; reads only metadata.
    package static func footprint(of root: String) -> Int {
        func allocated(_ path: String) -> (bytes: Int, isFolder: Bool) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return (0, false) }
            return (Int(info.st_blocks) * 512, (info.st_mode & S_IFMT) == S_IFDIR)
        }
        // Below `folder`, every file and folder; in a shard folder only the folder itself.
        func total(_ folder: String, depth: Int) -> Int {
            var sum = allocated(folder).bytes
            for name in (try? DiskStore.listFolder(folder)) ?? [] {
                let path = "\(folder)/\(name)"
                if depth == 0, name == manifestFile { continue }
                if depth == 1, folder.hasSuffix("/\(segmentsFolder)"), SegmentStore.id(ofFileName: name) != nil { continue }
                let (bytes, isFolder) = allocated(path)
                if isFolder {
                    sum += depth == 1 && folder.hasSuffix("/\(objectsFolder)") ? bytes : total(path, depth: depth + 1)
                } else {
                    sum += bytes
                }
            }
            return sum
        }
        return total(root, depth: 0)
    }

    // MARK: - Injected faults (tests only)

    /// `open(2)`, or the failure a test injected for `path` (`DiskFaults`).
    package static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        if let code = DiskFaults.failure(.open, path: path) {
            errno = code
            return -1
        }
        return open(path, flags, mode)
    }

    /// Throws the failure a test injected for `operation` on `path`, if any.
    package static func injectFault(_ operation: DiskFaults.Operation, _ path: String) throws(Errno) {
        if let code = DiskFaults.failure(operation, path: path) { throw Errno(rawValue: code) }
    }

    // MARK: - Manifest

    /// Writes the manifest atomically and durably: temporary file, fsync, rename, fsync of the folder.
    package func writeManifest(_ bytes: [UInt8]) throws(StorageError) {
        // Saves are serialized (`withManifestWriter`), so one name per process is enough;
        // a file a crash left there is removed first (opening clears `tmp/` too).
        let tmp = "\(root)/\(Self.tmpFolder)/manifest.\(getpid())"
        unlink(tmp)
        try replace("\(root)/\(Self.manifestFile)", with: bytes, through: tmp, flushing: true, operation: "Writing the manifest")
        syncFolder(root)
    }

    /// Runs `body` (snapshot, write, clear the marker) while no other save does.
    package func withManifestWriter<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try manifestWriter.withLock { (_: inout Void) throws(E) -> R in try body() }
    }

    /// The manifest's bytes, or nil when there is none. A manifest that is not
    /// a regular file (a symlink planted in its place) reads as no bytes, which
    /// fails to decode, so it is quarantined and never followed.
    package func readManifest() throws(StorageError) -> [UInt8]? {
        let path = "\(root)/\(Self.manifestFile)"
        switch DiskStore.readWholeFile(path: path) {
        case .missing: return nil
        case .notARegularFile, .tooLong: return []
        case let .unreadable(code): throw .fileOperation("Reading the manifest", path: path, errno: code)
        case let .bytes(bytes, _): return [UInt8](bytes)
        }
    }


    /// Moves a manifest that does not decode into quarantine.
    package func quarantineManifest() {
        quarantine(path: "\(root)/\(Self.manifestFile)", inode: 0)
    }

    // MARK: - The dirty marker

    /// Whether the `dirty` marker is present: files changed since the manifest was written.
    package var isManifestStale: Bool { markerPresent.withLock { $0 } }

    /// Whether `withChangesPaused` holds changes back now (`beginChange` waits).
    package var changesArePaused: Bool { isPaused.load(ordering: .sequentiallyConsistent) }

    /// Called before an index change and the file work it implies: counts the
    /// change as under way and marks the manifest as stale. Pair with `endChange()`
    /// once the file work is done (or queued for the write-behind thread).
    ///
    /// Returns false, counting nothing, once `stopChanges()` was called: the
    /// caller must then touch no file. (Both sides use sequentially consistent
    /// atomics: a change either counts before the closer looks, or sees it closing.)
    ///
    /// While `withChangesPaused` runs, it waits. A change must not begin
    /// another inside it (the inner one would wait for a pause that waits for
    /// the outer one): nested work says so and skips this.
    package func beginChange() -> Bool {
        while true {
            changesUnderWay.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if isClosing.load(ordering: .sequentiallyConsistent) {
                changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                return false
            }
            if !isPaused.load(ordering: .sequentiallyConsistent) { break }
            changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            while isPaused.load(ordering: .sequentiallyConsistent), !isClosing.load(ordering: .sequentiallyConsistent) {
                usleep(100)
            }
        }
        noteChange()
        return true
    }

    /// Runs `body` while no change is under way: those under way finish first,
    /// and those that begin meanwhile wait until it returns. For rebuilding the
    /// index (`load()`), which must not reset it under a write in flight.
    package func withChangesPaused<R: Sendable, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try pauser.withLock { (_: inout Void) throws(E) -> R in
            isPaused.store(true, ordering: .sequentiallyConsistent)
            defer { isPaused.store(false, ordering: .sequentiallyConsistent) }
            while changesUnderWay.load(ordering: .sequentiallyConsistent) > 0 { usleep(100) }
            return try body()
        }
    }

    /// Ends a change begun with `beginChange()`.
    package func endChange() {
        changesUnderWay.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }

    /// Marks the manifest as stale, once.
    package func noteChange() {
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
    package func clearStaleMarker(if isStillComplete: () -> Bool) {
        markerPresent.withLock { present in
            guard present, changesUnderWay.load(ordering: .sequentiallyConsistent) == 0, isStillComplete() else { return }
            unlink("\(root)/\(Self.dirtyFile)")
            syncFolder(root)
            present = false
        }
    }
}
