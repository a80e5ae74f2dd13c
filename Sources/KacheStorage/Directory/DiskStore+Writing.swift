import CKacheSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Writing

    /// Writes `bytes` as the file of `name`: to a temporary file first, then
    /// renamed into place, so a reader or a crash sees the old file or the new
    /// one, never a mix. The shard folder is made if this is its first file.
    /// With `syncsEveryWrite` the data is flushed; the folders are flushed
    /// next, by `flushFolders(of:)`.
    /// Call inside `withExclusiveAccess(to:)`.
    package func write(_ bytes: Data, as name: EntryName) throws(StorageError) {
        let serial = tmpCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        let folder = "\(root)/\(Self.objectsFolder)/\(name.shard)"
        let tmp = "\(folder)/\(Self.temporaryName(for: name, serial: serial))"
        do throws(StorageError) {
            try replace(path(of: name), with: bytes, through: tmp, flushing: syncsEveryWrite, operation: "Writing the entry file")
        } catch .io(operation: _, path: _, errno: ENOENT) {
            // No shard folder yet: made now, and the write tried once more.
            try makeShardFolder(name.shard)
            try replace(path(of: name), with: bytes, through: tmp, flushing: syncsEveryWrite, operation: "Writing the entry file")
        }
        writtenBytes.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
    }

    /// With `syncsEveryWrite`, flushes the shard folder of `name` after its
    /// file was written, and `objects/` too the first time the shard is
    /// written to. The file is in place whether or not this succeeds: a
    /// failure says the write is not durable, and does not undo it.
    package func flushFolders(of name: EntryName) throws(StorageError) {
        guard syncsEveryWrite else { return }
        let folder = "\(root)/\(Self.objectsFolder)/\(name.shard)"
        let code = DiskStore.flushFolder(folder)
        guard code == 0 else { throw .fileOperation("Flushing the shard folder", path: folder, errno: code) }
        flushShardFolderEntry(name.shard)
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
                try bytes.withUnsafeBytes { try DiskStore.writeAll($0, to: fd.rawValue, path: tmp) }
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

    /// Writes all of `bytes` at the descriptor's position, with as many
    /// `write(2)` calls as it takes: one may write fewer bytes than asked, and
    /// the rest goes in the next. Each call is subject to the faults a test
    /// injected for `path` (`DiskFaults`).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(Errno) {
        var done = 0
        while done < bytes.count {
            try injectFault(.write, path)
            let n = Glibc.write(fd, bytes.baseAddress! + done, DiskFaults.writeLength(bytes.count - done, path: path))
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Errno(rawValue: errno) }
            // Nothing written and no error: no room for even a byte.
            guard n > 0 else { throw Errno(rawValue: ENOSPC) }
            done += n
        }
    }

    /// Deletes the file of `name` if there is one. Call inside `withExclusiveAccess(to:)`.
    package func delete(_ name: EntryName) {
        unlink(path(of: name))
    }

    /// Deletes the temporary files a `RecordScan` found in the shard folders
    /// (paths relative to the directory). Only for the lock holder while
    /// nothing writes: these are writes a crash interrupted.
    package func deleteTemporaryFiles(_ files: [String]) {
        for file in files { unlink("\(root)/\(file)") }
    }

    /// Bytes handed to the file system for entries since open.
    package var bytesWritten: UInt64 { writtenBytes.load(ordering: .relaxed) + segments.bytesWritten }

    /// Flushes a folder's entries (after a rename or unlink) to the device.
    @discardableResult
    func syncFolder(_ path: String) -> Bool { DiskStore.syncFolder(path) }

    /// Flushes a folder's entries (after a create, rename or unlink) to the device.
    /// - Returns: whether the flush succeeded.
    @discardableResult
    package static func syncFolder(_ path: String) -> Bool {
        flushFolder(path) == 0
    }

    /// Flushes a folder's entries to the device.
    /// - Returns: 0, or the errno of the `open` or `fsync` that failed.
    package static func flushFolder(_ path: String) -> Int32 {
        if let code = DiskFaults.failure(.fsyncFolder, path: path + "/") { return code }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { Glibc.close(fd) }
        return fsync(fd) == 0 ? 0 : errno
    }

    /// Flushes every file written so far to the device (one `syncfs` of the
    /// file system, cheaper than an fsync per file).
    ///
    /// Once a flush failed (this one, or a segment file's), the pages it
    /// covered may be gone, and the kernel reports that once: a later flush
    /// that succeeds proves nothing about them. So every later call throws
    /// that failure again, until the directory is opened anew (which, the
    /// manifest being stale, reads and verifies every record).
    package func syncEverything() throws(StorageError) {
        var failure = failedFlush.load(ordering: .relaxed)
        if failure == 0 { failure = segments.failedFlush }
        guard failure == 0 else { throw .fileOperation("Flushing the cache directory", path: root, errno: failure) }
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .fileOperation("Opening the cache directory", path: root, errno: errno) }
        defer { Glibc.close(fd) }
        var code = DiskFaults.failure(.fsync, path: root) ?? 0
        if code == 0, kache_syncfs(fd) != 0 { code = errno }
        guard code == 0 else {
            failedFlush.store(code, ordering: .relaxed)
            throw .fileOperation("Flushing the cache directory", path: root, errno: code)
        }
    }


    /// Writes the manifest atomically and durably: temporary file, fsync, rename, fsync of the folder.
    package func writeManifest(_ bytes: [UInt8]) throws(StorageError) {
        // Saves are serialized (`withManifestWriter`), so one name per process is enough;
        // a file a crash left there is removed first (opening clears `tmp/` too).
        let tmp = "\(root)/\(Self.tmpFolder)/manifest.\(getpid())"
        unlink(tmp)
        try replace("\(root)/\(Self.manifestFile)", with: bytes, through: tmp, flushing: true, operation: "Writing the manifest")
        syncFolder(root)
    }
}
