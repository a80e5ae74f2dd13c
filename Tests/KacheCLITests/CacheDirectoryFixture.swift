import Foundation
import Kache
#if canImport(Glibc)
import Glibc
#endif

/// A fresh temporary path for a cache directory (created by whoever opens it
/// first), removed with everything in it when the fixture goes.
final class CacheDirectoryFixture: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kache-cli-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: scratch)
    }

    /// A folder beside the cache directory for the tests' own files.
    private var scratch: URL { URL(fileURLWithPath: path + "-scratch", isDirectory: true) }

    /// A path for a file of the test's own, outside the cache directory.
    func scratchFile(_ name: String) throws -> URL {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        return scratch.appendingPathComponent(name)
    }

    /// Opens the cache with the library, files written before `set` returns.
    /// `segmentThreshold` 0 (these tests' default) gives every entry a file
    /// of its own, which the tests that damage one file by its path need.
    func open(clock: any WallClock = SystemClock(), defaultPoolCapacity: Int = 1000, segmentThreshold: Int = 0) throws -> Kache {
        try Kache(directory: url, configuration: Kache.Configuration(
            durability: .sync, segmentThreshold: segmentThreshold, defaultPoolCapacity: defaultPoolCapacity, clock: clock
        ))
    }

    /// Opens the cache, lets `body` fill it, and closes it (which saves the manifest).
    func fill(clock: any WallClock = SystemClock(), defaultPoolCapacity: Int = 1000, segmentThreshold: Int = 0, _ body: (Kache) throws -> Void) throws {
        let cache = try open(clock: clock, defaultPoolCapacity: defaultPoolCapacity, segmentThreshold: segmentThreshold)
        try body(cache)
        try cache.close()
    }

    /// The path of the file holding `key` in the key space `space` (top level when empty).
    func entryFile(key: String, space: String = "") throws -> String {
        let inspection = try CacheDirectory(url: url).inspect()
        guard let entry = inspection.entries.first(where: { $0.key == key && $0.keySpace == space }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(space)/\(key)"])
        }
        return url.appendingPathComponent(entry.file).path
    }

    /// The names in the folder `relative`.
    func files(in relative: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.appendingPathComponent(relative).path)) ?? []
    }

    // MARK: - Damage

    /// Flips one bit of the file at `path`, `fromEnd` bytes before its end.
    func flipBit(in path: String, fromEnd: Int = 1) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count - fromEnd] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    /// Cuts the file at `path` down to `length` bytes.
    func truncate(_ path: String, to length: Int) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(length).write(to: URL(fileURLWithPath: path))
    }

    // MARK: - Snapshots

    /// One file or folder as `snapshot()` saw it.
    struct FileState: Equatable {
        var mode: UInt32
        var size: Int64
        var modified: Int64
        var changed: Int64
        var contents: Data?
    }

    /// Every file and folder under the directory: type, size, modification and
    /// status-change times to the nanosecond, and each file's contents.
    func snapshot() -> [String: FileState] {
        var states: [String: FileState] = [:]
        func visit(_ relative: String) {
            let full = relative.isEmpty ? path : "\(path)/\(relative)"
            var info = stat()
            guard lstat(full, &info) == 0 else { return }
            let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
            states[relative] = FileState(
                mode: UInt32(info.st_mode), size: Int64(info.st_size),
                modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec),
                contents: isFolder ? nil : FileManager.default.contents(atPath: full)
            )
            guard isFolder else { return }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: full)) ?? [] {
                visit(relative.isEmpty ? name : "\(relative)/\(name)")
            }
        }
        visit("")
        return states
    }
}

/// A text value that LZ4 compresses well.
func compressible(_ count: Int, seed: Int = 0) -> Data {
    let pattern = Array("{\"id\":\(seed),\"name\":\"user-\(seed)\",\"active\":true},".utf8)
    return Data((0 ..< count).map { pattern[$0 % pattern.count] })
}
