import Foundation
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 4: a cache directory that can't be written. A `set` throws
/// a typed error, nothing partial is left, memory keeps serving, and what was
/// stored before survives. With a file per entry: a segment file already
/// open takes appends whatever its folder's mode, so only creating a file fails.
@Suite struct ReadOnlyDirectoryTests {
    @Test func setsIntoAnUnwritableDirectoryThrowAndKeepEverything() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync, filePerEntry: true))
        let before = (0 ..< 10).map { namedValue("before-\($0)", version: $0) }
        for (index, value) in before.enumerated() { try cache.set(value, forKey: "before-\(index)", ttl: .seconds(3600)) }
        try cache.save()

        let readOnly = try ReadOnlyFolders(cacheDirectory: directory)
        let new = #expect(throws: KacheError.self) { try cache.set(namedValue("new", version: 1), forKey: "new", ttl: .seconds(3600)) }
        #expect(new?.case == .directoryUnusable)
        let overwrite = #expect(throws: KacheError.self) { try cache.set(namedValue("before-0", version: 99), forKey: "before-0", ttl: .seconds(3600)) }
        #expect(overwrite?.case == .directoryUnusable)
        #expect(cache.data(forKey: "new") == nil)
        for (index, value) in before.enumerated() { #expect(cache.data(forKey: "before-\(index)") == value) }
        #expect(DirectoryListing(root: directory).temporaryFiles.isEmpty)
        cache.checkInvariants()
        readOnly.release()
        try cache.close()

        let reopened = try Kache(directory: directory, configuration: .reliability(.sync, filePerEntry: true))
        for (index, value) in before.enumerated() { #expect(reopened.data(forKey: "before-\(index)") == value) }
        #expect(reopened.data(forKey: "new") == nil)
        try reopened.close()
    }

    @Test func anUnwritableDirectoryOpensServesAndRefusesSets() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let writer = try Kache(directory: directory, configuration: .reliability(.sync, filePerEntry: true))
        try writer.set(namedValue("kept", version: 1), forKey: "kept", ttl: .seconds(3600))
        try writer.close()

        let readOnly = try ReadOnlyFolders(cacheDirectory: directory)
        defer { readOnly.release() }
        let cache = try Kache(directory: directory, configuration: .reliability(.sync, filePerEntry: true))
        #expect(cache.data(forKey: "kept") == namedValue("kept", version: 1))
        let error = #expect(throws: KacheError.self) { try cache.set(Data("x".utf8), forKey: "new", ttl: .seconds(60)) }
        #expect(error?.case == .directoryUnusable)
        #expect(cache.data(forKey: "kept") == namedValue("kept", version: 1))
        readOnly.release()
        try cache.close()
    }
}
