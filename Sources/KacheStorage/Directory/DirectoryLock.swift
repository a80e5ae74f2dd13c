import Foundation
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The `lock` file that gives a cache directory one writing process at a time.
///
/// An `flock` on the file, held for the life of the cache: the kernel releases
/// it when the holder exits or is killed, so a crashed writer never leaves a
/// stale lock. The holder's pid is written into the file so a refused opener can
/// say who holds it.
package final class DirectoryLock: Sendable {
    private let descriptor: FileDescriptor
    /// Set by the first `release()`: the descriptor's number may belong to
    /// another file after that, so it is never closed twice.
    private let released = Atomic<Bool>(false)

    /// Takes the lock or throws `StorageError.directoryLocked` naming the holder.
    package init(path: String) throws(StorageError) {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                FilePath(path), .readWrite, options: [.create, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite]
            )
        } catch {
            throw StorageError.fileOperation("Opening the lock file", path: path, errno: (error as? Errno)?.rawValue ?? EIO)
        }
        guard flock(fd.rawValue, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = DirectoryLock.holder(of: fd)
            try? fd.close()
            if code == EWOULDBLOCK {
                throw .directoryLocked(path: (path as NSString).deletingLastPathComponent, holderPID: holder)
            }
            throw .fileOperation("Locking", path: path, errno: code)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd.rawValue, 0)
        _ = try? fd.writeAll(toAbsoluteOffset: 0, pid)
        descriptor = fd
    }

    /// The pid written by whoever holds the lock on the file at `path`, if any
    /// process holds it; nil when it is free. Takes no lock.
    package static func holder(atPath path: String) -> Int32? {
        guard let fd = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow]) else { return nil }
        defer { try? fd.close() }
        // A shared lock succeeds only when no writer holds the exclusive one.
        if flock(fd.rawValue, LOCK_SH | LOCK_NB) == 0 {
            flock(fd.rawValue, LOCK_UN)
            return nil
        }
        return holder(of: fd) ?? -1
    }

    /// The pid the last holder wrote into the lock file at `path`; nil when
    /// there is none to read. Takes no lock, and says nothing of whether the
    /// lock is held now.
    package static func writtenPID(atPath path: String) -> Int32? {
        guard let fd = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow]) else { return nil }
        defer { try? fd.close() }
        return holder(of: fd)
    }

    private static func holder(of fd: FileDescriptor) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = (try? buffer.withUnsafeMutableBytes { try fd.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
        let text = String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }

    /// Releases the lock. Calling it again does nothing.
    package func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        flock(descriptor.rawValue, LOCK_UN)
        try? descriptor.close()
    }
}
