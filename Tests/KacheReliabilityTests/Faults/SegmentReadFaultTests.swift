import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: `EIO` reading a segment file. That says nothing about the
/// bytes, so it is a transient error, never damage: each read is a miss,
/// counted in `readErrors`, nothing is quarantined or cut, the segment files
/// stay byte for byte, and once the fault is gone every value reads back.
@Suite struct SegmentReadFaultTests {
    @Test func aSegmentReadThatFailsIsAMissAndMovesNothing() throws {
        let fixture = try FaultFixture(layout: .segments)
        let before = fixture.segmentFiles
        try #require(!before.isEmpty)
        let cache = try fixture.open()
        fixture.inject(EIO, on: .read, at: fixture.recordFolder)
        for key in fixture.values.keys { #expect(cache.data(forKey: key) == nil, "\(key) while pread(2) fails") }
        #expect(cache.statistics.readErrors == UInt64(fixture.values.count))
        #expect(cache.statistics.quarantined == 0)
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(fixture.segmentFiles == before)
        cache.checkInvariants()

        fixture.removeFaults()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value, "\(key) once pread(2) works again") }
        try cache.close()
    }

    /// Without a current manifest, opening scans the segments: one it can't
    /// read fails the open with a typed error and changes nothing.
    @Test func theRecoveryScanQuarantinesNoSegmentItCannotRead() throws {
        let fixture = try FaultFixture(layout: .segments)
        try FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(DiskStore.manifestFile))
        let before = fixture.segmentFiles
        fixture.inject(EIO, on: .read, at: fixture.recordFolder, times: 1)
        do {
            let cache = try fixture.open()
            try cache.close()
            Issue.record("opening succeeded although a segment file could not be read")
        } catch let error as KacheError {
            #expect(error.case == .io, "\(error)")
            #expect(error.description.contains("errno \(EIO)"), "\(error)")
        }
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(fixture.segmentFiles == before)

        fixture.removeFaults()
        let cache = try fixture.open()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value) }
        #expect(cache.statistics.quarantined == 0)
        try cache.close()
    }
}
