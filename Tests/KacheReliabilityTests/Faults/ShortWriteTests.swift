import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: `write(2)` may write fewer bytes than it was given. The cache
/// writes the rest, or, when the next call fails, reports the failure and
/// leaves no partial record behind: nothing that reads back as a wrong value,
/// before or after a crash.
@Suite struct ShortWriteTests {
    static let layouts: [FaultFixture.Layout] = [.ownFiles, .segments]

    @Test(arguments: layouts, [Durability.sync, .fsync])
    func shortWritesAreCompleted(layout: FaultFixture.Layout, durability: Durability) throws {
        let fixture = try FaultFixture(layout: layout)
        let cache = try fixture.open(durability)
        DiskFaults.injectShortWrite(ofAtMost: 97, pathContaining: fixture.directory.path + fixture.recordFolder)
        var written = fixture.values
        for index in 0 ..< 5 {
            let value = incompressible(700 + index * 300, seed: UInt64(50 + index))
            try cache.set(value, forKey: "key-\(index)", ttl: .seconds(3600))
            written["key-\(index)"] = value
        }
        fixture.removeFaults()
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(durability)
        for (key, value) in written { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// A write cut short, then a full disk: the `set` throws `diskFull`, and
    /// its partial bytes are gone (a temporary file deleted, a segment cut
    /// back), so neither a read nor a recovery after a crash finds them.
    @Test(arguments: layouts, [Durability.sync, .fsync])
    func aShortWriteThatCannotFinishLeavesNoPartialRecord(layout: FaultFixture.Layout, durability: Durability) throws {
        let fixture = try FaultFixture(layout: layout)
        let cache = try fixture.open(durability)
        let lengths = cache.records?.segments.lengths().reduce(0) { $0 + $1.length }
        let fragment = fixture.directory.path + fixture.recordFolder
        DiskFaults.injectShortWrite(ofAtMost: 97, pathContaining: fragment, times: 1, thenFailing: ENOSPC)
        let error = #expect(throws: KacheError.self) { try cache.set(incompressible(900, seed: 99), forKey: "key-3", ttl: .seconds(3600)) }
        #expect(error?.case == .diskFull)
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        #expect(fixture.listing.temporaryFiles.isEmpty)
        if layout == .segments {
            #expect(cache.records?.segments.lengths().reduce(0) { $0 + $1.length } == lengths, "the segment was not cut back")
        }
        fixture.removeFaults()
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(durability)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        #expect(reopened.statistics.quarantined == 0)
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        try reopened.close()
    }

    @Test func aManifestWrittenInShortWritesDecodes() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open()
        try cache.set(Data("saved".utf8), forKey: "saved", ttl: .seconds(3600))
        DiskFaults.injectShortWrite(ofAtMost: 13, pathContaining: fixture.directory.path + "/\(DiskStore.tmpFolder)/")
        try cache.save()
        fixture.removeFaults()
        try cache.close()
        #expect(try CacheDirectory(url: fixture.directory).verify().isHealthy)

        let reopened = try fixture.open()
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value) }
        #expect(reopened.data(forKey: "saved") == Data("saved".utf8))
        try reopened.close()
    }
}
