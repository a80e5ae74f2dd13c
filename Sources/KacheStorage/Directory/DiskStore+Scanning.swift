import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Scanning

    // What `RecordScan`, the one scan of the directory's records, reads of
    // each folder and each file of its own.

    /// A file of its own whose header `readHeader` read.
    package struct ScannedFile: Sendable {
        package var header: EntryFile.Header
        package var fileLength: Int
    }

    /// The names in a folder (without `.` and `..`); empty when it does not
    /// exist. With `foldersOnly`, only those the listing says are folders.
    /// - Throws: when it exists and can't be listed, with the reason.
    package static func listFolder(_ path: String, foldersOnly: Bool = false) throws(StorageError) -> [String] {
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
            guard name != ".", name != "..", !foldersOnly || entry.pointee.d_type == DT_DIR else { continue }
            names.append(name)
        }
    }

    package enum HeaderReadFailure: Error {
        case missing
        case damaged(EntryFile.Damage)
        /// Not damage: see `RecordRead.unreadable`.
        case unreadable(Int32)
    }

    /// Reads and checks one file's header and names and, when `verifyingChecksum`,
    /// the checksum of the whole file (never decompressing it).
    ///
    /// The rebuild after a crash verifies: a bit flipped in a header's expiry or
    /// kind still parses, and would otherwise be swept as expired or filed under
    /// the wrong key space instead of being quarantined.
    ///
    /// A symbolic link or anything but a regular file is damage. The open
    /// neither follows a link (`O_NOFOLLOW`) nor waits (`O_NONBLOCK`: a FIFO
    /// planted among the entry files would otherwise block it until a writer came).
    package static func readHeader(path: String, verifyingChecksum: Bool = true) -> Result<ScannedFile, HeaderReadFailure> {
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
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
