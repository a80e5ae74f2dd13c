import Foundation
import KacheStorage
import Testing
@testable import Kache
import KacheTestSupport

@Suite struct PersistenceTests {
    @Test(arguments: [Durability.async, .sync, .fsync])
    func everythingSurvivesCloseAndReopen(durability: Durability) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
            for i in 0 ..< 300 { try cache.set(compressible(500, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            cache.removeValue(forKey: "k7")
            try cache.save()
            try cache.close()
        }
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("dirty").path))
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
        #expect(cache.statistics.entries == 299)
        #expect(cache.statistics.entriesInMemory == 0) // restored without reading payloads
        #expect(cache.data(forKey: "k7") == nil)
        for i in 0 ..< 300 where i != 7 { #expect(cache.data(forKey: "k\(i)") == compressible(500, seed: i)) }
        cache.checkInvariants()
    }

    /// `blockCompression` changes how blocks are written, never how they are
    /// read: a directory written in both ways reads back whole, whichever
    /// setting opens it, and `.high`'s segments are the smaller.
    @Test func blocksOfEitherCompressionReadBackWhicheverSettingOpens() throws {
        func json(_ i: Int) -> Data {
            Data(#"{"id":\#(i * 7919),"name":"user \#(i % 13)","score":\#(i * 31 % 97),"tags":["a","b"],"active":\#(i % 2 == 0)}"#.utf8)
        }
        func segmentBytes(_ dir: TemporaryDirectory) -> Int {
            dir.files(in: "segments").reduce(0) { total, name in
                let path = dir.url.appendingPathComponent("segments/\(name)").path
                return total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
            }
        }
        let clock = ManualClock()
        var lengths: [BlockCompression: Int] = [:]
        for compression in BlockCompression.allCases {
            let dir = TemporaryDirectory()
            // Asynchronous: the writer gathers records into blocks (a synchronous set writes one alone).
            var configuration = Kache.Configuration.testing(.async, clock: clock)
            configuration.blockCompression = compression
            let cache = try Kache(directory: dir.url, configuration: configuration)
            for i in 0 ..< 2000 { try cache.set(json(i), forKey: "k\(i)", ttl: .seconds(3600)) }
            try cache.save()
            lengths[compression] = segmentBytes(dir)
            try cache.close()
            // The other setting adds to the same directory, then each opens it.
            configuration.blockCompression = compression == .fast ? .high : .fast
            let other = try Kache(directory: dir.url, configuration: configuration)
            for i in 2000 ..< 2500 { try other.set(json(i), forKey: "k\(i)", ttl: .seconds(3600)) }
            try other.close()
            for setting in BlockCompression.allCases {
                configuration.blockCompression = setting
                let reopened = try Kache(directory: dir.url, configuration: configuration)
                #expect(reopened.statistics.entries == 2500)
                for i in 0 ..< 2500 { #expect(reopened.data(forKey: "k\(i)") == json(i), "\(compression) then \(setting): k\(i)") }
                try reopened.close()
            }
        }
        #expect(lengths[.high]! < lengths[.fast]!, "\(lengths)")
    }

    @Test func saveMakesEverythingDurableAndWritesTheManifest() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, filePerEntry: true))
        for i in 0 ..< 500 { try cache.set(compressible(200, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
        try cache.save()
        #expect(cache.statistics.pendingWrites == 0)
        #expect(cache.statistics.filesOnDisk == 500)
        #expect(dir.entryFiles().count == 500)
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("manifest").path))
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("dirty").path))
        try cache.set(Data("later".utf8), forKey: "later", ttl: .seconds(60))
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("dirty").path))
    }

    /// The index hands the manifest its entries shard by shard, key spaces
    /// mixed: each must be listed once, under its own key space (files of
    /// their own), or by its sequence alone (settled in a segment).
    @Test(arguments: [true, false])
    func theManifestListsEveryEntryOnceUnderItsOwnKeySpace(filePerEntry: Bool) throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: filePerEntry))
        let pool = try cache.pool(named: "avatars", capacity: 100)
        let queue = try cache.queue(named: "jobs", capacity: 100)
        for i in 0 ..< 60 {
            try cache.set(Data("top \(i)".utf8), forKey: "k\(i)", ttl: .seconds(600))
            try pool.set(Data("pool \(i)".utf8), forKey: "k\(i)", ttl: .seconds(600))
            if i.isMultiple(of: 2) { try queue.push(Data("job \(i)".utf8), ttl: .seconds(600)) }
        }
        try cache.save()
        let bytes = [UInt8](try Data(contentsOf: dir.url.appendingPathComponent("manifest")))
        let manifest = try bytes.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }
        let live = manifest.settled.runs.flatMap { Array($0) }
        guard filePerEntry else {
            #expect(manifest.spaces.allSatisfy { $0.entries.isEmpty })
            #expect(live.count == cache.statistics.entries && Set(live).count == live.count)
            return
        }
        #expect(live.isEmpty)
        let keys = Dictionary(uniqueKeysWithValues: manifest.spaces.map { ($0.name, $0.entries.map(\.key)) })
        #expect(Set(keys[""] ?? []) == Set((0 ..< 60).map { "k\($0)" }))
        #expect(Set(keys["avatars"] ?? []) == Set((0 ..< 60).map { "k\($0)" }))
        #expect(keys["jobs"]?.count == 30)
        #expect(manifest.spaces.allSatisfy { Set($0.entries.map(\.key)).count == $0.entries.count })
        #expect(manifest.spaces.reduce(0) { $0 + $1.entries.count } == cache.statistics.entries)
    }

    /// Keys set once are settled at consecutive sequences: the manifest lists
    /// them as one run. Overwriting every tenth key leaves a gap at each old
    /// version (the last key's among them), and the new versions form one
    /// more run after them.
    @Test func settledEntriesAreListedAsRunsOfConsecutiveSequences() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        func savedRuns() throws -> [ClosedRange<UInt64>] {
            try cache.save()
            let bytes = [UInt8](try Data(contentsOf: dir.url.appendingPathComponent(DiskStore.manifestFile)))
            #expect(bytes[12] == Manifest.version)
            return try bytes.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }.settled.runs
        }
        for i in 0 ..< 2000 { try cache.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(600)) }
        let once = try savedRuns()
        #expect(once.count == 1 && once[0].count == 2000, "\(once.prefix(5))")
        for i in stride(from: 9, to: 2000, by: 10) { try cache.set(Data("w\(i)".utf8), forKey: "k\(i)", ttl: .seconds(600)) }
        let overwritten = try savedRuns()
        #expect(overwritten.count == 201, "\(overwritten.prefix(5))")
        #expect(overwritten.reduce(0) { $0 + $1.count } == 2000)
        #expect(overwritten.last!.count == 200 && overwritten.last!.lowerBound == once[0].upperBound + 1)
        try cache.close()
        let reopened = try Kache(directory: dir.url, configuration: .testing(.sync))
        #expect(reopened.statistics.entries == 2000 && reopened.statistics.entriesInMemory == 0)
        for i in 0 ..< 2000 { #expect(reopened.data(forKey: "k\(i)") == Data((i % 10 == 9 ? "w\(i)" : "v\(i)").utf8), "k\(i)") }
        reopened.checkInvariants()
    }

    /// A directory whose current manifest is of version 4 (settled sequences
    /// one varint each) opens from it, as it did: nothing rebuilt, nothing
    /// quarantined, every entry read. The next save writes today's version.
    @Test func aDirectoryWithAVersion4ManifestOpensFromIt() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            let pool = try cache.pool(named: "avatars", capacity: 1000)
            for i in 0 ..< 300 {
                try cache.set(compressible(100, seed: i), forKey: "k\(i)", ttl: .seconds(600))
                try pool.set(compressible(100, seed: 1000 + i), forKey: "p\(i)", ttl: .seconds(600))
            }
            // Gaps in the settled sequences, and one entry in a file of its own.
            for i in stride(from: 0, to: 300, by: 7) { try cache.set(compressible(50, seed: 2000 + i), forKey: "k\(i)", ttl: .seconds(600)) }
            try cache.set(incompressible(40_000, seed: 9), forKey: "large", ttl: .seconds(600))
            try cache.close()
        }
        let url = dir.url.appendingPathComponent(DiskStore.manifestFile)
        let current = [UInt8](try Data(contentsOf: url))
        let manifest = try current.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }
        #expect(manifest.settled.runs.count > 1 && manifest.spaces.contains { !$0.entries.isEmpty })
        let version4 = manifest.encoded(asVersion: 4)
        #expect(version4 != current && version4[12] == 4)
        try Data(version4).write(to: url)

        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        #expect(cache.statistics.entries == 601)
        #expect(cache.statistics.entriesInMemory == 0)
        #expect(cache.statistics.quarantined == 0 && dir.files(in: "quarantine").isEmpty)
        let pool = try cache.pool(named: "avatars", capacity: 1000)
        for i in 0 ..< 300 {
            #expect(cache.data(forKey: "k\(i)") == compressible(i % 7 == 0 ? 50 : 100, seed: i % 7 == 0 ? 2000 + i : i), "k\(i)")
            #expect(pool.data(forKey: "p\(i)") == compressible(100, seed: 1000 + i), "p\(i)")
        }
        #expect(cache.data(forKey: "large") == incompressible(40_000, seed: 9))
        cache.checkInvariants()
        try cache.save()
        let saved = [UInt8](try Data(contentsOf: url))
        #expect(UInt16(saved[12]) == Manifest.version)
        #expect(try saved.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }.settled == manifest.settled)
        try cache.close()
    }

    /// A current manifest lists settled entries by sequence, and opening
    /// restores them shard by shard on all cores. Two copies of each record
    /// (compaction's, and the original a crash kept before deleting it) must
    /// restore as one entry each: same values, same Queue order, each copy's
    /// bytes counted live once.
    @Test func twoCopiesOfEverySettledRecordRestoreAsOneEntryEach() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            let pool = try cache.pool(named: "avatars", capacity: 1000)
            let queue = try cache.queue(named: "jobs", capacity: 1000)
            for i in 0 ..< 400 {
                try cache.set(compressible(200, seed: i), forKey: "k\(i)", ttl: .seconds(600 + i))
                try pool.set(compressible(100, seed: 1000 + i), forKey: "p\(i)", ttl: .seconds(3600))
                try queue.push(compressible(100, seed: 2000 + i), ttl: .seconds(3600))
            }
            try cache.close()
        }
        let segments = dir.url.appendingPathComponent("segments")
        let names = try FileManager.default.contentsOfDirectory(atPath: segments.path).filter { $0.hasSuffix(".seg") }.sorted()
        let ids = names.compactMap { SegmentStore.id(ofFileName: $0) }
        #expect(ids.count == names.count && !ids.isEmpty)
        var next = ids.max()! + 1
        for id in ids {
            try FileManager.default.copyItem(
                at: segments.appendingPathComponent(SegmentStore.fileName(id)), to: segments.appendingPathComponent(SegmentStore.fileName(next))
            )
            next += 1
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        #expect(cache.statistics.entries == 1200)
        cache.checkInvariants()
        let pool = try cache.pool(named: "avatars", capacity: 1000)
        let queue = try cache.queue(named: "jobs", capacity: 1000)
        for i in 0 ..< 400 {
            #expect(cache.data(forKey: "k\(i)") == compressible(200, seed: i), "k\(i)")
            #expect(pool.data(forKey: "p\(i)") == compressible(100, seed: 1000 + i), "p\(i)")
        }
        for i in 0 ..< 400 { #expect(queue.pop() == compressible(100, seed: 2000 + i), "item \(i)") }
        #expect(queue.pop() == nil)
        // The earliest expiry goes first: the restored heap holds every entry once.
        clock.advance(by: .seconds(600))
        try cache.set(Data("x".utf8), forKey: "sweep", ttl: .seconds(60))
        #expect(cache.data(forKey: "k0") == nil && cache.data(forKey: "k1") == compressible(200, seed: 1))
        cache.checkInvariants()
    }

    /// A kill in `sync` or `fsync` durability loses no change that returned:
    /// the sets, the overwrite and the removal made after the last save are
    /// recovered from the files, and what the kill left half-written is cleared.
    @Test(arguments: [Durability.sync, .fsync])
    func aKillKeepsEveryAcknowledgedChange(durability: Durability) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let configuration = Kache.Configuration.testing(durability, clock: clock, filePerEntry: true)
        try changeAfterASaveAndKill(dir, configuration)
        try leaveHalfWrittenFiles(dir)
        let cache = try Kache(directory: dir.url, configuration: configuration)
        #expect(cache.statistics.entries == 149)
        #expect(cache.data(forKey: "new49") == compressible(300, seed: 1049))
        #expect(cache.data(forKey: "old3") == Data("changed".utf8))
        #expect(cache.data(forKey: "old4") == nil)
        #expect(cache.data(forKey: "old99") == compressible(300, seed: 99))
        #expect(dir.entryFiles().count == 149)
        expectHalfWrittenFilesCleared(dir)
        cache.checkInvariants()
    }

    /// A kill in `async` durability loses the writes still queued: only what
    /// `save()` made durable is promised. Whatever else the directory holds
    /// after it is exactly a value that was set for that key (never torn,
    /// never another key's), and never older than the value saved.
    @Test(arguments: [true, false])
    func aKillInAsyncDurabilityKeepsWhatSaveMadeDurable(filePerEntry: Bool) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let configuration = Kache.Configuration.testing(.async, clock: clock, filePerEntry: filePerEntry)
        try changeAfterASaveAndKill(dir, configuration)
        try leaveHalfWrittenFiles(dir)
        let cache = try Kache(directory: dir.url, configuration: configuration)
        for i in 0 ..< 100 where i != 3 && i != 4 {
            #expect(cache.data(forKey: "old\(i)") == compressible(300, seed: i), "old\(i) was saved")
        }
        let old3 = cache.data(forKey: "old3")
        #expect(old3 == Data("saved".utf8) || old3 == Data("changed".utf8), "old3 reads \(old3.map { "\($0.count) bytes" } ?? "nothing")")
        let old4 = cache.data(forKey: "old4")
        #expect(old4 == nil || old4 == compressible(300, seed: 4))
        for i in 0 ..< 50 {
            let found = cache.data(forKey: "new\(i)")
            #expect(found == nil || found == compressible(300, seed: 1000 + i), "new\(i) reads bytes that were never set")
        }
        expectHalfWrittenFilesCleared(dir)
        cache.checkInvariants()
    }

    /// Saves 100 entries (old3's saved value replacing an older one), changes
    /// more after the save (50 sets, an overwrite of old3, a removal of old4),
    /// and dies without saving again.
    private func changeAfterASaveAndKill(_ dir: TemporaryDirectory, _ configuration: Kache.Configuration) throws {
        let cache = try Kache(directory: dir.url, configuration: configuration)
        for i in 0 ..< 100 { try cache.set(compressible(300, seed: i), forKey: "old\(i)", ttl: .seconds(3600)) }
        try cache.set(Data("saved".utf8), forKey: "old3", ttl: .seconds(3600))
        try cache.save()
        for i in 0 ..< 50 { try cache.set(compressible(300, seed: 1000 + i), forKey: "new\(i)", ttl: .seconds(3600)) }
        try cache.set(Data("changed".utf8), forKey: "old3", ttl: .seconds(3600))
        cache.removeValue(forKey: "old4")
        cache.abandonForTesting()
    }

    /// Half-written files such as a kill leaves: an entry's, beside its final
    /// name in a shard folder, and one in tmp/.
    private func leaveHalfWrittenFiles(_ dir: TemporaryDirectory) throws {
        // Its shard folder too, if no entry made it: the writer makes one before its first file.
        try FileManager.default.createDirectory(at: dir.url.appendingPathComponent("objects/00"), withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: dir.url.appendingPathComponent("objects/00/.0123.4567.0"))
        try Data("garbage".utf8).write(to: dir.url.appendingPathComponent("tmp/0123.partial"))
    }

    private func expectHalfWrittenFilesCleared(_ dir: TemporaryDirectory) {
        #expect(dir.files(in: "tmp").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("objects/00/.0123.4567.0").path))
    }

    /// In `async` a write can fail after its `set` returned. `save()` must
    /// not then call everything durable: it throws that failure (once), the
    /// entry has left the cache, and what was saved before stays.
    @Test func aSaveThrowsTheFailureOfAWriteTheAsyncWriterLost() throws {
        let dir = TemporaryDirectory()
        defer { DiskFaults.removeAll(pathContaining: dir.path) }
        let configuration = Kache.Configuration.testing(.async, filePerEntry: true)
        let cache = try Kache(directory: dir.url, configuration: configuration)
        try cache.set(Data("kept".utf8), forKey: "kept", ttl: .seconds(60))
        try cache.save()
        DiskFaults.inject(ENOSPC, on: .write, pathContaining: dir.path + "/objects/", times: 1)
        try cache.set(Data("lost".utf8), forKey: "lost", ttl: .seconds(60))
        #expect(throws: KacheError.diskFull(path: dir.entryPath(key: "lost"))) { try cache.save() }
        #expect(cache.data(forKey: "lost") == nil)
        #expect(cache.statistics.writeErrors == 1)
        try cache.save()
        try cache.close()

        let reopened = try Kache(directory: dir.url, configuration: configuration)
        #expect(reopened.data(forKey: "kept") == Data("kept".utf8))
        #expect(reopened.data(forKey: "lost") == nil)
    }

    /// The writer appends a batch's small records bucket by bucket, then
    /// commits every bucket that landed at once: a failed append in one
    /// bucket loses only that bucket's records, and the others are in the
    /// index and on disk.
    @Test func aFailedAppendInOneBucketOfABatchLosesOnlyThatBucket() throws {
        let dir = TemporaryDirectory()
        defer { DiskFaults.removeAll(pathContaining: dir.path) }
        let clock = ManualClock()
        let configuration = Kache.Configuration.testing(.async, clock: clock)
        let cache = try Kache(directory: dir.url, configuration: configuration)
        // Lifetimes a day apart: two expiry buckets, two segment files.
        let ttls: [Duration] = [.seconds(600), .seconds(600 + 86_400)]
        DiskFaults.inject(ENOSPC, on: .write, pathContaining: dir.path + "/segments/", times: 1)
        for i in 0 ..< 40 { try cache.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: ttls[i % 2]) }
        #expect(throws: KacheError.self) { try cache.save() }
        let kept = (0 ..< 40).filter { cache.data(forKey: "k\($0)") == Data("v\($0)".utf8) }
        let lostGroup = kept.contains(0) ? 1 : 0
        #expect(kept == (0 ..< 40).filter { $0 % 2 != lostGroup }, "one bucket's 20 records lost, the other's 20 kept")
        #expect(cache.statistics.writeErrors == 20)
        // The kept bucket's records are committed: live in their segment (a
        // record that landed uncommitted is in no segment's count at all).
        #expect(cache.statistics.segmentBytes > cache.statistics.deadBytes)
        cache.checkInvariants()
        try cache.close()

        let reopened = try Kache(directory: dir.url, configuration: configuration)
        #expect((0 ..< 40).filter { reopened.data(forKey: "k\($0)") != nil } == kept)
        reopened.checkInvariants()
    }

    @Test func aDamagedManifestFallsBackToFileHeaders() throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing())
            for i in 0 ..< 20 { try cache.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(60)) }
            try cache.close()
        }
        let manifest = dir.url.appendingPathComponent("manifest")
        var bytes = try Data(contentsOf: manifest)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: manifest)
        let cache = try Kache(directory: dir.url, configuration: .testing())
        #expect(cache.statistics.entries == 20)
        #expect(cache.statistics.quarantined == 1)
        #expect(cache.data(forKey: "k13") == Data("v13".utf8))
        #expect(dir.files(in: "quarantine").count == 1)
    }

    @Test func loadReloadsTheIndexFromDisk() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        for i in 0 ..< 50 { try cache.set(Data("v\(i)".utf8), forKey: "k\(i)", ttl: .seconds(60)) }
        try cache.load()
        #expect(cache.statistics.entries == 50)
        #expect(cache.statistics.entriesInMemory == 0)
        #expect(cache.data(forKey: "k42") == Data("v42".utf8))
        cache.checkInvariants()
    }
}

@Suite struct IntegrityTests {
    func damagedCache(_ damage: (String) throws -> Void) throws -> (Kache, TemporaryDirectory) {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true))
            for i in 0 ..< 10 { try cache.set(compressible(400, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
            try cache.close()
        }
        try damage(dir.entryPath(key: "k3"))
        return (try Kache(directory: dir.url, configuration: .testing(.sync, filePerEntry: true)), dir)
    }

    func expectQuarantined(_ cache: Kache, _ dir: TemporaryDirectory) {
        #expect(cache.data(forKey: "k3") == nil)
        #expect(cache.statistics.quarantined == 1)
        #expect(dir.files(in: "quarantine").count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.entryPath(key: "k3")))
        for i in 0 ..< 10 where i != 3 { #expect(cache.data(forKey: "k\(i)") == compressible(400, seed: i)) }
        cache.checkInvariants()
    }

    @Test func aFlippedBitReadsAsAMissAndIsQuarantined() throws {
        let (cache, dir) = try damagedCache { path in
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count - 5] ^= 0x10
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        expectQuarantined(cache, dir)
    }

    @Test func aTruncatedFileReadsAsAMissAndIsQuarantined() throws {
        let (cache, dir) = try damagedCache { path in
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.prefix(bytes.count - 20).write(to: URL(fileURLWithPath: path))
        }
        expectQuarantined(cache, dir)
    }

    @Test func aFileHoldingAnotherKeyReadsAsAMissAndIsQuarantined() throws {
        var otherPath = ""
        let (cache, dir) = try damagedCache { path in
            otherPath = path.replacingOccurrences(of: "k3", with: "")
            // Put k5's valid file where k3's belongs (as a swap would).
            let dirURL = URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let k5 = EntryName(space: "", key: "k5")
            let source = dirURL.appendingPathComponent("objects/\(k5.shard)/\(k5.fileName)")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: path))
        }
        _ = otherPath
        expectQuarantined(cache, dir)
    }

    @Test func aMissingFileReadsAsAMiss() throws {
        let (cache, _) = try damagedCache { path in try FileManager.default.removeItem(atPath: path) }
        #expect(cache.data(forKey: "k3") == nil)
        #expect(cache.statistics.entries == 9)
    }
}
