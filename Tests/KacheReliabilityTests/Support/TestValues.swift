import Foundation
@testable import Kache

extension Kache.Configuration {
    /// A configuration for these tests: a manual clock, the given durability and memory budget.
    static func reliability(_ durability: Durability = .sync, clock: ManualClock = ManualClock(), memoryBudget: Int = 64 << 20) -> Self {
        Kache.Configuration(memoryBudget: memoryBudget, durability: durability, clock: clock, logger: quietLogger)
    }
}

/// Deterministic test data (SplitMix64), replayable by seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

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
