import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

@Suite struct SetAndGetTests {
    @Test(arguments: [Durability.memory, .async, .sync, .fsync])
    func setGetOverwriteRemove(durability: Durability) throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(durability))
        try cache.set(Data("one".utf8), forKey: "k", ttl: .seconds(60))
        #expect(cache.data(forKey: "k") == Data("one".utf8))
        #expect(cache.contains("k"))
        try cache.set(Data("two".utf8), forKey: "k", ttl: .seconds(60))
        #expect(cache.data(forKey: "k") == Data("two".utf8))
        cache.removeValue(forKey: "k")
        #expect(cache.data(forKey: "k") == nil)
        #expect(!cache.contains("k"))
        try cache.set(Data(), forKey: "empty", ttl: .seconds(1))
        #expect(cache.data(forKey: "empty") == Data())
        cache.checkInvariants()
    }

    /// `removeValues(where:)` (the shared tier's drop after a tracking gap)
    /// removes the top-level keys it picks, on disk too, and nothing else:
    /// not the other keys, not a Pool's entries with a matching key.
    @Test(arguments: [Durability.memory, .sync])
    func removeValuesWhereRemovesOnlyThePickedTopLevelKeys(durability: Durability) throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(durability))
        for index in 0..<20 { try cache.set(Data("\(index)".utf8), forKey: "k\(index)", ttl: .seconds(60)) }
        let pool = try cache.pool(named: "p", capacity: 10)
        try pool.set(Data("pooled".utf8), forKey: "k1", ttl: .seconds(60))
        let removed = cache.removeValues { key in key.hasSuffix("1") }
        #expect(removed == 2)
        #expect(cache.data(forKey: "k1") == nil && cache.data(forKey: "k11") == nil)
        #expect(cache.data(forKey: "k2") == Data("2".utf8))
        #expect(pool.data(forKey: "k1") == Data("pooled".utf8))
        #expect(cache.statistics.entries == 19)
        cache.checkInvariants()
        if durability != .memory {
            try cache.close()
            let reopened = try Kache(directory: dir.url, configuration: .testing(durability))
            #expect(reopened.data(forKey: "k1") == nil && reopened.data(forKey: "k3") == Data("3".utf8))
        }
    }

    @Test func overwriteReplacesExpiryToo() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(clock: clock))
        try cache.set(Data("long".utf8), forKey: "k", ttl: .seconds(1000))
        try cache.set(Data("short".utf8), forKey: "k", ttl: .seconds(10))
        clock.advance(by: .seconds(11))
        #expect(cache.data(forKey: "k") == nil)
    }

    @Test func defaultTTLApplies() throws {
        let clock = ManualClock()
        var configuration = Kache.Configuration.testing(clock: clock)
        configuration.defaultTTL = .seconds(30)
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: configuration)
        try cache.set(Data("v".utf8), forKey: "k")
        clock.advance(by: .seconds(29))
        #expect(cache.data(forKey: "k") != nil)
        clock.advance(by: .seconds(1))
        #expect(cache.data(forKey: "k") == nil)
    }

    @Test func unicodeNormalizationTwinsAreOneKeyInMemoryAndOnDisk() throws {
        let dir = TemporaryDirectory()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(filePerEntry: true))
            try cache.set(Data("v".utf8), forKey: composed, ttl: .seconds(60))
            #expect(cache.data(forKey: decomposed) == Data("v".utf8))
            try cache.set(Data("w".utf8), forKey: decomposed, ttl: .seconds(60))
            #expect(cache.statistics.entries == 1)
            try cache.close()
        }
        #expect(dir.entryFiles().count == 1)
        let reopened = try Kache(directory: dir.url, configuration: .testing(memoryBudget: 0, filePerEntry: true))
        #expect(reopened.data(forKey: composed) == Data("w".utf8))
        #expect(reopened.data(forKey: decomposed) == Data("w".utf8))
    }

    @Test func codableValuesRoundTrip() throws {
        struct Profile: Codable, Equatable { var name: String; var age: Int }
        let cache = try Kache(inMemory: .testing())
        try cache.set(Profile(name: "Ada", age: 36), forKey: "p", ttl: .seconds(5))
        #expect(try cache.value(forKey: "p", as: Profile.self) == Profile(name: "Ada", age: 36))
        #expect(try cache.value(forKey: "missing", as: Profile.self) == nil)
        try cache.set(Data("not json".utf8), forKey: "bad", ttl: .seconds(5))
        let error = #expect(throws: KacheError.self) { try cache.value(forKey: "bad", as: Profile.self) }
        #expect(error?.case == .decodingFailed)
    }
}

@Suite struct ExpiryTests {
    @Test(arguments: [Durability.memory, .async, .sync])
    func expiredValueIsNeverReturned(durability: Durability) throws {
        let clock = ManualClock()
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: .testing(durability, clock: clock))
        try cache.set(Data("v".utf8), forKey: "k", ttl: .milliseconds(1500))
        clock.advance(by: .milliseconds(1499))
        #expect(cache.data(forKey: "k") != nil)
        clock.advance(by: .milliseconds(1))
        #expect(cache.data(forKey: "k") == nil)
        #expect(!cache.contains("k"))
    }

    @Test func everyInsertSweepsExpiredKeysAndTheirFiles() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, filePerEntry: true))
        for i in 0 ..< 10 { try cache.set(Data("v\(i)".utf8), forKey: "short\(i)", ttl: .seconds(10 + i)) }
        try cache.set(Data("keep".utf8), forKey: "long", ttl: .seconds(1000))
        #expect(dir.entryFiles().count == 11)
        clock.advance(by: .seconds(15)) // short0 ... short5 have expired
        try cache.set(Data("trigger".utf8), forKey: "new", ttl: .seconds(1000))
        #expect(cache.statistics.expirations == 6)
        #expect(cache.statistics.entries == 6)
        #expect(dir.entryFiles().count == 6)
        #expect(!FileManager.default.fileExists(atPath: dir.entryPath(key: "short0")))
        #expect(!FileManager.default.fileExists(atPath: dir.entryPath(key: "short5")))
        #expect(FileManager.default.fileExists(atPath: dir.entryPath(key: "short6")))
        cache.checkInvariants()
    }

    @Test func theLastExpiredKeyIsSweptToo() throws {
        // The 2012 Kache skipped the key after each removal and never checked the last one.
        let clock = ManualClock()
        let cache = try Kache(inMemory: .testing(clock: clock))
        for i in 0 ..< 5 { try cache.set(Data([UInt8(i)]), forKey: "k\(i)", ttl: .seconds(1)) }
        clock.advance(by: .seconds(2))
        #expect(cache.sweep() == 5)
        #expect(cache.statistics.entries == 0)
    }

    @Test func sweepTouchesOnlyExpiredEntriesAndIsNotAScan() throws {
        let clock = ManualClock()
        let cache = try Kache(inMemory: .testing(clock: clock))
        for i in 0 ..< 1000 { try cache.set(Data([1]), forKey: "k\(i)", ttl: .seconds(i + 1)) }
        clock.advance(by: .milliseconds(10_500))
        #expect(cache.sweep() == 10)
        #expect(cache.sweep() == 0)
        #expect(cache.statistics.entries == 990)
    }

    @Test func hugeTTLSaturatesInsteadOfOverflowing() throws {
        let clock = ManualClock()
        let cache = try Kache(inMemory: .testing(clock: clock))
        try cache.set(Data("v".utf8), forKey: "forever", ttl: .seconds(Int64.max))
        clock.advance(by: .seconds(100 * 365 * 86_400))
        #expect(cache.data(forKey: "forever") == Data("v".utf8))
    }

    @Test func expiryIsWallClockAndSurvivesRestart() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(clock: clock, filePerEntry: true))
            try cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(100))
            try cache.set(Data("b".utf8), forKey: "b", ttl: .seconds(300))
            try cache.close()
        }
        clock.advance(by: .seconds(200)) // "a" expires while the process is down
        let cache = try Kache(directory: dir.url, configuration: .testing(clock: clock, filePerEntry: true))
        #expect(cache.data(forKey: "a") == nil)
        #expect(cache.data(forKey: "b") == Data("b".utf8))
        #expect(cache.statistics.entries == 1)
        #expect(dir.entryFiles().count == 1) // dropped on open, file too
    }
}

@Suite struct MemoryBudgetTests {
    @Test func valuesLeaveMemoryButNotDisk() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 10_000))
        for i in 0 ..< 50 { try cache.set(compressible(1000, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
        let stats = cache.statistics
        #expect(stats.bytesInMemory <= 10_000)
        #expect(stats.memoryEvictions >= 40)
        #expect(stats.filesOnDisk == 50)
        for i in 0 ..< 50 { #expect(cache.data(forKey: "k\(i)") == compressible(1000, seed: i)) }
        #expect(cache.statistics.diskHits >= 40)
        cache.checkInvariants()
    }

    /// DESIGN contract 5: a memory miss reads the record, verifies it and
    /// promotes the entry. After a reopen no value is in memory: the first read
    /// comes from disk and brings the value in, the second from memory. For a
    /// small value (a record in a segment file) and a large one (a file of its own).
    @Test(arguments: [false, true])
    func aReadFromDiskBringsTheValueIntoMemory(large: Bool) throws {
        let dir = TemporaryDirectory()
        let value = large ? incompressible(40_000) : compressible(1000)
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
            try cache.set(value, forKey: "k", ttl: .seconds(60))
            try cache.set(Data("other".utf8), forKey: "other", ttl: .seconds(60))
            try cache.close()
        }
        #expect(FileManager.default.fileExists(atPath: dir.entryPath(key: "k")) == large, "a large value has a file of its own, a small one a segment record")
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        let before = cache.statistics
        #expect(before.entriesInMemory == 0)

        #expect(cache.data(forKey: "k") == value)
        let afterDisk = cache.statistics
        #expect(afterDisk.diskHits == before.diskHits + 1)
        #expect(afterDisk.memoryHits == before.memoryHits)
        #expect(afterDisk.entriesInMemory == 1)
        #expect(afterDisk.bytesInMemory == MemoryBudget.charge(forValueOf: value.count))

        #expect(cache.data(forKey: "k") == value)
        let afterMemory = cache.statistics
        #expect(afterMemory.memoryHits == afterDisk.memoryHits + 1)
        #expect(afterMemory.diskHits == afterDisk.diskHits)
        cache.checkInvariants()
    }

    @Test func recentlyReadValuesStayInMemory() throws {
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: .testing(.sync, memoryBudget: 5_000))
        try cache.set(compressible(1000), forKey: "hot", ttl: .seconds(60))
        for i in 0 ..< 40 {
            _ = cache.data(forKey: "hot")
            try cache.set(compressible(1000, seed: i), forKey: "cold\(i)", ttl: .seconds(60))
        }
        let before = cache.statistics.memoryHits
        _ = cache.data(forKey: "hot")
        #expect(cache.statistics.memoryHits == before + 1)
    }

    /// Issue 21: in `async` the files waiting for the writer count against
    /// the memory budget, so values leave memory to make room for them.
    @Test func theWriteBehindQueueCountsAgainstTheBudget() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, memoryBudget: 100_000))
        for i in 0 ..< 50 { try cache.set(compressible(1000, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
        try cache.save()
        let charge = MemoryBudget.charge(forValueOf: 1000)
        #expect(cache.statistics.bytesInMemory == 50 * charge, "nothing evicted yet: the queue is empty")

        // As if 60 KB of files were queued: the next set must leave room for them.
        let queued = try #require(cache.store.withLock { $0.memory.queued })
        queued.add(60_000)
        defer { queued.add(-60_000) }
        try cache.set(compressible(1000, seed: 50), forKey: "k50", ttl: .seconds(60))
        #expect(cache.statistics.bytesInMemory + queued.current <= 100_000)
        for i in 0 ... 50 { #expect(cache.data(forKey: "k\(i)") == compressible(1000, seed: i)) }
        cache.checkInvariants()
    }

    @Test func memoryDurabilityEvictsEntriesOutright() throws {
        let cache = try Kache(inMemory: .testing(memoryBudget: 4_000))
        for i in 0 ..< 20 { try cache.set(Data(count: 1000), forKey: "k\(i)", ttl: .seconds(60)) }
        #expect(cache.statistics.entries <= 4)
        #expect(cache.statistics.bytesInMemory <= 4_000)
        cache.checkInvariants()
    }
}

@Suite struct CompressionTests {
    @Test func compressibleValuesAreStoredSmaller() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true))
        try cache.set(compressible(64 * 1024), forKey: "text", ttl: .seconds(60))
        let size = try FileManager.default.attributesOfItem(atPath: dir.entryPath(key: "text"))[.size] as! Int
        #expect(size < 64 * 1024 / 4)
        #expect(cache.statistics.bytesOnDisk == size)
        #expect(cache.statistics.rawBytes == 64 * 1024)
    }

    @Test func incompressibleValuesCostOnlyTheHeader() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
        let blob = incompressible(256 * 1024)
        try cache.set(blob, forKey: "blob", ttl: .seconds(60))
        let size = try FileManager.default.attributesOfItem(atPath: dir.entryPath(key: "blob"))[.size] as! Int
        #expect(size == blob.count + EntryFile.headerSize + "blob".utf8.count)
        #expect(cache.data(forKey: "blob") == blob)
    }
}

@Suite struct BadInputTests {
    @Test func badInputThrowsTypedErrorsAndChangesNothing() throws {
        var configuration = Kache.Configuration.testing(.sync, filePerEntry: true)
        configuration.maximumValueSize = 1000
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: configuration)
        try cache.set(Data("keep".utf8), forKey: "k", ttl: .seconds(60))
        #expect(throws: KacheError.emptyKey) { try cache.set(Data(), forKey: "", ttl: .seconds(1)) }
        let longKey = String(repeating: "é", count: 513) // 1,026 UTF-8 bytes
        #expect(throws: KacheError.keyTooLong(bytes: 1026, limit: 1024)) { try cache.set(Data(), forKey: longKey, ttl: .seconds(1)) }
        #expect(throws: KacheError.invalidTTL(.zero)) { try cache.set(Data(), forKey: "k", ttl: .zero) }
        #expect(throws: KacheError.invalidTTL(.seconds(-5))) { try cache.set(Data(), forKey: "k", ttl: .seconds(-5)) }
        #expect(throws: KacheError.valueTooLarge(bytes: 1001, limit: 1000)) { try cache.set(Data(count: 1001), forKey: "k", ttl: .seconds(1)) }
        #expect(cache.data(forKey: "k") == Data("keep".utf8))
        #expect(cache.statistics.sets == 1)
        #expect(dir.entryFiles().count == 1)
        #expect(dir.files(in: "tmp").isEmpty)
    }

    @Test func errorsReadAsSentences() {
        #expect(KacheError.keyTooLong(bytes: 1400, limit: 1024).description == "The key is 1400 bytes long in UTF-8; the limit is 1024 bytes.")
        #expect(KacheError.directoryLocked(path: "/c", holderPID: 42).description.contains("process 42"))
    }

    @Test func hostileKeysNeverNameAPath() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true))
        let keys = ["../../etc/passwd", "/", ".", "..", "a\u{0}b", "objects/00", String(repeating: "x", count: 1024)]
        for key in keys { try cache.set(Data(key.utf8), forKey: key, ttl: .seconds(60)) }
        for key in keys { #expect(cache.data(forKey: key) == Data(key.utf8)) }
        #expect(dir.entryFiles().count == keys.count)
        let top = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(Set(top).isSubset(of: ["dirty", "lock", "manifest", "objects", "quarantine", "segments", "tmp"]))
    }

    @Test func invalidConfigurationIsRefused() {
        var configuration = Kache.Configuration()
        configuration.maximumKeyLength = 70_000
        let keyLength = #expect(throws: KacheError.self) { try Kache(inMemory: configuration) }
        #expect(keyLength?.case == .invalidConfiguration)
        configuration = Kache.Configuration(defaultTTL: .zero)
        let ttl = #expect(throws: KacheError.self) { try Kache(inMemory: configuration) }
        #expect(ttl?.case == .invalidConfiguration)
    }

    /// Opening lists the shard folders instead of creating each: a file where
    /// one should be is still found, and named.
    @Test func aFileWhereAShardFolderShouldBeIsAClearError() throws {
        let dir = TemporaryDirectory()
        try Kache(directory: dir.url, configuration: .testing(.sync)).close()
        let shard = dir.url.appendingPathComponent("objects/\(DiskStore.shardName(0xAB))")
        // Shard folders are made when first written to: this one may never have been.
        try? FileManager.default.removeItem(at: shard)
        try Data().write(to: shard)
        let error = #expect(throws: KacheError.self) { try Kache(directory: dir.url, configuration: .testing(.sync)) }
        #expect(error?.case == .directoryUnusable)
        #expect("\(error!)".contains(shard.path))
    }

    @Test func unwritableDirectoryIsAClearError() throws {
        guard getuid() != 0 else {
            // root ignores permissions; use a path under a regular file instead.
            let dir = TemporaryDirectory()
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            let file = dir.url.appendingPathComponent("file")
            try Data().write(to: file)
            let error = #expect(throws: KacheError.self) { try Kache(directory: file.appendingPathComponent("cache"), configuration: .testing()) }
            #expect(error?.case == .directoryUnusable)
            return
        }
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        chmod(dir.path, 0o500)
        defer { chmod(dir.path, 0o700) }
        let error = #expect(throws: KacheError.self) { try Kache(directory: dir.url.appendingPathComponent("cache"), configuration: .testing()) }
        #expect(error?.case == .directoryUnusable)
    }
}

@Suite struct ClosedCacheTests {
    @Test func aClosedCacheRefusesWritesAndReadsNothing() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing())
        try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
        try cache.close()
        try cache.close()
        #expect(throws: KacheError.closed) { try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60)) }
        #expect(cache.data(forKey: "k") == nil)
    }

    @Test func defaultDirectoryFollowsTheEnvironment() {
        #expect(Kache.defaultDirectory(environment: ["KACHE_DIR": "/x/y"]).path == "/x/y")
        #expect(Kache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/xdg", "HOME": "/h"]).path == "/xdg/kache")
        #expect(Kache.defaultDirectory(environment: ["HOME": "/h"]).path == "/h/.cache/kache")
    }
}
