import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: a write or flush that fails while compaction copies a segment's
/// live records forward. The copies are abandoned, the original stays where
/// the index points, every live record reads back (also after a crash), the
/// accounting still counts every byte appended, and the next reclaim does
/// the work.
@Suite struct FailedCompactionTests {
    /// 200 entries in one segment, 150 of them removed: past the compaction
    /// threshold, so the `save()` that follows compacts the file.
    func fill(_ cache: Kache) throws -> [String: Data] {
        var live: [String: Data] = [:]
        for index in 0 ..< 200 {
            let value = Data("compact \(index) ".utf8) + incompressible(600, seed: UInt64(1000 + index))
            try cache.set(value, forKey: "c\(index)", ttl: .seconds(3600))
            if index % 4 == 0 { live["c\(index)"] = value }
        }
        for index in 0 ..< 200 where index % 4 != 0 { cache.removeValue(forKey: "c\(index)") }
        return live
    }

    @Test(arguments: [(DiskFaults.Operation.write, EIO), (.write, ENOSPC), (.fsync, EIO)])
    func aFailedCompactionKeepsEveryLiveRecord(operation: DiskFaults.Operation, code: Int32) throws {
        let fixture = try FaultFixture(count: 0, layout: .segments)
        var cache = try fixture.open(.sync)
        let live = try fill(cache)
        var segments = try #require(cache.records?.segments)
        fixture.inject(code, on: operation, at: fixture.recordFolder)
        // The manifest is written; the compaction after it fails.
        try cache.save()
        #expect(cache.statistics.compactions == 0)
        for (key, value) in live { #expect(cache.data(forKey: key) == value, "\(key) after the failed compaction") }
        #expect(segmentAccountingMatchesTheFiles(segments), "bytes appended by the failed compaction went uncounted")
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        cache.checkInvariants()

        // Once the disk works again, the next reclaim compacts, and nothing is left behind.
        fixture.removeFaults()
        if operation == .fsync {
            // After a failed flush no save calls the files durable, until they are opened anew.
            #expect(throws: KacheError.self) { try cache.save() }
            cache.abandonForTesting()
            cache = try fixture.open(.sync)
            segments = try #require(cache.records?.segments)
        }
        try cache.save()
        try cache.save()
        // (After a reopen the rebuild may have left nothing worth compacting: the size check below holds either way.)
        if operation != .fsync { #expect(cache.statistics.compactions >= 1) }
        #expect(segmentAccountingMatchesTheFiles(segments))
        for (key, value) in live { #expect(cache.data(forKey: key) == value, "\(key) after the compaction") }
        let liveBytes = segments.withLedger { $0.liveBytes }
        let onDisk = segments.lengths().reduce(0) { $0 + $1.length }
        #expect(onDisk < 2 * liveBytes + 64 << 10, "\(onDisk) bytes of segments for \(liveBytes) live")
        cache.abandonForTesting()

        let reopened = try fixture.open(.sync)
        for (key, value) in live { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        for index in 0 ..< 200 where index % 4 != 0 { #expect(reopened.data(forKey: "c\(index)") == nil, "c\(index) was removed") }
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// A crash right after a compaction whose flush failed: the index still
    /// points at the originals, which recovery finds; the unflushed copies
    /// (same sequence numbers) can only be equal to them.
    @Test func aCrashAfterAFailedCompactionFlushLosesNothing() throws {
        let fixture = try FaultFixture(count: 0, layout: .segments)
        let cache = try fixture.open(.sync)
        let live = try fill(cache)
        fixture.inject(EIO, on: .fsync, at: fixture.recordFolder)
        try cache.save()
        cache.abandonForTesting()
        fixture.removeFaults()

        let reopened = try fixture.open(.sync)
        for (key, value) in live { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        for index in 0 ..< 200 where index % 4 != 0 { #expect(reopened.data(forKey: "c\(index)") == nil) }
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }
}
