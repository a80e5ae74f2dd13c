import Foundation
import KacheStorage
#if canImport(Glibc)
import Glibc
#endif

extension CacheDirectory {
    /// The process that holds a directory's writer lock.
    public struct LockHolder: Sendable, Equatable {
        /// Its pid, as it wrote it into the lock file; nil when that can't be read.
        public var pid: Int32?
    }

    /// Who holds the writer lock, or nil when nobody does. Takes no lock.
    ///
    /// On Linux this reads the kernel's table of locks (`/proc/locks`) rather
    /// than probing with a lock of its own: a probe, however brief, would make
    /// a writer that opens the directory at that very moment fail as if the
    /// directory were taken. Elsewhere it probes (see `DirectoryLock.holder(atPath:)`).
    public func readLockHolder() -> LockHolder? {
        let lockPath = path(DiskStore.lockFile)
        var info = stat()
        // The lock is an flock on this file; with no file, nobody has ever held it.
        guard stat(lockPath, &info) == 0 else { return nil }
        let written = DirectoryLock.writtenPID(atPath: lockPath)
        if let table = FileManager.default.contents(atPath: "/proc/locks") {
            let holders = LockTable(String(decoding: table, as: UTF8.self)).exclusiveFlockHolders(
                inode: UInt64(info.st_ino), device: UInt64(info.st_dev)
            )
            guard let holder = holders.first else { return nil }
            // The kernel's pid is right within this pid namespace; the written one in the writer's.
            return LockHolder(pid: written.flatMap { holders.contains($0) ? $0 : nil } ?? holder)
        }
        return DirectoryLock.holder(atPath: lockPath).map { LockHolder(pid: $0 < 0 ? nil : $0) }
    }
}

/// The lines of Linux's `/proc/locks`, such as
/// `1: FLOCK  ADVISORY  WRITE 4242 fe:00:16221337 0 EOF`
/// (id, class, mode, access, pid, major:minor:inode, range); a waiter's line
/// has `->` after the id and holds nothing.
struct LockTable {
    struct Line: Equatable {
        var pid: Int32
        var major: UInt64
        var minor: UInt64
        var inode: UInt64
    }

    /// The exclusive flocks held (not waited for).
    let exclusiveFlocks: [Line]

    init(_ text: String) {
        exclusiveFlocks = text.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE", let pid = Int32(fields[4]) else { return nil }
            let place = fields[5].split(separator: ":")
            guard place.count == 3, let major = UInt64(place[0], radix: 16), let minor = UInt64(place[1], radix: 16),
                  let inode = UInt64(place[2]) else { return nil }
            return Line(pid: pid, major: major, minor: minor, inode: inode)
        }
    }

    /// The pids holding an exclusive flock on the file `inode` of `device` (a `st_dev`).
    ///
    /// Some file systems (btrfs subvolumes, overlays) report a `st_dev` other
    /// than the device the kernel's table names; the inode alone then decides.
    func exclusiveFlockHolders(inode: UInt64, device: UInt64) -> [Int32] {
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        let sameInode = exclusiveFlocks.filter { $0.inode == inode }
        let sameFile = sameInode.filter { $0.major == major && $0.minor == minor }
        return (sameFile.isEmpty ? sameInode : sameFile).map(\.pid)
    }
}
