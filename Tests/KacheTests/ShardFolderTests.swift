import Foundation
import KacheStorage
import Testing
@testable import Kache
import KacheTestSupport

/// Shard folders of `objects/` are made when the first file of its own is
/// written into them (`DiskStore+ShardFolders.swift`): a cache of small
/// entries, which live in segment files, has none.
@Suite struct ShardFolderTests {
    /// The folders in `objects/`.
    func shardFolders(_ dir: TemporaryDirectory) -> Set<String> {
        Set(dir.files(in: DiskStore.objectsFolder))
    }

    /// A value too large for a segment: it gets a file of its own.
    func large(_ seed: UInt64) -> Data {
        incompressible(40_000, seed: seed)
    }

    /// A top-level key whose shard folder is none of `shards`.
    func key(notIn shards: Set<String>) -> String {
        (0...).lazy.map { "key\($0)" }.first { !shards.contains(EntryName(space: "", key: $0).shard) }!
    }

    @Test(arguments: [Durability.async, .sync, .fsync])
    func aCacheOfOnlySmallValuesMakesNoShardFolder(durability: Durability) throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability))
            let pool = try cache.pool(named: "avatars", capacity: 100)
            let queue = try cache.queue(named: "jobs", capacity: 100)
            for i in 0 ..< 300 { try cache.set(compressible(200, seed: i), forKey: "k\(i)", ttl: .seconds(600)) }
            for i in 0 ..< 50 {
                try pool.set(compressible(100, seed: 1000 + i), forKey: "p\(i)", ttl: .seconds(600))
                try queue.push(compressible(100, seed: 2000 + i), ttl: .seconds(600))
            }
            cache.removeValue(forKey: "k7")
            try cache.save()
            try cache.close()
        }
        #expect(shardFolders(dir).isEmpty)
        #expect(try CacheDirectory(url: dir.url).verify().problems.isEmpty)
        #expect(try CacheDirectory(url: dir.url).inspect().summary.entries == 399)

        let cache = try Kache(directory: dir.url, configuration: .testing(durability))
        #expect(cache.statistics.entries == 399)
        for i in 0 ..< 300 where i != 7 { #expect(cache.data(forKey: "k\(i)") == compressible(200, seed: i), "k\(i)") }
        try cache.close()
        #expect(shardFolders(dir).isEmpty)
    }

    /// The large value's shard folder, and no other; read back from the
    /// manifest, and by the rebuild that lists every shard folder (those
    /// missing taken as empty).
    @Test(arguments: [Durability.async, .sync, .fsync], [false, true])
    func aLargeValueMakesJustItsShardFolder(durability: Durability, rebuilding: Bool) throws {
        let dir = TemporaryDirectory()
        let name = EntryName(space: "", key: "large")
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability))
            for i in 0 ..< 100 { try cache.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(600)) }
            try cache.set(large(1), forKey: "large", ttl: .seconds(600))
            try cache.save()
            #expect(shardFolders(dir) == [name.shard])
            #expect(dir.files(in: "\(DiskStore.objectsFolder)/\(name.shard)") == [name.fileName])
            try cache.close()
        }
        if rebuilding { try FileManager.default.removeItem(at: dir.url.appendingPathComponent(DiskStore.manifestFile)) }
        let cache = try Kache(directory: dir.url, configuration: .testing(durability))
        #expect(cache.statistics.entries == 101)
        #expect(cache.data(forKey: "large") == large(1))
        #expect(cache.data(forKey: "k42") == Data("v42".utf8))
        cache.checkInvariants()
        try cache.close()
        #expect(shardFolders(dir) == [name.shard])
    }

    /// Making the folder fails: the write is refused with the error a full
    /// disk gives, nothing acknowledged before it is lost (across a crash
    /// too), and the next write of that key makes the folder.
    @Test(arguments: [Durability.sync, .fsync])
    func aFaultMakingAShardFolderIsATypedErrorAndLosesNothing(durability: Durability) throws {
        let dir = TemporaryDirectory()
        defer { DiskFaults.removeAll(pathContaining: dir.path) }
        let configuration = Kache.Configuration.testing(durability)
        let refused: String
        do {
            let cache = try Kache(directory: dir.url, configuration: configuration)
            try cache.set(Data("small".utf8), forKey: "small", ttl: .seconds(600))
            try cache.set(large(1), forKey: "first", ttl: .seconds(600))
            let made = shardFolders(dir)
            refused = key(notIn: made)
            let folder = dir.url.appendingPathComponent("\(DiskStore.objectsFolder)/\(EntryName(space: "", key: refused).shard)").path
            DiskFaults.inject(ENOSPC, on: .mkdir, pathContaining: dir.path + "/objects/", times: 1)
            #expect(throws: KacheError.diskFull(path: folder)) { try cache.set(large(2), forKey: refused, ttl: .seconds(600)) }
            #expect(cache.data(forKey: refused) == nil)
            #expect(cache.statistics.writeErrors == 1)
            #expect(shardFolders(dir) == made)
            #expect(cache.data(forKey: "first") == large(1))
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: configuration)
        #expect(cache.data(forKey: "small") == Data("small".utf8))
        #expect(cache.data(forKey: "first") == large(1))
        #expect(cache.data(forKey: refused) == nil)
        try cache.set(large(3), forKey: refused, ttl: .seconds(600))
        #expect(shardFolders(dir).contains(EntryName(space: "", key: refused).shard))
        try cache.close()
        let reopened = try Kache(directory: dir.url, configuration: configuration)
        #expect(reopened.data(forKey: refused) == large(3))
        #expect(reopened.data(forKey: "first") == large(1))
        try reopened.close()
    }

    /// Directories written before shard folders were made when needed hold
    /// all 256: they open, take writes and read back, folders untouched.
    @Test func aDirectoryWithAllShardFoldersKeepsWorking() throws {
        let dir = TemporaryDirectory()
        for shard in 0 ..< 256 {
            try FileManager.default.createDirectory(
                at: dir.url.appendingPathComponent("\(DiskStore.objectsFolder)/\(DiskStore.shardName(shard))"), withIntermediateDirectories: true
            )
        }
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.fsync))
            for i in 0 ..< 20 { try cache.set(large(UInt64(i)), forKey: "large\(i)", ttl: .seconds(600)) }
            try cache.set(Data("small".utf8), forKey: "small", ttl: .seconds(600))
            try cache.close()
        }
        #expect(shardFolders(dir).count == 256)
        let cache = try Kache(directory: dir.url, configuration: .testing(.fsync))
        for i in 0 ..< 20 { #expect(cache.data(forKey: "large\(i)") == large(UInt64(i)), "large\(i)") }
        #expect(cache.data(forKey: "small") == Data("small".utf8))
        try cache.close()
    }

    /// Whether an empty folder takes one 4 KiB block here (ext4 does; tmpfs takes none).
    static let foldersTakeOneBlock: Bool = {
        let dir = TemporaryDirectory("folder-probe")
        try? FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        var info = stat()
        return lstat(dir.path, &info) == 0 && Int(info.st_blocks) * 512 == 4096
    }()

    /// The disk budget keeps room for every shard folder, made or not: any
    /// write of a file of its own may make one, and `du` then counts it.
    @Test(.enabled(if: ShardFolderTests.foldersTakeOneBlock)) func theDiskBudgetKeepsRoomForShardFoldersNotMadeYet() throws {
        var configuration = Kache.Configuration.testing(.sync, filePerEntry: true)
        configuration.diskBudget = 8 << 20
        let fresh = TemporaryDirectory()
        let none = try Kache(directory: fresh.url, configuration: configuration)
        let reservedWithNone = none.statistics.reservedBytes
        try none.close()
        #expect(shardFolders(fresh).isEmpty)

        let full = TemporaryDirectory()
        for shard in 0 ..< 256 {
            try FileManager.default.createDirectory(
                at: full.url.appendingPathComponent("\(DiskStore.objectsFolder)/\(DiskStore.shardName(shard))"), withIntermediateDirectories: true
            )
        }
        let all = try Kache(directory: full.url, configuration: configuration)
        #expect(all.statistics.reservedBytes == reservedWithNone)
        #expect(reservedWithNone >= 256 * 4096)
        try all.close()
    }
}
