import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Small entries appended to segment files: where records go, what survives
/// a crash (torn tails, damaged records, removals), and how space comes back.
@Suite struct SegmentTests {
    func segmentFiles(_ dir: TemporaryDirectory) -> [String] {
        dir.files(in: "segments").filter { SegmentStore.id(ofFileName: $0) != nil }.sorted()
    }

    func segmentPath(_ dir: TemporaryDirectory, _ name: String) -> String {
        dir.url.appendingPathComponent("segments/\(name)").path
    }

    @Test(arguments: [Durability.async, .sync, .fsync])
    func smallEntriesShareSegmentsAndLargeOnesKeepTheirOwnFiles(durability: Durability) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
            for i in 0 ..< 300 { try cache.set(compressible(1024, seed: i), forKey: "small\(i)", ttl: .seconds(3600)) }
            for i in 0 ..< 2 { try cache.set(incompressible(40_000, seed: UInt64(i + 1)), forKey: "large\(i)", ttl: .seconds(3600)) }
            try cache.save()
            #expect(cache.statistics.segmentFiles >= 1)
            cache.checkInvariants()
            try cache.close()
        }
        #expect(dir.entryFiles().count == 2)
        #expect((1 ... 3).contains(segmentFiles(dir).count))
        // From the manifest (closed cleanly), then from the records (a crash).
        for crash in [false, true] {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock, memoryBudget: 0))
            for i in 0 ..< 300 { #expect(cache.data(forKey: "small\(i)") == compressible(1024, seed: i)) }
            for i in 0 ..< 2 { #expect(cache.data(forKey: "large\(i)") == incompressible(40_000, seed: UInt64(i + 1))) }
            cache.checkInvariants()
            if crash {
                try cache.set(Data("after".utf8), forKey: "small7", ttl: .seconds(3600))
                cache.abandonForTesting()
                let reopened = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
                // A kill loses what `async` still had queued: the saved value is what it promises.
                let small7 = reopened.data(forKey: "small7")
                if durability == .async {
                    #expect(small7 == Data("after".utf8) || small7 == compressible(1024, seed: 7))
                } else {
                    #expect(small7 == Data("after".utf8))
                }
                #expect(reopened.data(forKey: "small8") == compressible(1024, seed: 8))
                #expect(reopened.statistics.entries == 302)
            } else {
                try cache.close()
            }
        }
    }

    @Test func aRecordTakesItsLengthNotABlock() throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        for i in 0 ..< 1000 { try cache.set(compressible(1024, seed: i), forKey: "key-\(i)", ttl: .seconds(3600)) }
        var allocated = 0
        for name in segmentFiles(dir) {
            var info = stat()
            if lstat(segmentPath(dir, name), &info) == 0 { allocated += Int(info.st_blocks) * 512 }
        }
        // 1,000 files of their own would take 1,000 blocks of 4 KiB.
        #expect(allocated > 0 && allocated < 1000 * 4096 / 8)
        #expect(dir.entryFiles().isEmpty)
    }

    @Test func aTornTailIsCutOnOpenAndNothingBeforeItIsLost() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            for i in 0 ..< 50 { try cache.set(compressible(500, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            cache.abandonForTesting()
        }
        let segment = try #require(segmentFiles(dir).last)
        let path = segmentPath(dir, segment)
        let length = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // Half a record: the start of a valid one, cut short, as a crash mid-append leaves it.
        let first = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(120)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: first.prefix(90))
        try handle.close()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        for i in 0 ..< 50 { #expect(cache.data(forKey: "k\(i)") == compressible(500, seed: i)) }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == length)
        cache.checkInvariants()
    }

    /// Format version 4 kept a hint file beside each segment; blocks now
    /// hold their keys apart, so an open reads the segment and deletes the
    /// hint, whatever it says.
    @Test func hintsOfVersion4AreDeletedAtOpenAndTheSegmentsRead() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            for i in 0 ..< 30 { try cache.set(compressible(300, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            try cache.close()
        }
        let segments = dir.url.appendingPathComponent("segments")
        let names = segmentFiles(dir)
        #expect(!names.isEmpty)
        for name in names {
            try Data("KHNT stale, from a file of this number long gone".utf8)
                .write(to: segments.appendingPathComponent(name.replacingOccurrences(of: ".seg", with: ".hint")))
        }
        try Data("a hint without its segment".utf8).write(to: segments.appendingPathComponent("0000ffff.hint"))
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        for i in 0 ..< 30 { #expect(cache.data(forKey: "k\(i)") == compressible(300, seed: i), "k\(i)") }
        let left = try FileManager.default.contentsOfDirectory(atPath: segments.path)
        #expect(!left.contains { $0.hasSuffix(".hint") }, "\(left)")
        cache.checkInvariants()
    }

    /// A directory of format version 5 (blocks "KBL2", keys in rows, and a
    /// manifest of version 5) or 6 (blocks "KBL3", keys in columns, no keys
    /// checksum) opens and reads every entry, from its manifest or, after a
    /// crash, from the segments alone; nothing is quarantined. New writes go
    /// to blocks of today's version beside the old ones, and the next save
    /// writes a manifest of today's version.
    @Test(arguments: [5, 6] as [UInt16], [false, true])
    func aDirectoryOfAnEarlierVersionOpensAndReads(version: UInt16, afterACrash: Bool) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            let pool = try cache.pool(named: "avatars", capacity: 1000)
            for i in 0 ..< 200 {
                try cache.set(compressible(150, seed: i), forKey: "key-\(i)", ttl: .seconds(600 + i))
                try pool.set(compressible(80, seed: 500 + i), forKey: "p\(i)", ttl: .seconds(900))
            }
            for i in stride(from: 0, to: 200, by: 10) { cache.removeValue(forKey: "key-\(i)") }
            if afterACrash { cache.abandonForTesting() } else { try cache.close() }
        }
        var blocks = 0
        for name in segmentFiles(dir) {
            let url = URL(fileURLWithPath: segmentPath(dir, name))
            let bytes = try Data(contentsOf: url)
            var earlier = Data()
            var offset = 0
            while offset < bytes.count {
                let length = try #require(bytes.withUnsafeBytes { SegmentBlock.blockLength(at: UnsafeRawBufferPointer(rebasing: $0[offset...])) })
                let block = bytes.subdata(in: offset ..< offset + length)
                #expect(block.prefix(4) == Data("KBL4".utf8))
                let contents = try SegmentBlock.decode(block)
                let rewrite = version == 5 ? BlockSections.version5Block : BlockSections.version6Block
                earlier += rewrite(contents.records.indices.map { index in
                    let header = contents.records[index].header
                    return SegmentBlock.Record(
                        key: header.key, space: header.space, kind: header.kind, expiry: header.expiry, sequence: header.sequence,
                        isTombstone: header.isTombstone, value: contents.value(of: index)
                    )
                })
                offset += length
                blocks += 1
            }
            try earlier.write(to: url)
        }
        #expect(blocks > 2)
        let manifestURL = dir.url.appendingPathComponent(DiskStore.manifestFile)
        if !afterACrash {
            let current = [UInt8](try Data(contentsOf: manifestURL))
            let manifest = try current.withUnsafeBytes { raw throws(Manifest.Damage) in try Manifest(decoding: raw) }
            try Data(manifest.encoded(asVersion: version)).write(to: manifestURL)
        }
        func readsEverything(_ cache: Kache) throws {
            let pool = try cache.pool(named: "avatars", capacity: 1000)
            for i in 0 ..< 200 {
                #expect(cache.data(forKey: "key-\(i)") == (i % 10 == 0 ? nil : compressible(150, seed: i)), "key-\(i)")
                #expect(pool.data(forKey: "p\(i)") == compressible(80, seed: 500 + i), "p\(i)")
            }
        }
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
            #expect(cache.statistics.entries == 380)
            #expect(cache.statistics.quarantined == 0 && dir.files(in: "quarantine").isEmpty)
            try readsEverything(cache)
            for i in 0 ..< 20 { try cache.set(compressible(150, seed: 1000 + i), forKey: "new-\(i)", ttl: .seconds(600)) }
            cache.checkInvariants()
            try cache.close()
        }
        #expect(UInt16(try Data(contentsOf: manifestURL)[12]) == Manifest.version)
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        try readsEverything(cache)
        for i in 0 ..< 20 { #expect(cache.data(forKey: "new-\(i)") == compressible(150, seed: 1000 + i)) }
        #expect(cache.statistics.quarantined == 0)
        cache.checkInvariants()
    }

    @Test(arguments: [false, true])
    func aDamagedRecordIsAMissAndTheRestOfItsSegmentIsServed(rebuildingFromRecords: Bool) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            for i in 0 ..< 20 { try cache.set(compressible(400, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            if rebuildingFromRecords { cache.abandonForTesting() } else { try cache.close() }
        }
        let path = segmentPath(dir, try #require(segmentFiles(dir).first))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // A bit flipped in the middle of the file: inside one record's payload.
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path))
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        let found = (0 ..< 20).filter { cache.data(forKey: "k\($0)") == compressible(400, seed: $0) }
        let wrong = (0 ..< 20).filter { i in cache.data(forKey: "k\(i)").map { $0 != compressible(400, seed: i) } ?? false }
        #expect(found.count == 19)
        #expect(wrong.isEmpty)
        #expect(cache.statistics.quarantined == 1)
        cache.checkInvariants()
    }

    /// A block whose checksum holds but whose record names a sequence past
    /// the most a directory can use (the index packs sequences in 48 bits):
    /// damage, never a trap. The open counts it and serves the rest, after a
    /// clean close (the checkpoint's manifest) and after a crash (a rebuild
    /// from the records) alike.
    @Test(arguments: [false, true])
    func aRecordWithASequencePastTheLargestIsDamageNotATrap(rebuildingFromRecords: Bool) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            for i in 0 ..< 5 { try cache.set(compressible(400, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            if rebuildingFromRecords { cache.abandonForTesting() } else { try cache.close() }
        }
        var builder = SegmentBlock.Builder()
        builder.append(SegmentBlock.Record(
            key: "hostile", space: "", kind: 0, expiry: clock.nanosecondsSince1970() + 3_600_000_000_000,
            sequence: EntryFile.largestSequence + 1, value: compressible(100)
        ))
        // A valid block after it: the hostile one is damage inside the file, not a torn tail.
        var after = SegmentBlock.Builder()
        after.append(SegmentBlock.Record(key: "tail", space: "", kind: 0, expiry: clock.nanosecondsSince1970() + 3_600_000_000_000, sequence: 1_000_000, value: compressible(100)))
        let path = segmentPath(dir, try #require(segmentFiles(dir).last))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: builder.seal().bytes + after.seal().bytes)
        try handle.close()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        #expect(cache.data(forKey: "hostile") == nil)
        for i in 0 ..< 5 { #expect(cache.data(forKey: "k\(i)") == compressible(400, seed: i)) }
        #expect(cache.statistics.quarantined == 1)
        try cache.set(Data("after".utf8), forKey: "after", ttl: .seconds(60))
        #expect(cache.data(forKey: "after") == Data("after".utf8))
        cache.checkInvariants()
    }

    /// A directory of `count` entries `k0`, `k1`… of 200 compressible bytes,
    /// set in `async` durability (the writer gathers many records into each
    /// block) and closed; with `dirty`, marked as a crash leaves it. Returns
    /// it, its clock and the path of its first segment file.
    private func closedAsyncDirectory(count: Int, dirty: Bool) throws -> (dir: TemporaryDirectory, clock: ManualClock, segment: String) {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock))
            for i in 0 ..< count { try cache.set(compressible(200, seed: i), forKey: "k\(i)", ttl: .seconds(3600)) }
            try cache.close()
        }
        if dirty {
            #expect(FileManager.default.createFile(atPath: dir.url.appendingPathComponent("dirty").path, contents: nil))
        }
        return (dir, clock, segmentPath(dir, try #require(segmentFiles(dir).first)))
    }

    /// In `async` durability the writer gathers many records into each block:
    /// a flipped bit costs the records of that one block, never the rest of the segment.
    @Test(arguments: [false, true])
    func aFlippedBitInABlockCostsOnlyThatBlocksRecords(rebuildingFromRecords: Bool) throws {
        let count = 2_000
        // With the marker a crash leaves, the index is rebuilt from the records.
        let (dir, clock, path) = try closedAsyncDirectory(count: count, dirty: rebuildingFromRecords)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let blocks = SegmentStore.scan(bytes).records
        let recordsPerBlock = Dictionary(grouping: blocks, by: \.offset).mapValues(\.count)
        #expect(recordsPerBlock.count > 1 && recordsPerBlock.values.max()! > 10, "blocks of many records")
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path))
        let damagedBlock = try #require(recordsPerBlock.keys.filter { $0 <= bytes.count / 2 }.max())
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        let found = (0 ..< count).filter { cache.data(forKey: "k\($0)") == compressible(200, seed: $0) }
        let wrong = (0 ..< count).filter { i in cache.data(forKey: "k\(i)").map { $0 != compressible(200, seed: i) } ?? false }
        #expect(found.count == count - recordsPerBlock[damagedBlock]!, "only the damaged block's records are lost")
        #expect(wrong.isEmpty)
        cache.checkInvariants()
    }

    /// A clean open checks each block's header and keys, never its values
    /// (docs/FORMAT.md, Block): a value damaged after a clean close is
    /// found when it is read, a miss that takes its entry out of the index,
    /// never a wrong value. After a crash the open checks every block whole,
    /// and the damaged block's records never enter the index.
    @Test(arguments: [false, true])
    func aDamagedValueIsFoundByItsReadAfterACleanCloseAndByTheOpenAfterACrash(afterACrash: Bool) throws {
        let count = 2_000
        let (dir, clock, path) = try closedAsyncDirectory(count: count, dirty: afterACrash)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let damagedKeys = SegmentStore.scan(bytes).records.filter { $0.offset == 0 }.map(\.header.key)
        #expect(damagedKeys.count > 10, "a block of many records")
        // The first block's last byte: in its values section.
        let firstBlockLength = try #require(bytes.withUnsafeBytes { SegmentBlock.blockLength(at: $0) })
        bytes[firstBlockLength - 1] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path))

        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        #expect(damagedKeys.allSatisfy(cache.contains) == !afterACrash, "in the index until read only after a clean close")
        #expect(damagedKeys.allSatisfy { !cache.contains($0) } == afterACrash)
        let values = (0 ..< count).map { cache.data(forKey: "k\($0)") }
        let damaged = Set(damagedKeys)
        for i in 0 ..< count {
            #expect(values[i] == (damaged.contains("k\(i)") ? nil : compressible(200, seed: i)), "k\(i)")
        }
        #expect(damagedKeys.allSatisfy { !cache.contains($0) }, "a damaged record leaves the index once read")
        #expect(cache.statistics.quarantined > 0)
        cache.checkInvariants()
    }

    @Test(arguments: [Durability.sync, .fsync])
    func anAcknowledgedRemovalStaysRemovedAfterACrash(durability: Durability) throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
            try cache.set(Data("one".utf8), forKey: "gone", ttl: .seconds(3600))
            try cache.set(Data("two".utf8), forKey: "kept", ttl: .seconds(3600))
            try cache.save()
            cache.removeValue(forKey: "gone")
            let pool = try cache.pool(named: "p", capacity: 1)
            try pool.set(Data("a".utf8), forKey: "a", ttl: .seconds(3600))
            try pool.set(Data("b".utf8), forKey: "b", ttl: .seconds(7200))
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
        #expect(cache.data(forKey: "gone") == nil)
        #expect(cache.data(forKey: "kept") == Data("two".utf8))
        let pool = try cache.pool(named: "p", capacity: 1)
        #expect(pool.data(forKey: "a") == nil)
        #expect(pool.data(forKey: "b") == Data("b".utf8))
    }

    @Test func aReplacedVersionNeverComesBackWhenTheNewOneExpires() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            try cache.set(Data("long-lived".utf8), forKey: "k", ttl: .seconds(7200))
            try cache.set(Data("short-lived".utf8), forKey: "k", ttl: .seconds(10))
            cache.abandonForTesting()
        }
        clock.advance(by: .seconds(60))
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        #expect(cache.data(forKey: "k") == nil)
    }

    @Test func deadSegmentsGoAfterACheckpointAndLiveValuesSurviveCompaction() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        var configuration = Kache.Configuration.testing(.sync, clock: clock, memoryBudget: 0)
        configuration.diskBudget = nil
        do {
            let cache = try Kache(directory: dir.url, configuration: configuration)
            // Short-lived entries fill their own expiry bucket; long-lived ones another.
            for i in 0 ..< 2000 { try cache.set(compressible(1024, seed: i), forKey: "short\(i)", ttl: .seconds(60)) }
            for i in 0 ..< 2000 { try cache.set(compressible(1024, seed: i), forKey: "long\(i)", ttl: .seconds(7200)) }
            // Replace most long-lived ones: their first records turn dead.
            for i in 0 ..< 1600 { try cache.set(compressible(1024, seed: 10_000 + i), forKey: "long\(i)", ttl: .seconds(7200)) }
            try cache.save()
            let before = cache.statistics
            clock.advance(by: .seconds(120))
            try cache.set(Data("x".utf8), forKey: "sweeper", ttl: .seconds(7200))
            try cache.save()
            try cache.save()
            let after = cache.statistics
            #expect(after.segmentBytes < before.segmentBytes)
            #expect(after.deadBytes * 2 <= after.segmentBytes)
            for i in 0 ..< 2000 {
                let expected = compressible(1024, seed: i < 1600 ? 10_000 + i : i)
                #expect(cache.data(forKey: "long\(i)") == expected)
            }
            #expect(cache.data(forKey: "short5") == nil)
            cache.checkInvariants()
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: configuration)
        for i in stride(from: 0, to: 2000, by: 7) {
            #expect(cache.data(forKey: "long\(i)") == compressible(1024, seed: i < 1600 ? 10_000 + i : i))
        }
        #expect(cache.data(forKey: "short5") == nil)
        #expect(cache.statistics.entries == 2001)
    }

    /// Compaction copies live records forward with their sequences and deletes
    /// the original; a crash before the next checkpoint must find the copies
    /// live, though the last manifest named the originals.
    @Test func aCrashRightAfterCompactionLosesNothing() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        var configuration = Kache.Configuration.testing(.sync, clock: clock, memoryBudget: 0)
        configuration.diskBudget = nil
        do {
            let cache = try Kache(directory: dir.url, configuration: configuration)
            for i in 0 ..< 2000 { try cache.set(compressible(1024, seed: i), forKey: "long\(i)", ttl: .seconds(7200)) }
            // Replace most of them, into another expiry bucket's file: the first file is mostly dead.
            for i in 0 ..< 1600 { try cache.set(compressible(1024, seed: 10_000 + i), forKey: "long\(i)", ttl: .seconds(600)) }
            let before = cache.statistics
            // The checkpoint covers the first file: the save compacts it after writing the manifest.
            try cache.save()
            #expect(cache.statistics.segmentBytes < before.segmentBytes, "compacted")
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: configuration)
        for i in 0 ..< 2000 {
            #expect(cache.data(forKey: "long\(i)") == compressible(1024, seed: i < 1600 ? 10_000 + i : i), "long\(i)")
        }
        #expect(cache.statistics.entries == 2000)
        cache.checkInvariants()
    }

    @Test func aDirectoryWrittenWithAFilePerEntryOpensWithSegmentsAndBack() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, filePerEntry: true))
            for i in 0 ..< 20 { try cache.set(compressible(300, seed: i), forKey: "old\(i)", ttl: .seconds(3600)) }
            try cache.close()
        }
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
            for i in 0 ..< 20 { #expect(cache.data(forKey: "old\(i)") == compressible(300, seed: i)) }
            try cache.set(Data("new".utf8), forKey: "old3", ttl: .seconds(3600))
            for i in 0 ..< 20 { try cache.set(compressible(300, seed: 100 + i), forKey: "new\(i)", ttl: .seconds(3600)) }
            cache.removeValue(forKey: "old4")
            cache.abandonForTesting()
        }
        // The old layout's file of "old3" went when its segment record landed.
        #expect(dir.entryFiles().count == 18)
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, filePerEntry: true))
        #expect(cache.data(forKey: "old3") == Data("new".utf8))
        #expect(cache.data(forKey: "old4") == nil)
        #expect(cache.data(forKey: "old5") == compressible(300, seed: 5))
        #expect(cache.data(forKey: "new19") == compressible(300, seed: 119))
        #expect(cache.statistics.entries == 39)
    }

    @Test(arguments: [Durability.sync, .fsync])
    func aFailedAppendIntoAFullPoolEvictsNothing(durability: Durability) throws {
        let dir = TemporaryDirectory()
        defer { DiskFaults.removeAll(pathContaining: dir.path) }
        let clock = ManualClock()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
            let pool = try cache.pool(named: "p", capacity: 2)
            try pool.set(Data("a".utf8), forKey: "a", ttl: .seconds(100))
            try pool.set(Data("b".utf8), forKey: "b", ttl: .seconds(200))
            DiskFaults.inject(ENOSPC, on: .write, pathContaining: dir.path + "/segments/", times: 1)
            let error = #expect(throws: KacheError.self) { try pool.set(Data("c".utf8), forKey: "c", ttl: .seconds(300)) }
            #expect(error?.case == .diskFull)
            #expect(pool.data(forKey: "a") == Data("a".utf8))
            #expect(pool.statistics.evictions == 0)
            cache.checkInvariants()
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
        let pool = try cache.pool(named: "p", capacity: 2)
        #expect(pool.data(forKey: "a") == Data("a".utf8), "the entry the failed set would have evicted")
        #expect(pool.data(forKey: "b") == Data("b".utf8))
        #expect(pool.data(forKey: "c") == nil)
    }

    /// With segment files the budget counts dead bytes too, and evicting an
    /// entry frees its bytes only once its file goes (whole, or compacted):
    /// a `set` that finds the directory over the budget reclaims at once.
    @Test(arguments: [Durability.sync, .async])
    func theDirectoryStaysNearTheBudgetWithSegments(durability: Durability) throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let probe = TemporaryDirectory("segment-budget-probe")
        let reserved = try Kache(directory: probe.url, configuration: .testing(.sync)).statistics.reservedBytes
        var configuration = Kache.Configuration.testing(durability, clock: clock)
        let budget = reserved + (512 << 10)
        configuration.diskBudget = budget
        let cache = try Kache(directory: dir.url, configuration: configuration)
        var worst = 0
        for i in 0 ..< 6000 {
            // Lifetimes in four groups, so that expiry buckets differ.
            try cache.set(compressible(1024, seed: i), forKey: "k\(i)", ttl: .seconds(600 + 600 * (i % 4)))
            if i % 500 == 499 {
                if durability == .async { try cache.save() }
                worst = max(worst, dir.duBytes())
            }
        }
        try cache.save()
        worst = max(worst, dir.duBytes())
        #expect(cache.statistics.budgetEvictions > 0)
        // Slack: one segment file's worth (a 16th of the budget) and the blocks open files round up to.
        #expect(worst <= budget + budget / 16 + 64 * 4096, "du reached \(worst) bytes for a budget of \(budget)")
        // Nothing was read: the first set go first, and the newest of the longest-lived group stay.
        let newest = stride(from: 5903, to: 6000, by: 4).filter { cache.data(forKey: "k\($0)") == compressible(1024, seed: $0) }.count
        #expect(newest == 25)
        cache.checkInvariants()
    }

    @Test func concurrentFsyncWritersShareFlushesAndLoseNothing() throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.fsync))
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for i in 0 ..< 100 { try! cache.set(compressible(200, seed: thread * 1000 + i), forKey: "t\(thread)-\(i)", ttl: .seconds(3600)) }
            }
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(.fsync))
        for thread in 0 ..< 4 {
            for i in 0 ..< 100 { #expect(cache.data(forKey: "t\(thread)-\(i)") == compressible(200, seed: thread * 1000 + i)) }
        }
    }

    @Test func theScanFindsRecordsAfterGarbageAndStopsAtATornOne() {
        func record(_ key: String, _ sequence: UInt64) -> Data {
            var draft = EntryFile.draft(
                name: EntryName(space: "", key: key), kind: KeySpace.Kind.topLevel.rawValue, payload: compressible(100), expiry: 1, compressionThreshold: 64
            )
            draft.seal(sequence: sequence)
            return draft.bytes
        }
        let a = record("a", 1), b = record("b", 2), c = record("c", 3)
        var bytes = a + Data(repeating: 0xAB, count: 37) + b + c.prefix(c.count - 5)
        let scan = SegmentStore.scan(bytes)
        #expect(scan.records.map(\.header.key) == ["a", "b"])
        #expect(scan.validLength == a.count + 37 + b.count)
        #expect(scan.damagedRanges == [a.count ..< a.count + 37])
        bytes = Data()
        #expect(SegmentStore.scan(bytes).records.isEmpty)
    }
}
