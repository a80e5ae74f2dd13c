import Foundation
@testable import Kache
import KacheStorage

/// A cache directory holding `count` entries written in `sync` durability and
/// closed (so the manifest is current and no value is in memory once it is
/// opened again), with errno injection scoped to this directory.
final class FaultFixture {
    let scratch: ScratchFolder
    let directory: URL
    let values: [String: Data]

    init(count: Int = 20, _ label: String = #function) throws {
        scratch = ScratchFolder(label)
        directory = scratch.child("cache")
        var values: [String: Data] = [:]
        let cache = try Kache(directory: directory, configuration: Self.configuration())
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

    /// A file per entry: the faults are injected on one entry's file by its path.
    /// (SegmentTests covers a failed append to a segment file.)
    static func configuration(_ durability: Durability = .sync) -> Kache.Configuration {
        Kache.Configuration(durability: durability, segmentThreshold: 0, logger: quietLogger)
    }

    func open(_ durability: Durability = .sync) throws -> Kache {
        try Kache(directory: directory, configuration: Self.configuration(durability))
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
