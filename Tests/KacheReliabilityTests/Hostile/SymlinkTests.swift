import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 7: symbolic links where the cache expects its own files and
/// folders. Nothing outside the cache directory is ever read or written: a
/// planted link is refused (a folder) or moved aside unfollowed (a file).
///
/// "Outside" is a second, valid cache directory, so that following a link
/// would find plausible data there, and its files are compared byte for byte
/// before and after.
@Suite struct SymlinkTests {
    /// The cache under test and an outside directory holding a valid cache of
    /// its own (a Pool named `outside-pool`, the key `victim` with another value).
    struct Setup {
        let scratch = ScratchFolder()
        var directory: URL { scratch.child("cache") }
        var outside: URL { scratch.child("outside") }
        let insideValue = namedValue("victim", version: 1)
        let outsideValue = namedValue("victim", version: 666)

        init() throws {
            let cache = try Kache(directory: directory, configuration: .reliability(.sync))
            try cache.set(insideValue, forKey: "victim", ttl: .seconds(3600))
            try cache.set(namedValue("bystander", version: 1), forKey: "bystander", ttl: .seconds(3600))
            try cache.close()
            let other = try Kache(directory: outside, configuration: .reliability(.sync))
            try other.set(outsideValue, forKey: "victim", ttl: .seconds(3600))
            try other.set(outsideValue, forKey: "outsider", ttl: .seconds(3600))
            try other.pool(named: "outside-pool", capacity: 3).set(outsideValue, forKey: "victim", ttl: .seconds(3600))
            try other.close()
        }

        /// Every file under the outside directory with its bytes.
        func outsideSnapshot() -> [String: Data] {
            var snapshot: [String: Data] = [:]
            let enumerator = FileManager.default.enumerator(atPath: outside.path)
            while let relative = enumerator?.nextObject() as? String {
                if let data = FileManager.default.contents(atPath: outside.appendingPathComponent(relative).path) { snapshot[relative] = data }
            }
            return snapshot
        }

        /// Replaces `relative` inside the cache directory with a link to `target`.
        func plant(_ relative: String, pointingTo target: URL) throws {
            let path = directory.appendingPathComponent(relative)
            try? FileManager.default.removeItem(at: path)
            try FileManager.default.createSymbolicLink(at: path, withDestinationURL: target)
        }
    }

    @Test func aCacheDirectoryThatIsALinkIsRefused() throws {
        let setup = try Setup()
        let link = setup.scratch.child("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: setup.outside)
        let before = setup.outsideSnapshot()
        let error = #expect(throws: KacheError.self) { try Kache(directory: link, configuration: .reliability(.sync)) }
        #expect(error?.case == .directoryUnusable)
        #expect(setup.outsideSnapshot() == before)
    }

    @Test(arguments: ["objects", "objects/00", "tmp", "quarantine"])
    func aFolderReplacedByALinkIsRefused(folder: String) throws {
        let setup = try Setup()
        let target = setup.outside.appendingPathComponent(folder == "objects/00" ? "objects/00" : folder)
        try setup.plant(folder, pointingTo: target)
        let before = setup.outsideSnapshot()
        let error = #expect(throws: KacheError.self) { try Kache(directory: setup.directory, configuration: .reliability(.sync)) }
        #expect(error?.case == .directoryUnusable)
        #expect(setup.outsideSnapshot() == before)
    }

    @Test(arguments: [false, true])
    func anEntryFileReplacedByALinkIsNeverFollowed(rebuildingFromHeaders: Bool) throws {
        let setup = try Setup()
        let victimPath = DirectoryListing(root: setup.directory).entryPath(key: "victim")
        let outsideVictim = URL(fileURLWithPath: DirectoryListing(root: setup.outside).entryPath(key: "victim"))
        try setup.plant(String(victimPath.dropFirst(setup.directory.path.count + 1)), pointingTo: outsideVictim)
        // A link for a key the cache never had, under that key's own name.
        let outsiderPath = DirectoryListing(root: setup.directory).entryPath(key: "outsider")
        // In its shard folder, made by the planter if no entry of the cache's made it.
        try FileManager.default.createDirectory(atPath: (outsiderPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: outsiderPath, withDestinationPath: DirectoryListing(root: setup.outside).entryPath(key: "outsider")
        )
        if rebuildingFromHeaders { try FileManager.default.removeItem(at: setup.directory.appendingPathComponent(DiskStore.manifestFile)) }
        let before = setup.outsideSnapshot()

        let cache = try Kache(directory: setup.directory, configuration: .reliability(.sync))
        #expect(cache.data(forKey: "victim") == nil, "the link was followed")
        #expect(cache.data(forKey: "outsider") == nil, "the link was followed")
        #expect(cache.data(forKey: "bystander") == namedValue("bystander", version: 1))
        // Writing the key replaces the link itself, never the file it points to.
        try cache.set(namedValue("victim", version: 2), forKey: "victim", ttl: .seconds(3600))
        try cache.close()
        #expect(setup.outsideSnapshot() == before)
        var info = stat()
        #expect(lstat(victimPath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
        if rebuildingFromHeaders {
            #expect(lstat(outsiderPath, &info) != 0, "the header scan left a planted link in objects/")
        }
        let reopened = try Kache(directory: setup.directory, configuration: .reliability(.sync))
        #expect(reopened.data(forKey: "victim") == namedValue("victim", version: 2))
        try reopened.close()
    }

    @Test(arguments: ["lock", "dirty"])
    func aControlFileReplacedByALinkIsNeverWrittenThrough(file: String) throws {
        let setup = try Setup()
        let target = setup.outside.appendingPathComponent("manifest")
        try setup.plant(file, pointingTo: target)
        let before = setup.outsideSnapshot()
        if let cache = try? Kache(directory: setup.directory, configuration: .reliability(.sync)) {
            try? cache.set(namedValue("bystander", version: 2), forKey: "bystander", ttl: .seconds(3600))
            try? cache.save()
            try? cache.close()
        }
        #expect(setup.outsideSnapshot() == before)
    }

    @Test func aManifestReplacedByALinkIsNeverRead() throws {
        let setup = try Setup()
        try setup.plant(DiskStore.manifestFile, pointingTo: setup.outside.appendingPathComponent(DiskStore.manifestFile))
        let before = setup.outsideSnapshot()
        let cache = try Kache(directory: setup.directory, configuration: .reliability(.sync))
        #expect(!cache.keySpaces.contains { $0.name == "outside-pool" }, "the key spaces came from the outside manifest")
        #expect(cache.data(forKey: "victim") == setup.insideValue, "the outside manifest's index hid the cache's own entry")
        #expect(cache.data(forKey: "bystander") == namedValue("bystander", version: 1))
        try cache.close()
        #expect(setup.outsideSnapshot() == before)
    }
}
