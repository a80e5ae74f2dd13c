import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 15, items 5 to 7: index changes that reach the files only in a safe
/// order, and configuration changes that destroy nothing.
@Suite struct IndexChangeTests {
    /// Item 5: `load()` rebuilds the index while other threads may be writing;
    /// their temporary files are not leftovers of a crash.
    @Test func loadLeavesWritesInFlightAlone() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open()
        try cache.set(Data("new".utf8), forKey: "new", ttl: .seconds(100)) // the manifest is stale now
        let name = EntryName(space: "", key: "in-flight")
        let shard = fixture.directory.appendingPathComponent("\(DiskStore.objectsFolder)/\(name.shard)")
        try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)  // as the write makes it
        let inFlight = shard.appendingPathComponent(DiskStore.temporaryName(for: name, serial: 424_242)).path
        #expect(FileManager.default.createFile(atPath: inFlight, contents: Data("being written".utf8)))
        try cache.load()
        #expect(FileManager.default.fileExists(atPath: inFlight), "load() deleted another thread's write in progress")
        #expect(cache.data(forKey: "new") == Data("new".utf8))
        try cache.close()
        // A crash would have left the manifest stale: opening then rebuilds the
        // index and, with no writer running yet, removes what the crash left.
        _ = FileManager.default.createFile(atPath: fixture.directory.appendingPathComponent(DiskStore.dirtyFile).path, contents: nil)
        let reopened = try fixture.open()
        #expect(!FileManager.default.fileExists(atPath: inFlight))
        try reopened.close()
    }

    /// Item 5 under load: sets racing `load()` never fail for a deleted
    /// temporary file, and none is lost to the index being rebuilt under it.
    @Test func setsRacingLoadAllSucceed() throws {
        let fixture = try FaultFixture(count: 0)
        let cache = try fixture.open()
        let stop = Locked(false)
        let loads = Locked(0)
        let loader = BackgroundCall()
        loader.start {
            while !stop.withLock({ $0 }) {
                try cache.load()
                loads.withLock { $0 += 1 }
                // A pause between loads, or the sets starve: each waits for one
                // and, polling, rarely catches the instant between two loads.
                usleep(500)
            }
        }
        var failures: [String] = []
        for index in 0 ..< 400 {
            do {
                // An hour: a slow run must not see the first keys expire.
                try cache.set(incompressible(200, seed: UInt64(index + 1)), forKey: "k\(index)", ttl: .seconds(3600))
            } catch {
                failures.append("k\(index): \(error)")
            }
        }
        stop.withLock { $0 = true }
        try loader.wait()
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(loads.withLock { $0 } >= 10, "too few loads raced the sets to test anything")
        let lost = (0 ..< 400).filter { cache.data(forKey: "k\($0)") != incompressible(200, seed: UInt64($0 + 1)) }
        #expect(lost.isEmpty, "\(lost.count) acknowledged sets lost to load(), e.g. k\(lost.first ?? -1)")
        try cache.close()
    }

    /// Item 6: a damaged read changes the index like any removal: the manifest
    /// is marked stale, so it never claims a quarantined file.
    @Test func aDamagedReadMarksTheManifestStale() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open()
        let path = fixture.listing.entryPath(key: "key-5")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count - 1] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))

        #expect(cache.data(forKey: "key-5") == nil)
        #expect(cache.statistics.quarantined == 1)
        let verification = try CacheDirectory(url: fixture.directory).verify()
        #expect(verification.manifest == .stale, "the manifest still says it is current after an entry left the index")
        #expect(verification.problems.isEmpty, "\(verification.problems)")
        try cache.close()
    }

    /// Item 7: a smaller `maximumValueSize` than the one a value was stored
    /// under makes it neither damaged nor lost.
    @Test func aSmallerMaximumValueSizeDestroysNothing() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let large = incompressible(100_000, seed: 7)
        var configuration = Kache.Configuration(durability: .sync, logger: quietLogger)
        let cache = try Kache(directory: directory, configuration: configuration)
        try cache.set(large, forKey: "large", ttl: .seconds(100))
        try cache.close()

        configuration.maximumValueSize = 10_000
        let smaller = try Kache(directory: directory, configuration: configuration)
        #expect(smaller.data(forKey: "large") == large)
        #expect(smaller.statistics.quarantined == 0)
        #expect(DirectoryListing(root: directory).quarantinedFiles.isEmpty)
        #expect(throws: KacheError.valueTooLarge(bytes: 100_000, limit: 10_000)) {
            try smaller.set(large, forKey: "again", ttl: .seconds(100))
        }
        try smaller.close()
    }
}
