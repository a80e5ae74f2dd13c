import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: a failure while `save()` writes the manifest (its temporary file
/// can't be created, written or flushed, or the disk is full). `save()` throws
/// a typed error, the old manifest stays intact, and a reopen after a crash
/// finds everything the last successful `save()` acknowledged.
@Suite struct FailedManifestWriteTests {
    struct Fault: Sendable, CustomStringConvertible {
        var operation: DiskFaults.Operation
        var errno: Int32
        var expected: KacheError.Case
        var description: String { "\(operation) \(errno)" }
    }

    static let faults: [Fault] = [
        Fault(operation: .open, errno: EMFILE, expected: .io),
        Fault(operation: .write, errno: EIO, expected: .io),
        Fault(operation: .write, errno: ENOSPC, expected: .diskFull),
        Fault(operation: .fsync, errno: EIO, expected: .io),
    ]

    @Test(arguments: faults)
    func aFailedManifestWriteKeepsTheOldManifestAndEverythingSaved(fault: Fault) throws {
        let fixture = try FaultFixture(layout: .segments)
        let cache = try fixture.open(.async)
        for index in 0 ..< 10 { try cache.set(Data("saved \(index)".utf8), forKey: "saved-\(index)", ttl: .seconds(3600)) }
        try cache.save()
        let saved = try #require(fixture.manifestBytes)
        cache.removeValue(forKey: "saved-0")
        try cache.set(Data("later".utf8), forKey: "later", ttl: .seconds(3600))
        fixture.inject(fault.errno, on: fault.operation, at: "/\(DiskStore.tmpFolder)/\(DiskStore.manifestFile)", times: 1)
        let error = #expect(throws: KacheError.self) { try cache.save() }
        #expect(error?.case == fault.expected)
        #expect(error?.description.contains("manifest") == true, "\(String(describing: error))")
        #expect(fixture.manifestBytes == saved)
        #expect(fixture.listing.temporaryFiles.isEmpty)
        #expect(FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent(DiskStore.dirtyFile).path))
        cache.abandonForTesting()

        let reopened = try fixture.open(.async)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        for index in 1 ..< 10 { #expect(reopened.data(forKey: "saved-\(index)") == Data("saved \(index)".utf8)) }
        #expect(reopened.statistics.quarantined == 0)
        // Once the disk works again, a save succeeds and says so.
        try reopened.save()
        try reopened.close()
    }
}
