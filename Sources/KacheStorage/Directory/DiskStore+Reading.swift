import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Reading

    /// The result of reading one entry file.
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

    /// What reading one record from a file found, before anyone checks whose it is.
    package enum RecordFileRead {
        /// The record, decoded; `length` is its length in bytes.
        case record(EntryFile.Header, payload: Data, length: Int, inode: UInt64)
        case missing
        /// A symbolic link, or not a regular file: never followed, never a record.
        case notARegularFile
        /// Longer than the caller accepts; not read.
        case tooLong(length: Int, inode: UInt64)
        case damaged(EntryFile.Damage, inode: UInt64)
        /// Not damage: see `RecordRead.unreadable`.
        case unreadable(errno: Int32)
    }

    /// Reads and decodes the file of its own at `path`, opened read-only as
    /// `readWholeFile` opens it. Checks the header, lengths, checksum and
    /// that the payload decompresses; not whose record it is.
    /// - Complexity: O(n) in the file's length.
    package static func readRecord(atPath path: String, maximumLength: Int = .max) -> RecordFileRead {
        let file = readWholeFile(path: path, maximumLength: maximumLength)
        guard case let .bytes(bytes, inode) = file else { return RecordFileRead(file) }
        do {
            let (header, payload) = try EntryFile.decode(bytes)
            return .record(header, payload: payload, length: bytes.count, inode: inode)
        } catch {
            return .damaged(error, inode: inode)
        }
    }

    /// Reads and checks the record at `location` of the segment file at
    /// `path`, opened read-only as `readWholeFile` opens it: a record of
    /// version 2, or one record of a block (`SegmentStore.readRecord`).
    /// `length` in the result is the record's share of its block.
    package static func readSegmentRecord(atPath path: String, at location: RecordLocation) -> RecordFileRead {
        let opened = openRegularFile(path)
        guard case let .opened(fd, _, inode) = opened else { return RecordFileRead(WholeFile(opened)) }
        defer { Glibc.close(fd) }
        do {
            let (header, payload) = try SegmentStore.readRecord(at: location) { readFully(fd, path: path, at: $0, into: $1) }
            return .record(header, payload: payload, length: location.length, inode: inode)
        } catch {
            switch error {
            case let .unreadable(code): return .unreadable(errno: code)
            case let .damaged(damage): return .damaged(damage, inode: inode)
            }
        }
    }

    /// A file opened for reading, or why not.
    fileprivate enum OpenedFile {
        case opened(Int32, length: Int, inode: UInt64)
        case missing, notARegularFile
        case unreadable(errno: Int32)
    }

    /// Opens the file at `path` read-only, refusing a symbolic link (`O_NOFOLLOW`)
    /// and anything but a regular file (`O_NONBLOCK`, so a FIFO can't block the open).
    private static func openRegularFile(_ path: String) -> OpenedFile {
        let fd = openFile(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .missing
            // O_NOFOLLOW met a symbolic link planted in the file's place.
            case ELOOP: return .notARegularFile
            case let code: return .unreadable(errno: code)
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            return .unreadable(errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            return .notARegularFile
        }
        return .opened(fd, length: Int(info.st_size), inode: UInt64(info.st_ino))
    }

    /// Reads the file at `path` whole, refusing a symbolic link in its place
    /// (`O_NOFOLLOW`) and anything but a regular file (`O_NONBLOCK`, so a FIFO
    /// planted in its place can't block the open). The one read of a file by
    /// path: the manifest, and (through `readRecord`) files of their own and
    /// those `CacheDirectory` reads (segment files: `readSegmentRecord`).
    package static func readWholeFile(path: String, maximumLength: Int = .max) -> WholeFile {
        let opened = openRegularFile(path)
        guard case let .opened(fd, fileLength, inode) = opened else { return WholeFile(opened) }
        defer { Glibc.close(fd) }
        guard fileLength <= maximumLength else { return .tooLong(length: fileLength, inode: inode) }
        var bytes = Data(count: fileLength)
        let got = bytes.withUnsafeMutableBytes { readFully(fd, path: path, at: 0, into: $0) }
        guard got >= 0 else { return .unreadable(errno: errno) }
        bytes.count = got
        return .bytes(bytes, inode: inode)
    }

    /// Reads and verifies the file of `name` (checksum, format, that it holds
    /// this very key), and decompresses its payload. Never traps.
    /// - Parameter maximumLength: longer files are damaged without being read.
    package func read(_ name: EntryName, maximumLength: Int) -> RecordRead {
        switch DiskStore.readRecord(atPath: path(of: name), maximumLength: maximumLength) {
        case .missing: return .missing
        case .notARegularFile: return .damaged(.badMagic, inode: 0)
        case let .tooLong(length, inode): return .damaged(.lengthMismatch(expected: maximumLength, actual: length), inode: inode)
        case let .unreadable(code): return .unreadable(errno: code)
        case let .damaged(damage, inode): return .damaged(damage, inode: inode)
        case let .record(header, payload, _, inode):
            guard header.key == name.canonicalKey, header.space == name.space else {
                return .damaged(.wrongEntry(expectedKey: name.canonicalKey, foundKey: header.key), inode: inode)
            }
            return .entry(header, payload: payload)
        }
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
}

/// What reading one version's record found: in a file of its own
/// (`DiskStore.read`) or in a segment (`RecordStore.read`).
package enum RecordRead: Sendable {
    case entry(EntryFile.Header, payload: Data)
    case missing
    /// The bytes are not a valid record for the name asked for; `inode`
    /// identifies the file read (0 for a segment's record).
    case damaged(EntryFile.Damage, inode: UInt64)
    /// The file could not be opened or read (`EMFILE`, `EACCES`, `EIO`,
    /// `ENOMEM`…): that says nothing about its bytes, so it is not damage.
    case unreadable(errno: Int32)
}

extension DiskStore.WholeFile {
    /// A file that did not open.
    fileprivate init(_ opened: DiskStore.OpenedFile) {
        switch opened {
        case .missing: self = .missing
        case .notARegularFile: self = .notARegularFile
        case let .unreadable(code): self = .unreadable(errno: code)
        case .opened: preconditionFailure("the file opened")
        }
    }
}

extension DiskStore.RecordFileRead {
    /// What a read that got no bytes found.
    fileprivate init(_ file: DiskStore.WholeFile) {
        switch file {
        case .missing: self = .missing
        case .notARegularFile: self = .notARegularFile
        case let .tooLong(length, inode): self = .tooLong(length: length, inode: inode)
        case let .unreadable(code): self = .unreadable(errno: code)
        case .bytes: preconditionFailure("the file was read")
        }
    }
}
