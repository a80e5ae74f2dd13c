import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: a write the background writer of `async` durability can't make
/// (`EIO`). Its `set` returned already, so: the value is served from memory
/// until the writer fails; then the entry leaves the cache (never served
/// stale, nor as a wrong value), the failure is counted, not retried, and the
/// next `save()` throws it once, as fsync(2) reports writeback errors. What a
/// `save()` acknowledged before is never lost.
@Suite struct FailedAsyncWriteTests {
    @Test(arguments: [FaultFixture.Layout.ownFiles, .segments])
    func aWriteTheAsyncWriterCannotMakeIsReportedBySaveAndLosesNothingSaved(layout: FaultFixture.Layout) throws {
        let fixture = try FaultFixture(layout: layout)
        let cache = try fixture.open(.async)
        let unwritten = incompressible(700, seed: 99)
        fixture.inject(EIO, on: .write, at: fixture.recordFolder)
        try cache.set(unwritten, forKey: "unwritten", ttl: .seconds(3600))
        #expect(cache.data(forKey: "unwritten") == unwritten || cache.statistics.writeErrors > 0, "served from memory while queued")
        cache.records?.drain()
        #expect(cache.statistics.writeErrors >= 1)
        #expect(cache.data(forKey: "unwritten") == nil, "an entry the writer lost is a miss, not a value")
        #expect(cache.statistics.pendingWrites == 0, "a failed write is reported, not retried")

        // The save that follows reports the lost write, with its errno, and only that save.
        let error = #expect(throws: KacheError.self) { try cache.save() }
        #expect(error?.case == .io)
        #expect(error?.description.contains("errno \(EIO)") == true, "\(String(describing: error))")
        fixture.removeFaults()
        try cache.save()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value) }
        #expect(cache.statistics.quarantined == 0)
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(.async)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key), saved before the failure") }
        #expect(reopened.data(forKey: "unwritten") == nil)
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// A failed write of a new version of a saved key: the key's old record
    /// does not come back as its value (the set replaced it), and no other key is touched.
    @Test(arguments: [FaultFixture.Layout.ownFiles, .segments])
    func aLostOverwriteNeverServesThePreviousValue(layout: FaultFixture.Layout) throws {
        let fixture = try FaultFixture(layout: layout)
        let cache = try fixture.open(.async)
        fixture.inject(EIO, on: .write, at: fixture.recordFolder, times: 1)
        try cache.set(incompressible(700, seed: 99), forKey: "key-3", ttl: .seconds(3600))
        cache.records?.drain()
        #expect(cache.data(forKey: "key-3") == nil)
        #expect(throws: KacheError.self) { try cache.save() }
        try cache.close()

        let reopened = try fixture.open(.async)
        #expect(reopened.data(forKey: "key-3") == nil, "the value the failed set replaced")
        for (key, value) in fixture.values where key != "key-3" { #expect(reopened.data(forKey: key) == value) }
        try reopened.close()
    }
}
