import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
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
        if DiskFaults.failure(.rename, path: source) == nil, rename(source, target) == 0 { return Int(info.st_blocks) * 512 }
        return unlink(source) == 0 ? 0 : nil
    }


    /// Moves a manifest that does not decode into quarantine.
    package func quarantineManifest() {
        quarantine(path: "\(root)/\(Self.manifestFile)", inode: 0)
    }
}
