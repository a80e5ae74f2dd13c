#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Shard folders

    // A shard folder of `objects/` is made when the first file of its own is
    // written into it, not at open: an empty folder takes a block (4 KiB on
    // ext4), and a cache whose entries all live in segment files paid 1 MiB
    // for 256 of them. Whatever lists a shard folder takes a missing one as
    // empty (`listFolder`).

    /// The names a shard folder can have: `00` … `ff`.
    static let shardNames = Set((0 ..< 256).map(shardName))

    /// The shard folders `objects/` holds. A file or a link where one should
    /// be throws, as making the folder would: the directory is unusable.
    /// One listing, and an `lstat` of each shard folder found.
    static func presentShardFolders(in objects: String) throws(StorageError) -> Set<String> {
        // A listing that fails finds none: the first write to each shard then checks it.
        var present = Set<String>()
        for name in ((try? listFolder(objects)) ?? []) where shardNames.contains(name) {
            var info = stat()
            let path = "\(objects)/\(name)"
            guard lstat(path, &info) == 0 else {
                if errno == ENOENT { continue }
                throw .fileOperation("Examining the folder", path: path, errno: errno)
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .directoryUnusable(path: path, reason: "it exists and is not a folder")
            }
            present.insert(name)
        }
        return present
    }

    /// Makes the folder of `shard` (found there already is fine: another
    /// writer made it first). The caller retries the write it is for.
    func makeShardFolder(_ shard: String) throws(StorageError) {
        let folder = "\(root)/\(Self.objectsFolder)/\(shard)"
        if let code = DiskFaults.failure(.mkdir, path: folder) {
            throw .fileOperation("Creating the folder", path: folder, errno: code)
        }
        try DiskStore.makeDirectory(folder)
    }

    /// In `fsync` durability, flushes `objects/` the first time this process
    /// writes into `shard`, so that a crash can't lose the folder of a file
    /// whose write returned. Also when another thread made the folder: its
    /// flush may not have finished yet. Folders there at open were flushed then.
    func flushShardFolderEntry(_ shard: String) {
        guard !flushedShards.withLock({ $0.contains(shard) }) else { return }
        if syncFolder("\(root)/\(Self.objectsFolder)") {
            flushedShards.withLock { _ = $0.insert(shard) }
        }
    }
}
