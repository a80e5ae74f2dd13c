import Foundation
import Kache
import Testing

/// The JSON `kache inspect --json` prints, as a script reads it.
struct InspectJSON: Decodable {
    var summary: CacheDirectory.Summary
    var keys: [CacheDirectory.Entry]?
}

@Suite struct InspectCommandTests {
    /// A directory with entries in every expiry bucket, two already expired,
    /// a Pool that evicted one key and a Queue; returns the library's view of it.
    static func populate(_ fixture: CacheDirectoryFixture, now: Date) throws -> (statistics: Statistics, keySpaces: [KeySpaceStatistics], raw: Int) {
        let clock = ManualClock(now)
        let cache = try fixture.open(clock: clock)
        var raw = 0
        func set(_ value: Data, _ key: String, _ ttl: Duration) throws {
            try cache.set(value, forKey: key, ttl: ttl)
            raw += value.count
        }
        try set(compressible(20_000), "report.json", .seconds(600))
        try set(Data("soon".utf8), "soon", .seconds(30))
        try set(Data(repeating: 7, count: 300), "today", .seconds(5 * 3600))
        try set(Data("week".utf8), "this-week", .seconds(3 * 86400))
        try set(Data("later".utf8), "next-month", .seconds(30 * 86400))
        let avatars = try cache.pool(named: "avatars", capacity: 2)
        for (index, ttl) in [3600, 7200, 10800].enumerated() {
            try avatars.set(Data(repeating: UInt8(index), count: 100), forKey: "user/\(index)", ttl: .seconds(ttl))
        }
        raw += 200 // user/0 was evicted
        let jobs = try cache.queue(named: "jobs", capacity: 5)
        try jobs.push(Data("job-1".utf8), ttl: .seconds(1800))
        try jobs.push(Data("job-2".utf8), ttl: .seconds(1800))
        raw += 10
        // Two entries whose time is up by `now`, set while the clock reads two hours earlier.
        clock.set(to: now.addingTimeInterval(-7200))
        try set(Data("stale-1".utf8), "stale-1", .seconds(3600))
        try set(Data("stale-2".utf8), "stale-2", .seconds(3600))
        let result = (cache.statistics, cache.keySpaces, raw)
        try cache.close()
        return result
    }

    @Test func aSaveUnderACacheClockSetAheadIsDatedByTheMachinesClock() throws {
        let fixture = CacheDirectoryFixture()
        let before = Date()
        // As W4d's simulated clock runs weeks ahead of the machine's.
        _ = try Self.populate(fixture, now: before.addingTimeInterval(50 * 86400))
        let after = Date()
        let json = try KacheProcess.run(["inspect", fixture.path, "--json"])
        #expect(json.status == 0, "\(json)")
        let saved = try #require(try json.decoded(InspectJSON.self).summary.manifestSavedAt)
        #expect(saved >= before.addingTimeInterval(-1) && saved <= after.addingTimeInterval(1), "saved \(saved), between \(before) and \(after)")
        let text = try KacheProcess.run(["inspect", fixture.path])
        let line = try #require(text.output.split(separator: "\n").first { $0.contains("manifest") && $0.contains("saved") })
        #expect(line.contains(" ago)"), "\(line)")
    }

    @Test func summaryNumbersMatchWhatWasStored() throws {
        let fixture = CacheDirectoryFixture()
        let (statistics, keySpaces, raw) = try Self.populate(fixture, now: Date())

        let outcome = try KacheProcess.run(["inspect", fixture.path, "--json"])
        #expect(outcome.status == 0, "\(outcome)")
        let summary = try outcome.decoded(InspectJSON.self).summary
        #expect(summary.entries == 11)
        #expect(summary.liveEntries == 9)
        #expect(summary.expiredEntries == 2)
        #expect(summary.rawBytes == raw)
        #expect(summary.storedBytes < summary.rawBytes)
        #expect(summary.expiry == {
            var histogram = CacheDirectory.ExpiryHistogram()
            (histogram.expired, histogram.withinMinute, histogram.withinHour, histogram.withinDay, histogram.withinWeek, histogram.later) = (2, 1, 3, 3, 1, 1)
            return histogram
        }())
        #expect(summary.largestEntries.first?.key == "report.json")
        #expect(summary.largestEntries.first?.size == 20_000)
        #expect(summary.manifestIsCurrent)
        #expect(summary.indexSource == .manifest)
        #expect(!summary.lockHeld)
        #expect(summary.damagedFiles.isEmpty)
        #expect(summary.quarantinedFiles == 0)

        // The library's own figures, field for field.
        #expect(summary.entries == statistics.entries)
        #expect(summary.filesOnDisk == statistics.filesOnDisk)
        #expect(summary.bytesOnDisk == statistics.bytesOnDisk)
        #expect(summary.rawBytes == statistics.rawBytes)
        let spacesJSON = try JSONSerialization.jsonObject(with: outcome.stdout) as? [String: Any]
        let spacesData = try JSONSerialization.data(withJSONObject: (spacesJSON?["summary"] as? [String: Any])?["keySpaces"] ?? [])
        let asLibraryStatistics = try JSONDecoder().decode([KeySpaceStatistics].self, from: spacesData)
        #expect(asLibraryStatistics.sorted { $0.name < $1.name } == keySpaces.sorted { $0.name < $1.name })
    }

    @Test func textSummaryShowsTheSameNumbersInColumns() throws {
        let fixture = CacheDirectoryFixture()
        _ = try Self.populate(fixture, now: Date())

        let outcome = try KacheProcess.run(["inspect", fixture.path])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func row(startingWith first: String) -> [String]? {
            lines.map { $0.split(separator: " ").map(String.init) }.first { $0.first == first }
        }
        #expect(outcome.output.contains("9 live, 2 expired (11 in all, 7 at the top level)"))
        #expect(outcome.output.contains("none (the lock is free)"))
        #expect(row(startingWith: "avatars") == ["avatars", "2", "2", "0", "1", "200", "B"])
        #expect(row(startingWith: "jobs") == ["jobs", "2", "5", "0", "2", "0", "0", "10", "B"])
        #expect(row(startingWith: "report.json")?.prefix(5) == ["report.json", "(top", "level)", "19.5", "KiB"])
        #expect(lines.contains { $0.hasPrefix("  within a minute") && $0.hasSuffix(" 1") })
        #expect(lines.contains { $0.hasPrefix("  already (not swept yet)") && $0.hasSuffix(" 2") })
        // Columns line up: every row of the Pools table has its numbers end where the heading's do.
        let pools = try #require(lines.firstIndex(of: "Pools"))
        let heading = lines[pools + 1]
        let capacityEnd = try #require(heading.range(of: "CAPACITY")).upperBound.utf16Offset(in: heading)
        let rows = lines[(pools + 2)...].prefix(while: { !$0.isEmpty })
        #expect(rows.count == 2)
        for line in rows {
            let characters = Array(line)
            #expect(characters.count >= capacityEnd && characters[capacityEnd - 1] != " ", "misaligned: \(line)")
        }
    }

    @Test func keysAreListedSortedAndLimited() throws {
        let fixture = CacheDirectoryFixture()
        _ = try Self.populate(fixture, now: Date())

        let bySize = try KacheProcess.run(["inspect", fixture.path, "--keys", "--sort", "size", "--limit", "3", "--json"])
        #expect(bySize.status == 0, "\(bySize)")
        let sizes = try #require(try bySize.decoded(InspectJSON.self).keys)
        #expect(sizes.map(\.key) == ["report.json", "today", "user/1"])
        #expect(sizes[0].storedSize < sizes[0].size)
        #expect(sizes[2].keySpace == "avatars")

        let byExpiry = try KacheProcess.run(["inspect", fixture.path, "--keys", "--limit", "0", "--json"])
        let all = try #require(try byExpiry.decoded(InspectJSON.self).keys)
        #expect(all.count == 11)
        #expect(all.prefix(3).map(\.key) == ["stale-1", "stale-2", "soon"])
        #expect(all.map(\.expiry) == all.map(\.expiry).sorted())

        let text = try KacheProcess.run(["inspect", fixture.path, "--keys", "--limit", "2"])
        #expect(text.status == 0, "\(text)")
        #expect(text.output.contains("Keys (2 of 11; --limit 0 lists all)"))
        let listed = text.output.components(separatedBy: "Keys (2 of 11").last ?? ""
        #expect(listed.contains("stale-1") && listed.contains("stale-2") && !listed.contains("soon"))
        #expect(listed.contains("KEY SPACE") && listed.contains("STORED") && listed.contains("EXPIRES"))
    }

    @Test func worksWhileAWriterHoldsTheLockAndChangesNothing() throws {
        let fixture = CacheDirectoryFixture()
        let cache = try fixture.open()
        try cache.set(compressible(5000), forKey: "a", ttl: .seconds(3600))
        try cache.pool(named: "thumbs", capacity: 10).set(Data("t".utf8), forKey: "b", ttl: .seconds(60))
        let statistics = cache.statistics
        let before = fixture.snapshot()

        let outcome = try KacheProcess.run(["inspect", fixture.path, "--json", "--keys"])
        let verify = try KacheProcess.run(["verify", fixture.path])
        let get = try KacheProcess.run(["get", fixture.path, "a"])

        #expect(fixture.snapshot() == before, "a read-only command changed the directory")
        #expect(outcome.status == 0, "\(outcome)")
        #expect(verify.status == 0, "\(verify)")
        #expect(get.stdout == compressible(5000))
        let summary = try outcome.decoded(InspectJSON.self).summary
        #expect(summary.lockHeld)
        #expect(summary.writerPID == getpid())
        // No manifest yet: the entries come from the files, as they would for the next opener.
        #expect(summary.indexSource == .entryFiles)
        #expect(summary.entries == statistics.entries)
        #expect(summary.filesOnDisk == statistics.filesOnDisk)
        #expect(summary.bytesOnDisk == statistics.bytesOnDisk)
        #expect(summary.rawBytes == statistics.rawBytes)
        let text = try KacheProcess.run(["inspect", fixture.path])
        #expect(text.output.contains("process \(getpid()) holds the lock"))

        // And the writer carries on as if nothing happened.
        try cache.set(Data("c".utf8), forKey: "c", ttl: .seconds(60))
        try cache.close()
    }

    @Test func reportsDamagedQuarantinedAndTemporaryFiles() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in
            for index in 0 ..< 4 { try cache.set(compressible(1000, seed: index), forKey: "k\(index)", ttl: .seconds(3600)) }
        }
        try fixture.truncate(try fixture.entryFile(key: "k1"), to: 30)
        try Data("half".utf8).write(to: fixture.url.appendingPathComponent("tmp/leftover.123.0"))
        try FileManager.default.createDirectory(at: fixture.url.appendingPathComponent("objects/ab"), withIntermediateDirectories: true)
        try Data("half".utf8).write(to: fixture.url.appendingPathComponent("objects/ab/.leftover.123.1"))
        try Data("old".utf8).write(to: fixture.url.appendingPathComponent("quarantine/old.1.2.3"))

        let outcome = try KacheProcess.run(["inspect", fixture.path, "--json"])
        #expect(outcome.status == 0, "\(outcome)")
        let summary = try outcome.decoded(InspectJSON.self).summary
        #expect(summary.damagedFiles.count == 1)
        #expect(summary.damagedFiles.first?.reason.contains("truncated") == true)
        #expect(summary.filesOnDisk == 3)
        #expect(summary.temporaryFiles == 2)
        #expect(summary.quarantinedFiles == 1)
        #expect(summary.quarantinedBytes == 3)

        let text = try KacheProcess.run(["inspect", fixture.path])
        #expect(text.output.contains("Damaged files"))
        #expect(text.output.contains(summary.damagedFiles[0].file))
    }
}

@Suite struct InspectDiskBudgetTests {
    @Test func inspectShowsDiskUsedAgainstTheBudget() throws {
        let fixture = CacheDirectoryFixture()
        // A file per entry: 25 entries of 100 bytes take 25 blocks.
        let cache = try Kache(directory: fixture.url, configuration: Kache.Configuration(durability: .sync, diskBudget: 4 << 20, segmentThreshold: 0))
        for i in 0 ..< 25 { try cache.set(Data(count: 100), forKey: "k\(i)", ttl: .seconds(3600)) }
        let allocated = cache.statistics.allocatedBytes
        try cache.close()
        #expect(allocated == 25 * 4096)
        let directoryBytes = Self.duBytes(fixture.url.path)
        // Under a MiB: 25 files, and only the shard folders they were written to.
        #expect(directoryBytes < 1 << 20)
        let text = try KacheProcess.run(["inspect", fixture.path])
        #expect(text.status == 0)
        let output = String(decoding: text.stdout, as: UTF8.self)
        let used = String(format: "%.1f KiB of 4.0 MiB used (%.1f%%)", Double(directoryBytes) / 1024, Double(directoryBytes) / Double(4 << 20) * 100)
        #expect(output.contains("disk budget      \(used)"), "\(output)")
        #expect(output.contains("eviction         S3-FIFO: on open the 25 live entries join the main queue"), "\(output)")
        let json = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self)
        #expect(json.summary.diskBudget == 4 << 20)
        #expect(json.summary.allocatedBytes == allocated)
        #expect(json.summary.directoryBytes == directoryBytes)
    }

    /// What `du -s` counts: the folder and everything under it.
    static func duBytes(_ path: String) -> Int {
        var info = stat()
        var total = lstat(path, &info) == 0 ? Int(info.st_blocks) * 512 : 0
        let walker = FileManager.default.enumerator(atPath: path)
        while let relative = walker?.nextObject() as? String {
            if lstat("\(path)/\(relative)", &info) == 0 { total += Int(info.st_blocks) * 512 }
        }
        return total
    }
}
