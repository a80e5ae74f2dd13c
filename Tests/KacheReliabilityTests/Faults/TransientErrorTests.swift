import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 15, item 1: an error that says nothing about a file's bytes
/// (descriptors exhausted, permission, I/O, memory) is not damage. A read that
/// meets one is a miss that leaves the file and the index as they were; the
/// header scan on open and `verify --repair` quarantine nothing for it.
@Suite struct TransientErrorTests {
    static let transientErrors: [Int32] = [EMFILE, ENFILE, EACCES, EIO, ENOMEM]

    @Test(arguments: transientErrors)
    func aReadThatCannotOpenItsFileIsAMissAndKeepsTheFile(code: Int32) throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open()
        fixture.inject(code, on: .open)
        for key in fixture.values.keys {
            #expect(cache.data(forKey: key) == nil, "\(key) while open(2) fails with errno \(code)")
        }
        #expect(cache.statistics.quarantined == 0)
        #expect(cache.statistics.readErrors == UInt64(fixture.values.count))
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(fixture.listing.entryFiles().count == fixture.values.count)

        fixture.removeFaults()
        for (key, value) in fixture.values {
            #expect(cache.data(forKey: key) == value, "\(key) once open(2) works again")
        }
        try cache.close()
    }

    @Test func aReadThatFailsMidwayIsAMissAndKeepsTheFile() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open()
        fixture.inject(EIO, on: .read)
        for key in fixture.values.keys { #expect(cache.data(forKey: key) == nil) }
        #expect(cache.statistics.quarantined == 0)
        fixture.removeFaults()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value) }
        try cache.close()
    }

    @Test(arguments: transientErrors)
    func theHeaderScanOnOpenQuarantinesNothingItCannotRead(code: Int32) throws {
        let fixture = try FaultFixture()
        // No manifest: opening rebuilds the index from the entry files' headers.
        try FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(DiskStore.manifestFile))
        fixture.inject(code, on: .open, times: 3)
        do {
            let cache = try fixture.open()
            try cache.close()
            Issue.record("opening succeeded although three entry files could not be read")
        } catch let error as KacheError {
            #expect(error.description.contains("errno \(code)") || error.description.contains("refused"), "\(error)")
        }
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(fixture.listing.entryFiles().count == fixture.values.count)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent(DiskStore.manifestFile).path))

        fixture.removeFaults()
        let cache = try fixture.open()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value) }
        #expect(cache.statistics.quarantined == 0)
        try cache.close()
    }

    @Test func repairLeavesFilesItCannotReadInPlace() throws {
        let fixture = try FaultFixture()
        let victim = fixture.listing.entryPath(key: "key-3")
        DiskFaults.inject(EACCES, on: .open, pathContaining: victim)
        let repair = try CacheDirectory(url: fixture.directory).repair()
        #expect(repair.quarantined.isEmpty)
        #expect(FileManager.default.fileExists(atPath: victim))
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(repair.verification.problems.map(\.kind) == [.unreadableFile])
        #expect(!repair.verification.isHealthy)

        fixture.removeFaults()
        #expect(try CacheDirectory(url: fixture.directory).verify().isHealthy)
        let cache = try fixture.open()
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        try cache.close()
    }
}
