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
    /// With `syncsEveryWrite` the data and the shard folder are flushed, and
    /// `objects/` too the first time the shard is written to.
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
        if syncsEveryWrite {
            syncFolder(folder)
            flushShardFolderEntry(name.shard)
        }
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
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        return fsync(fd) == 0
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
