#if canImport(Glibc)
import Glibc
#endif

extension DiskStore {
    // MARK: - Footprint

    /// Bytes the directory occupies besides entry files and the manifest, as
    /// `du` counts them: every folder, the lock and the dirty marker, and
    /// everything in `tmp/` and `quarantine/`. Links are not followed.
    /// - Complexity: O(folders + files outside the shard folders).
    package func measureFootprint() -> Int {
        DiskStore.footprint(of: root)
    }

    /// `measureFootprint()` of the directory at `root`; reads only metadata.
    package static func footprint(of root: String) -> Int {
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
                if isFolder {
                    sum += depth == 1 && folder.hasSuffix("/\(objectsFolder)") ? bytes : total(path, depth: depth + 1)
                } else {
                    sum += bytes
                }
            }
            return sum
        }
        return total(root, depth: 0)
    }
}
