import Foundation
@testable import Kache
import KacheStorage
import KacheTestSupport

extension TemporaryDirectory {
    /// Every entry file under `objects/`.
    func entryFiles() -> [String] {
        let objects = url.appendingPathComponent("objects").path
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: objects)) ?? []
        return shards.flatMap { shard in
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(objects)/\(shard)")) ?? []).map { "\(objects)/\(shard)/\($0)" }
        }
    }

    func files(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.appendingPathComponent(folder).path)) ?? []
    }

    /// The path of the entry file of `key` in key space `space`.
    func entryPath(key: String, space: String = "") -> String {
        let name = EntryName(space: space, key: key)
        return url.appendingPathComponent("objects/\(name.shard)/\(name.fileName)").path
    }
}

extension Kache.Configuration {
    /// A configuration for tests: a manual clock and the given durability.
    static func testing(_ durability: Durability = .sync, clock: ManualClock = ManualClock(), memoryBudget: Int = 64 << 20, filePerEntry: Bool = false) -> Self {
        Kache.Configuration(memoryBudget: memoryBudget, durability: durability, segmentThreshold: filePerEntry ? 0 : 16 << 10, clock: clock)
    }
}

/// How a test has a cache rebuild its index from its directory.
enum Reload: CaseIterable, Sendable {
    /// `load()` on the open instance.
    case load
    /// `close()`, then a new instance opened on the directory.
    case reopen

    /// The cache whose index was rebuilt: `cache` itself after `load()`, a
    /// new instance, with the same configuration, after a reopen.
    func apply(to cache: Kache) throws -> Kache {
        switch self {
        case .load:
            try cache.load()
            return cache
        case .reopen:
            try cache.close()
            return try Kache(directory: cache.directory!, configuration: cache.configuration)
        }
    }
}

/// A text value that LZ4 compresses well.
func compressible(_ count: Int, seed: Int = 0) -> Data {
    let pattern = Array("{\"id\":\(seed),\"name\":\"user-\(seed)\",\"active\":true},".utf8)
    return Data((0 ..< count).map { pattern[$0 % pattern.count] })
}

/// Bytes LZ4 can't shrink.
func incompressible(_ count: Int, seed: UInt64 = 1) -> Data {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return Data((0 ..< count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    })
}

/// A deterministic generator for randomized tests (replayable by seed).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
