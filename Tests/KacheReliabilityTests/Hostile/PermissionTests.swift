import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 7: what the cache creates is private to its owner, whatever
/// the process's umask.
@Suite struct PermissionTests {
    /// Every kind of folder and file, made by this process (with its umask).
    @Test func foldersAre0700AndFiles0600() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        try cache.set(namedValue("k", version: 1), forKey: "k", ttl: .seconds(3600))
        try cache.pool(named: "p", capacity: 4).set(namedValue("p", version: 1), forKey: "k", ttl: .seconds(3600))
        try cache.queue(named: "q", capacity: 4).push(namedValue("q", version: 1), ttl: .seconds(3600))
        try cache.save()
        try cache.set(namedValue("d", version: 1), forKey: "dirty", ttl: .seconds(3600))  // leaves the dirty marker
        // A damaged file, so that quarantine/ holds one.
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: DirectoryListing(root: directory).entryPath(key: "k")))
        #expect(cache.data(forKey: "k") != nil)  // still in memory
        cache.abandonForTesting()
        let reopened = try Kache(directory: directory, configuration: .reliability(.sync))
        #expect(reopened.data(forKey: "k") == nil)
        #expect(reopened.statistics.quarantined == 1)

        try expectPrivateModes(in: directory, atLeastFiles: 7)
        try reopened.close()
    }

    /// The same, made by a process whose umask lets everything through.
    @Test func modesDoNotDependOnTheUmask() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let holder = try ChildProcess.harness(["hold", directory.path, "000"], outputPath: scratch.child("hold.out").path)
        _ = try #require(holder.waitForLine(startingWith: "held", timeout: .seconds(20)), "the holder did not open: \(holder.output())")
        // lock, manifest, dirty, the entries' segment file and the large entry's file (and its shard folder)
        try expectPrivateModes(in: directory, atLeastFiles: 5)
        try holder.kill()
    }

    /// Every folder of the directory is 0700, every file 0600. Shard folders
    /// are made when first written to: those there, at least one.
    private func expectPrivateModes(in directory: URL, atLeastFiles: Int) throws {
        let root = directory.path
        let shards = try FileManager.default.contentsOfDirectory(atPath: "\(root)/objects").map { "\(root)/objects/\($0)" }
        #expect(!shards.isEmpty)
        for folder in [root, "\(root)/objects", "\(root)/segments", "\(root)/tmp", "\(root)/quarantine"] + shards {
            #expect(try mode(folder) == 0o700, "\(folder)")
        }
        let listing = DirectoryListing(root: directory)
        let segments = ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/segments")) ?? []).map { "\(root)/segments/\($0)" }
        var files = ["\(root)/lock", "\(root)/manifest", "\(root)/dirty"] + listing.entryFiles() + segments
        files += listing.quarantinedFiles.map { "\(root)/quarantine/\($0)" }
        #expect(files.count >= atLeastFiles)
        for file in files {
            #expect(try mode(file) == 0o600, "\(file)")
        }
    }

    private func mode(_ path: String) throws -> Int {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        return Int(info.st_mode) & 0o7777
    }
}
