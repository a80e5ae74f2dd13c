import Foundation
import KacheStorage
import KacheWorkloads
@testable import Kache

extension Kache.Configuration {
    /// A configuration for these tests: a manual clock, the given durability and memory budget.
    /// `filePerEntry` (the default here): every entry in a file of its own
    /// (`segmentThreshold` 0), for the tests that damage, lock or replace one
    /// entry's file by its path; the others pass false and run on segment files.
    static func reliability(_ durability: Durability = .sync, clock: ManualClock = ManualClock(), memoryBudget: Int = 64 << 20, filePerEntry: Bool = true) -> Self {
        Kache.Configuration(
            memoryBudget: memoryBudget, durability: durability, segmentThreshold: filePerEntry ? 0 : 16 << 10, clock: clock, logger: quietLogger
        )
    }
}

/// Deterministic test data, replayable by seed: the workloads' SplitMix64.
typealias SeededRandom = SplitMix64

extension SplitMix64 {
    /// `count` bytes LZ4 can't shrink.
    mutating func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < count {
                let word = next().littleEndian
                let chunk = min(8, count - offset)
                withUnsafeBytes(of: word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: chunk) }
                offset += chunk
            }
        }
        return data
    }
}

/// A value that names its key and version, followed by text LZ4 shrinks: a
/// read can tell a foreign value (another key's) from a stale or torn one.
func namedValue(_ key: String, version: Int, length: Int = 200) -> Data {
    let pattern = Data("{\"v\":\(version)},".utf8)
    var body = Data(capacity: length + pattern.count)
    while body.count < length { body.append(pattern) }
    return Data("\(key)#\(version)#".utf8) + body.prefix(length)
}
