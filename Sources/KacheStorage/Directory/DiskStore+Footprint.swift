#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Footprint

    /// Bytes the directory occupies besides entry files and the manifest, as
    /// `du` counts them: every folder, the lock and the dirty marker, and
    /// everything in `tmp/` and `quarantine/`. Links are not followed. Plus a
    /// block for each shard folder not made yet: any write of a file of its
    /// own may make one, so the disk budget keeps room for all 256.
    /// - Complexity: O(folders + files outside the shard folders).
    package func measureFootprint() -> Int {
        DiskStore.footprint(of: root, reservingShardFoldersOf: allocationUnit)
    }

    /// What the directory at `root` occupies besides entry files and the
    /// manifest, as `measureFootprint()` counts it; with `unit`, plus `unit`
    /// for each shard folder not made yet. Reads only metadata.
    package static func footprint(of root: String, reservingShardFoldersOf unit: Int? = nil) -> Int {
        var shardFolders = 0
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
                if isFolder, depth == 1, folder.hasSuffix("/\(objectsFolder)") {
                    sum += bytes
                    if shardNames.contains(name) { shardFolders += 1 }
                } else if isFolder {
                    sum += total(path, depth: depth + 1)
                } else {
                    sum += bytes
                }
            }
            return sum
        }
        let measured = total(root, depth: 0)
        return measured + (unit ?? 0) * (shardNames.count - shardFolders)
    }
}
