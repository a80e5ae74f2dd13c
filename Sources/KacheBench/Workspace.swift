import Foundation

/// Where a bench run writes: the cache directory every Kache run starts from
/// empty, and the folder the file-system baselines write to.
///
/// Without `--dir`, both live in a fresh temporary directory (`$TMPDIR`)
/// that is removed at the end, on error, and on SIGINT, SIGTERM or SIGHUP.
/// With `--dir PATH`, PATH is the cache directory and is kept (holding the
/// cache of the last run) so `kache inspect PATH` can look at it; the
/// baselines then write beside it, in a hidden temporary folder on the same
/// file system (`.kache-bench-floor-XXXXXX`), which is removed.
final class Workspace: Sendable {
    /// The cache directory of every Kache run (wiped before each).
    let cacheDirectory: URL
    /// The folder of the file-system baselines (wiped before each).
    let floorDirectory: URL
    /// Whether the cache directory stays after the run.
    let keepsCache: Bool
    /// What ``finish()`` removes.
    private let temporaryFolder: URL

    /// Something that keeps a workspace from being set up.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates the workspace: a temporary one, or around `dir`.
    /// - Throws: ``Refusal`` when `dir` holds something other than a Kache
    ///   cache directory (the bench wipes it), or a folder can't be created.
    init(keeping dir: String?) throws {
        if let dir {
            let cache = URL(fileURLWithPath: dir).standardizedFileURL
            try Self.checkWipeable(cache)
            let parent = cache.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            temporaryFolder = try Self.makeTemporaryFolder(in: parent, prefix: ".kache-bench-floor-")
            cacheDirectory = cache
            floorDirectory = temporaryFolder.appendingPathComponent("floor", isDirectory: true)
            keepsCache = true
        } else {
            temporaryFolder = try Self.makeTemporaryFolder(in: FileManager.default.temporaryDirectory, prefix: "kache-bench-")
            cacheDirectory = temporaryFolder.appendingPathComponent("cache", isDirectory: true)
            floorDirectory = temporaryFolder.appendingPathComponent("floor", isDirectory: true)
            keepsCache = false
        }
        TemporaryFolders.register(temporaryFolder.path)
    }

    /// Removes the cache directory, so that the next Kache opens an empty one.
    /// - Returns: its URL.
    /// (Kache creates it again, one level deep: if an interruption removed the
    /// temporary folder around it, opening fails rather than creating it anew.)
    @discardableResult
    func resetCache() throws -> URL {
        try TemporaryFolders.creating { try FileTree.remove(cacheDirectory.path) }
        return cacheDirectory
    }

    /// Empties the baselines' folder and returns its path.
    func resetFloor() throws -> String {
        try TemporaryFolders.creating {
            try FileTree.remove(floorDirectory.path)
            try FileManager.default.createDirectory(at: floorDirectory, withIntermediateDirectories: false)
        }
        return floorDirectory.path
    }

    /// A folder for what helper processes leave behind, removed with the workspace.
    func scratchFolder() throws -> URL {
        let scratch = temporaryFolder.appendingPathComponent("scratch", isDirectory: true)
        try TemporaryFolders.creating {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        }
        return scratch
    }

    /// Removes the baselines' folder (and, for a temporary workspace, the cache directory with it).
    func finish() {
        try? FileTree.remove(temporaryFolder.path)
        TemporaryFolders.unregister(temporaryFolder.path)
    }

    // MARK: - Folders

    private static func makeTemporaryFolder(in parent: URL, prefix: String) throws -> URL {
        var template = Array((parent.path + "/" + prefix + "XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) } }
        guard let path else {
            throw Refusal(description: "can't create a temporary folder in \(parent.path): \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// `dir` may be wiped if it is absent, empty, or a Kache cache directory.
    private static func checkWipeable(_ dir: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir.path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else {
            throw Refusal(description: "--dir \(dir.path) is a file, not a folder")
        }
        let names = Set((try? FileTree.entries(of: dir.path).map(\.name)) ?? [])
        guard names.isEmpty || names.contains("objects") || names.contains("manifest") else {
            throw Refusal(description: "--dir \(dir.path) holds files that are not a Kache cache directory; "
                + "kache-bench wipes that folder before every run, so give it an empty or new one")
        }
    }
}
