import Foundation
@testable import Kache
import KacheStorage

/// A cache directory of many entries, and the ways the damage tests break its files.
struct DamageFixture {
    /// A Pool that holds a tenth of the entries, so that key spaces are damaged and restored too.
    static let poolName = "damage-pool"

    let directory: URL
    /// Every key, with its key space ("" for the top level) and its value.
    let entries: [(space: String, key: String, value: Data)]

    /// Writes `count` entries (a tenth in `poolName`), of 0 to ~3 KiB, about
    /// half of them compressed, saves and closes.
    static func make(in directory: URL, count: Int, seed: UInt64) throws -> DamageFixture {
        var random = SeededRandom(seed: seed)
        let cache = try Kache(directory: directory, configuration: .reliability(.async))
        let pool = try cache.pool(named: poolName, capacity: count)
        var entries: [(space: String, key: String, value: Data)] = []
        entries.reserveCapacity(count)
        for index in 0 ..< count {
            let key = "entry-\(index)"
            let length = Int(random.next() % 3000)
            let value = index % 2 == 0 ? namedValue(key, version: index, length: length) : Data(key.utf8) + random.bytes(length)
            if index % 10 == 0 {
                try pool.set(value, forKey: key, ttl: .seconds(86_400))
                entries.append((poolName, key, value))
            } else {
                try cache.set(value, forKey: key, ttl: .seconds(86_400))
                entries.append(("", key, value))
            }
        }
        try cache.close()
        return DamageFixture(directory: directory, entries: entries)
    }

    /// The entry file of entry `index`, relative to the directory and absolute.
    func file(of index: Int) -> (relative: String, path: String) {
        let name = EntryName(space: entries[index].space, key: entries[index].key)
        let relative = "\(DiskStore.objectsFolder)/\(name.shard)/\(name.fileName)"
        return (relative, directory.appendingPathComponent(relative).path)
    }

    /// Reads every entry through a cache opened on the directory; returns the
    /// indices that read as a miss, and the count of those that read wrong bytes
    /// (which must be zero).
    func readAll(_ cache: Kache) throws -> (misses: Set<Int>, wrong: Int) {
        let pool = try cache.pool(named: DamageFixture.poolName, capacity: entries.count)
        var misses = Set<Int>()
        var wrong = 0
        for (index, entry) in entries.enumerated() {
            let found = entry.space.isEmpty ? cache.data(forKey: entry.key) : pool.data(forKey: entry.key)
            if found == nil { misses.insert(index) } else if found != entry.value { wrong += 1 }
        }
        return (misses, wrong)
    }
}

/// One way to break an entry file.
enum FileDamage: CaseIterable, CustomStringConvertible {
    /// One bit flipped anywhere in the file, except the expiry and kind fields
    /// (see `DamageTests.aFlippedExpiryIsQuarantinedNotSwept` and
    /// `aFlippedKindIsQuarantinedAndHidesNothing` for those).
    case flippedBit
    /// Cut to a random length, possibly zero.
    case truncated
    /// Every byte set to zero, length kept.
    case zeroed
    /// Its content exchanged with another entry's file.
    case swapped

    var description: String {
        switch self {
        case .flippedBit: "flipped bit"
        case .truncated: "truncated"
        case .zeroed: "zeroed"
        case .swapped: "swapped"
        }
    }

    /// Applies the damage to `path` (and, for a swap, to `other`).
    func apply(to path: String, other: String, using random: inout SeededRandom) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        switch self {
        case .flippedBit:
            let expiry = EntryFile.Offset.expiry ..< EntryFile.Offset.expiry + 8
            var offset: Int
            repeat {
                offset = Int(random.next() % UInt64(bytes.count))
            } while expiry.contains(offset) || offset == EntryFile.Offset.kind
            bytes[offset] ^= 1 << (random.next() % 8)
        case .truncated:
            bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
        case .zeroed:
            bytes = [UInt8](repeating: 0, count: bytes.count)
        case .swapped:
            let otherBytes = try Data(contentsOf: URL(fileURLWithPath: other))
            try Data(bytes).write(to: URL(fileURLWithPath: other))
            bytes = [UInt8](otherBytes)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
