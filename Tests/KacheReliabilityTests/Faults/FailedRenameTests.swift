import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: a `rename` that fails where a file is replaced atomically. The
/// new bytes never take the old file's place: the call throws a typed error,
/// the old file stays as it was, and no temporary file is left behind.
@Suite struct FailedRenameTests {
    static let modes: [Durability] = [.sync, .fsync]

    @Test(arguments: modes)
    func aFailedRenameOfAFileOfItsOwnKeepsTheOldFile(durability: Durability) throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open(durability)
        let path = fixture.listing.entryPath(key: "key-3")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        fixture.inject(EIO, on: .rename, times: 1)
        #expect(throws: KacheError.io(operation: "Writing the entry file", path: path, errno: EIO)) {
            try cache.set(incompressible(700, seed: 99), forKey: "key-3", ttl: .seconds(3600))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(fixture.listing.temporaryFiles.isEmpty)
        #expect(cache.data(forKey: "key-3") == fixture.values["key-3"])
        cache.checkInvariants()
        cache.abandonForTesting()

        let reopened = try fixture.open(durability)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        try reopened.close()
    }

    /// The manifest a failed `save()` would have replaced is still the one
    /// on disk, byte for byte, and a crash afterwards loses nothing acknowledged.
    @Test(arguments: [Durability.sync, .async])
    func aFailedRenameOfTheManifestKeepsTheOldOne(durability: Durability) throws {
        let fixture = try FaultFixture()
        let cache = try fixture.open(durability)
        try cache.set(Data("saved".utf8), forKey: "saved", ttl: .seconds(3600))
        try cache.save()
        let saved = try #require(fixture.manifestBytes)
        try cache.set(Data("later".utf8), forKey: "later", ttl: .seconds(3600))
        let manifest = fixture.directory.appendingPathComponent(DiskStore.manifestFile).path
        fixture.inject(EIO, on: .rename, at: "/\(DiskStore.manifestFile)", times: 1)
        #expect(throws: KacheError.io(operation: "Writing the manifest", path: manifest, errno: EIO)) { try cache.save() }
        #expect(fixture.manifestBytes == saved)
        #expect(fixture.listing.temporaryFiles.isEmpty)
        #expect(FileManager.default.fileExists(atPath: fixture.directory.appendingPathComponent(DiskStore.dirtyFile).path))
        cache.abandonForTesting()

        let reopened = try fixture.open(durability)
        for (key, value) in fixture.values { #expect(reopened.data(forKey: key) == value, "\(key) after a crash") }
        #expect(reopened.data(forKey: "saved") == Data("saved".utf8))
        // Drained by the failed save before its manifest: on disk in either durability.
        #expect(reopened.data(forKey: "later") == Data("later".utf8))
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }
}
