import Foundation
@testable import Kache
import KacheStorage

/// A fresh folder under the system's temporary folder, removed with everything
/// in it when the value is released.
final class ScratchFolder: Sendable {
    let url: URL
    var path: String { url.path }

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kache-reliability-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the folder (not created).
    func child(_ name: String) -> URL {
        url.appendingPathComponent(name, isDirectory: true)
    }
}

/// What a cache directory holds, seen through the file system.
struct DirectoryListing {
    let root: URL

    /// Every entry file under `objects/`, as full paths.
    func entryFiles() -> [String] {
        let objects = root.appendingPathComponent(DiskStore.objectsFolder).path
        return names(in: objects).flatMap { shard in names(in: "\(objects)/\(shard)").map { "\(objects)/\(shard)/\($0)" } }
    }

    /// The files being written (or left by a crash): the names in `tmp/`, and
    /// the `.`-prefixed names in the shard folders.
    var temporaryFiles: [String] {
        let objects = root.appendingPathComponent(DiskStore.objectsFolder).path
        let inShards = names(in: objects).flatMap { shard in
            names(in: "\(objects)/\(shard)").filter(DiskStore.isTemporaryName).map { "\(shard)/\($0)" }
        }
        return names(in: root.appendingPathComponent(DiskStore.tmpFolder).path) + inShards
    }

    /// The names in `quarantine/`.
    var quarantinedFiles: [String] { names(in: root.appendingPathComponent(DiskStore.quarantineFolder).path) }

    /// The path of the entry file of `key` in key space `space` ("" for the top level).
    func entryPath(key: String, space: String = "") -> String {
        let name = EntryName(space: space, key: key)
        return root.appendingPathComponent("\(DiskStore.objectsFolder)/\(name.shard)/\(name.fileName)").path
    }

    private func names(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }
}
