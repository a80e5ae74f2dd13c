import Foundation
@testable import Kache
import KacheStorage

/// A cache directory holding `count` entries written in `sync` durability and
/// closed (so the manifest is current and no value is in memory once it is
/// opened again), with errno injection scoped to this directory. Each entry
/// has a file of its own, or with `.segments` a record in a segment file.
final class FaultFixture {
    /// Where the entries' records are.
    enum Layout: Sendable {
        case ownFiles, segments
    }

    let scratch: ScratchFolder
    let directory: URL
    let layout: Layout
    let values: [String: Data]

    init(count: Int = 20, layout: Layout = .ownFiles, _ label: String = #function) throws {
        scratch = ScratchFolder(label)
        directory = scratch.child("cache")
        self.layout = layout
        var values: [String: Data] = [:]
        let cache = try Kache(directory: directory, configuration: Self.configuration(layout: layout))
        for index in 0 ..< count {
            let value = Data("value \(index) ".utf8) + incompressible(600, seed: UInt64(index + 1))
            values["key-\(index)"] = value
            try cache.set(value, forKey: "key-\(index)", ttl: .seconds(3600))
        }
        try cache.close()
        self.values = values
    }

    deinit {
        DiskFaults.removeAll(pathContaining: directory.path)
    }

    /// A file per entry (the faults are injected on one entry's file by its
    /// path), or the default segment files.
    static func configuration(_ durability: Durability = .sync, layout: Layout = .ownFiles) -> Kache.Configuration {
        Kache.Configuration(durability: durability, segmentThreshold: layout == .ownFiles ? 0 : 16 << 10, logger: quietLogger)
    }

    func open(_ durability: Durability = .sync) throws -> Kache {
        try Kache(directory: directory, configuration: Self.configuration(durability, layout: layout))
    }

    /// The folder holding the records: the fragment faults are injected at.
    var recordFolder: String { layout == .ownFiles ? "/\(DiskStore.objectsFolder)/" : "/\(DiskStore.segmentsFolder)/" }

    /// The segment files' paths and contents.
    var segmentFiles: [String: Data] {
        let folder = directory.appendingPathComponent(DiskStore.segmentsFolder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var files: [String: Data] = [:]
        for name in names where name.hasSuffix(".seg") { files[name] = try? Data(contentsOf: folder.appendingPathComponent(name)) }
        return files
    }

    var listing: DirectoryListing { DirectoryListing(root: directory) }

    /// Makes `operation` on this directory's paths containing `fragment` fail with `code`.
    func inject(_ code: Int32, on operation: DiskFaults.Operation, at fragment: String = "/objects/", times: Int? = nil) {
        DiskFaults.inject(code, on: operation, pathContaining: directory.path + fragment, times: times)
    }

    func removeFaults() {
        DiskFaults.removeAll(pathContaining: directory.path)
    }

    var manifestBytes: Data? { try? Data(contentsOf: directory.appendingPathComponent(DiskStore.manifestFile)) }
}

/// `count` bytes LZ4 can't shrink, the same for the same seed.
func incompressible(_ count: Int, seed: UInt64) -> Data {
    var random = SeededRandom(seed: seed)
    return random.bytes(count)
}

/// Whether the accounting gives each segment file its length: every byte
/// appended is counted, so a file whose records all died can be deleted.
/// (`SegmentStore.checkLengths` traps instead.)
func segmentAccountingMatchesTheFiles(_ segments: SegmentStore) -> Bool {
    let lengths = segments.lengths()
    // A file just created, with nothing appended yet, is not in the accounting (-1).
    return segments.withLedger { ledger in lengths.allSatisfy { ledger.length(of: $0.id) == $0.length || $0.length == 0 } }
}
