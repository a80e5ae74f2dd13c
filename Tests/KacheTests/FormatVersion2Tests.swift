import Foundation
import KacheStorage
import Testing
@testable import Kache
import KacheTestSupport

/// A directory written in format version 2 (records back to back in segment
/// files, a manifest of version 2) opens, reads, and takes new writes in
/// blocks beside its old records.
///
/// `Fixtures/format2.tar.gz` was written by the `kache` command of commit
/// 6282871, the last to write version 2, one process per command:
/// `kache init`, then `kache set … --ttl 36500d` for `small-0` … `small-29`
/// (`"small-i "` 30 times), `large` (20,000 bytes of xorshift64, in a file of
/// its own), `p-0` … `p-4` in Pool `recent` of capacity 10 (`"pool value i"`),
/// `removed` (then `kache rm`), `twice` (`first`, then `second`) and `ключ`
/// (`unicode`). Each process appended to a segment file of its own.
@Suite struct FormatVersion2Tests {
    static let archive = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format2.tar.gz")

    /// The fixture, extracted into a fresh folder.
    func extract(_ folder: TemporaryDirectory) throws -> URL {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-xzf", Self.archive.path, "-C", folder.path]
        try tar.run()
        tar.waitUntilExit()
        try #require(tar.terminationStatus == 0, "tar extracts the fixture")
        return folder.url.appendingPathComponent("format2")
    }

    static func small(_ i: Int) -> Data { Data(String(repeating: "small-\(i) ", count: 30).utf8) }

    /// The value of `large`: xorshift64 from the golden ratio's bits, the low byte of each step.
    static let large: Data = {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        return Data((0 ..< 20_000).map { _ in
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            return UInt8(truncatingIfNeeded: x)
        })
    }()

    func expectFixtureContents(_ cache: Kache, _ comment: Comment) throws {
        for i in 0 ..< 30 { #expect(cache.data(forKey: "small-\(i)") == Self.small(i), comment) }
        #expect(cache.data(forKey: "large") == Self.large, comment)
        #expect(cache.data(forKey: "removed") == nil, comment)
        #expect(cache.data(forKey: "twice") == Data("second".utf8), comment)
        #expect(cache.data(forKey: "ключ") == Data("unicode".utf8), comment)
        let pool = try cache.pool(named: "recent", capacity: 10)
        for i in 0 ..< 5 { #expect(pool.data(forKey: "p-\(i)") == Data("pool value \(i)".utf8), comment) }
        #expect(pool.count == 5, comment)
    }

    /// Opened from its manifest of version 2, and rebuilt from its records
    /// of version 2 after a crash (the `dirty` marker).
    @Test(arguments: [false, true])
    func aDirectoryOfVersion2OpensAndReads(rebuildingFromRecords: Bool) throws {
        let folder = TemporaryDirectory()
        let directory = try extract(folder)
        if rebuildingFromRecords {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("dirty").path, contents: nil))
        }
        let clock = ManualClock()
        let cache = try Kache(directory: directory, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        try expectFixtureContents(cache, "read from version 2")
        #expect(cache.statistics.entries == 38)
        #expect(cache.statistics.quarantined == 0)
        cache.checkInvariants()
        try cache.close()
    }

    /// New writes go to blocks beside the old records; the old ones that are
    /// replaced die, the rest stay readable through a clean reopen and a crash.
    @Test(arguments: [Durability.async, .sync])
    func newWritesLandInBlocksBesideRecordsOfVersion2(durability: Durability) throws {
        let folder = TemporaryDirectory()
        let directory = try extract(folder)
        let clock = ManualClock()
        do {
            let cache = try Kache(directory: directory, configuration: .testing(durability, clock: clock, memoryBudget: 0))
            for i in 0 ..< 10 { try cache.set(Data("new \(i)".utf8), forKey: "small-\(i)", ttl: .seconds(3600)) }
            for i in 0 ..< 200 { try cache.set(compressible(300, seed: i), forKey: "fresh-\(i)", ttl: .seconds(3600)) }
            cache.removeValue(forKey: "ключ")
            try cache.save()
            cache.checkInvariants()
            try cache.close()
        }
        // From the manifest the close wrote, then rebuilt from both kinds of record (the `dirty` marker).
        for rebuilding in [false, true] {
            if rebuilding {
                #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("dirty").path, contents: nil))
            }
            let cache = try Kache(directory: directory, configuration: .testing(durability, clock: clock, memoryBudget: 0))
            for i in 0 ..< 10 { #expect(cache.data(forKey: "small-\(i)") == Data("new \(i)".utf8)) }
            for i in 10 ..< 30 { #expect(cache.data(forKey: "small-\(i)") == Self.small(i)) }
            for i in 0 ..< 200 { #expect(cache.data(forKey: "fresh-\(i)") == compressible(300, seed: i)) }
            #expect(cache.data(forKey: "large") == Self.large)
            #expect(cache.data(forKey: "ключ") == nil)
            #expect(cache.data(forKey: "twice") == Data("second".utf8))
            #expect(cache.statistics.quarantined == 0)
            cache.checkInvariants()
            try cache.close()
        }
    }
}
