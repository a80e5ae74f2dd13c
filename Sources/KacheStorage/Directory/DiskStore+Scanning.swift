import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
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
}
