import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: `EIO` from `fsync`/`fdatasync`. After a failed flush the kernel
/// may have dropped the dirty pages and will not report it again (PostgreSQL,
/// 2018), so a flush that fails says the bytes it covered are unknown: the
/// `set` or `save()` that needed it throws a typed error and is not
/// acknowledged, and no later flush may call those bytes safe.
@Suite struct FailedFsyncTests {
    @Test func aFailedFsyncOfAFileOfItsOwnThrowsAndKeepsTheOldValue() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open(.fsync)
        let path = fixture.listing.entryPath(key: "key-3")
        fixture.inject(EIO, on: .fsync, times: 1)
        #expect(throws: KacheError.io(operation: "Writing the entry file", path: path, errno: EIO)) {
            try cache.set(incompressible(700, seed: 99), forKey: "key-3", ttl: .seconds(3600))
        }
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        #expect(fixture.listing.temporaryFiles.isEmpty)
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(.fsync)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// The set whose record did not flush throws; after a crash its key holds
    /// the value acknowledged before it, or the unacknowledged one if its bytes
    /// did reach the disk, never anything else and never nothing.
    @Test func aFailedFdatasyncOfASegmentThrowsAndLosesNothingAcknowledged() throws {
        let fixture = try FaultFixture(layout: .segments)
        let cache = try fixture.open(.fsync)
        let replacement = incompressible(700, seed: 99)
        fixture.inject(EIO, on: .fsync, at: fixture.recordFolder, times: 1)
        let error = #expect(throws: KacheError.self) { try cache.set(replacement, forKey: "key-3", ttl: .seconds(3600)) }
        #expect(error?.case == .io)
        #expect(error?.description.contains("errno \(EIO)") == true, "\(String(describing: error))")
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        let segments = try #require(cache.records?.segments)
        #expect(segmentAccountingMatchesTheFiles(segments), "the bytes of the append whose flush failed went uncounted")
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(.fsync)
        for (key, value) in fixture.values where key != "key-3" { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        let survivor = reopened.data(forKey: "key-3")
        #expect(survivor == fixture.values["key-3"] || survivor == replacement, "key-3 after a crash")
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// Group commit: writers whose bytes a failed `fdatasync` covered must not
    /// be told by a later one that they are safe. A second `fdatasync` of the
    /// same descriptor succeeds on Linux whether or not the pages reached the disk.
    @Test func aSegmentWhoseFlushFailedIsNeverCalledFlushedAgain() throws {
        let scratch = ScratchFolder()
        let folder = scratch.child("segments").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { DiskFaults.removeAll(pathContaining: folder) }
        let segments = SegmentStore(folder: folder, maximumLength: 1 << 20, syncsEveryWrite: false)
        let bucket = SegmentStore.Bucket(shift: 4, index: 1)
        let first = try segments.append(Data(repeating: 1, count: 300), bucket: bucket)
        _ = try segments.append(Data(repeating: 2, count: 300), bucket: bucket)

        DiskFaults.inject(EIO, on: .fsync, pathContaining: folder, times: 1)
        #expect(throws: StorageError.io(operation: "Flushing the segment file", path: segments.path(of: first.segment), errno: EIO)) {
            try segments.flush(first.segment)
        }
        DiskFaults.removeAll(pathContaining: folder)
        let again = #expect(throws: StorageError.self, "a retry would report the lost pages as flushed") {
            try segments.flush(first.segment)
        }
        #expect(again == .io(operation: "Flushing the segment file", path: segments.path(of: first.segment), errno: EIO))

        // New appends go to another file, whose flushes are its own.
        let later = try segments.append(Data(repeating: 3, count: 300), bucket: bucket)
        #expect(later.segment != first.segment)
        try segments.flush(later.segment)
    }

    /// In `fsync` durability a write returns once its folder's entry is
    /// flushed too: a file renamed into place whose folder did not flush can
    /// vanish in a power cut, so that `set` must throw.
    @Test func aFailedFsyncOfTheShardFolderFailsTheSet() throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open(.fsync)
        let replacement = incompressible(700, seed: 99)
        fixture.inject(EIO, on: .fsyncFolder, times: 1)
        let error = #expect(throws: KacheError.self) { try cache.set(replacement, forKey: "key-3", ttl: .seconds(3600)) }
        #expect(error?.case == .io)
        // The file is in place: the key serves the new value (the set's
        // outcome is unknown, not undone), or the old one, never nothing.
        let served = cache.data(forKey: "key-3")
        #expect(served == replacement || served == fixture.values["key-3"])
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(.fsync)
        for (key, value) in fixture.values where key != "key-3" { #expect(reopened.data(forKey: key) == value) }
        let survivor = reopened.data(forKey: "key-3")
        #expect(survivor == replacement || survivor == fixture.values["key-3"])
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    /// The same for a new segment file: its folder entry is flushed before
    /// anything is appended to it, or the append that needed it throws.
    @Test func aFailedFsyncOfTheSegmentFolderFailsTheSet() throws {
        let fixture = try FaultFixture(layout: .segments)
        let cache = try fixture.open(.fsync)
        fixture.inject(EIO, on: .fsyncFolder, at: "/\(DiskStore.segmentsFolder)/", times: 1)
        let error = #expect(throws: KacheError.self) { try cache.set(incompressible(700, seed: 99), forKey: "key-3", ttl: .seconds(3600)) }
        #expect(error?.case == .io)
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(.fsync)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value) }
        try reopened.close()
    }

    /// `save()` flushes the whole file system (`syncfs`). Once that failed,
    /// the pages written before it may be gone, and a later `syncfs` that
    /// succeeds proves nothing about them: saves keep throwing, the manifest
    /// stays marked stale, and the next open verifies every record.
    @Test func aSaveAfterAFailedFlushNeverCallsTheDataDurable() throws {
        let fixture = try FaultFixture(layout: .segments)
        let cache = try fixture.open(.sync)
        try cache.set(Data("after".utf8), forKey: "after", ttl: .seconds(3600))
        let root = fixture.directory.path
        DiskFaults.inject(EIO, on: .fsync, pathContaining: root, times: 1)
        #expect(throws: KacheError.io(operation: "Flushing the cache directory", path: root, errno: EIO)) { try cache.save() }
        fixture.removeFaults()
        let again = #expect(throws: KacheError.self, "a save after a failed flush called the data durable") { try cache.save() }
        #expect(again == .io(operation: "Flushing the cache directory", path: root, errno: EIO))
        #expect(FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent(DiskStore.dirtyFile).path))
        #expect(cache.data(forKey: "after") == Data("after".utf8))
        #expect(throws: KacheError.self) { try cache.close() }

        let reopened = try fixture.open(.sync)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value) }
        #expect(reopened.data(forKey: "after") == Data("after".utf8))
        try reopened.save()
        try reopened.close()
    }
}
