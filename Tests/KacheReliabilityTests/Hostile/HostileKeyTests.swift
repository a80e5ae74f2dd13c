import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 6, part 7: keys that look like paths, control characters, enormous
/// keys and Unicode twins. A key never names a file: it is hashed, so each
/// stays inside the directory and round-trips across a restart.
@Suite struct HostileKeyTests {
    static let pathLikeKeys = [
        "../../etc/passwd", "/", ".", "..", "\0", "a\0b", "objects/00/../../escape", "tmp/../../x", "~root",
        "%2e%2e%2f", "\\..\\..\\windows", "\n", " ", "lock", "manifest", "quarantine", String(repeating: "/", count: 300),
    ]

    @Test func pathLikeKeysRoundTripAndStayInside() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        let pool = try cache.pool(named: "../../etc", capacity: 100)
        for (index, key) in Self.pathLikeKeys.enumerated() {
            try cache.set(namedValue("top", version: index), forKey: key, ttl: .seconds(3600))
            try pool.set(namedValue("pool", version: index), forKey: key, ttl: .seconds(3600))
        }
        try cache.close()

        // Nothing but the cache directory appeared beside it, and inside it only 32-hex-digit files in shards.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["cache"])
        let files = DirectoryListing(root: directory).entryFiles()
        #expect(files.count == 2 * Self.pathLikeKeys.count)
        for file in files {
            let name = URL(fileURLWithPath: file).lastPathComponent
            #expect(name.count == 32 && name.allSatisfy(\.isHexDigit), "\(file)")
            #expect(URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent == DiskStore.objectsFolder)
        }
        let reopened = try Kache(directory: directory, configuration: .reliability(.sync))
        let reopenedPool = try reopened.pool(named: "../../etc", capacity: 100)
        for (index, key) in Self.pathLikeKeys.enumerated() {
            #expect(reopened.data(forKey: key) == namedValue("top", version: index), "\(key.debugDescription)")
            #expect(reopenedPool.data(forKey: key) == namedValue("pool", version: index), "\(key.debugDescription)")
        }
        try reopened.close()
    }

    @Test func overLongKeysAreRefusedWithTheirLength() throws {
        let scratch = ScratchFolder()
        let cache = try Kache(directory: scratch.child("cache"), configuration: .reliability(.sync))
        let huge = String(repeating: "k", count: 1 << 20)
        #expect(throws: KacheError.keyTooLong(bytes: 1 << 20, limit: 1024)) { try cache.set(Data("v".utf8), forKey: huge, ttl: .seconds(60)) }
        #expect(throws: KacheError.keyTooLong(bytes: 1025, limit: 1024)) {
            try cache.set(Data("v".utf8), forKey: String(repeating: "k", count: 1025), ttl: .seconds(60))
        }
        #expect(throws: KacheError.emptyKey) { try cache.set(Data("v".utf8), forKey: "", ttl: .seconds(60)) }
        #expect(cache.data(forKey: huge) == nil)
        // The limit counts the key's stored (NFC) form: U+0958 is 3 bytes, and 6 in NFC (a composition exclusion).
        let growing = String(repeating: "\u{0958}", count: 300)
        #expect(throws: KacheError.keyTooLong(bytes: 1800, limit: 1024)) { try cache.set(Data("v".utf8), forKey: growing, ttl: .seconds(60)) }
        let longest = String(repeating: "é", count: 512)
        try cache.set(Data("longest".utf8), forKey: longest, ttl: .seconds(60))
        try cache.close()
        #expect(try Kache(directory: scratch.child("cache"), configuration: .reliability(.sync)).data(forKey: longest) == Data("longest".utf8))
    }

    @Test func theLargestConfigurableKeyRoundTripsAndNoKeyOverflowsTheHeader() throws {
        let scratch = ScratchFolder()
        var configuration = Kache.Configuration.reliability(.sync)
        configuration.maximumKeyLength = Int(UInt16.max)
        let cache = try Kache(directory: scratch.child("cache"), configuration: configuration)
        let longest = String(repeating: "x", count: Int(UInt16.max))
        try cache.set(Data("longest".utf8), forKey: longest, ttl: .seconds(60))
        #expect(throws: KacheError.keyTooLong(bytes: 1 << 20, limit: Int(UInt16.max))) {
            try cache.set(Data("v".utf8), forKey: String(repeating: "x", count: 1 << 20), ttl: .seconds(60))
        }
        // Under the limit as given, over the 16-bit header field once normalized: refused, not trapped.
        let growing = String(repeating: "\u{0958}", count: 21_845)
        #expect(throws: KacheError.keyTooLong(bytes: 131_070, limit: Int(UInt16.max))) { try cache.set(Data("v".utf8), forKey: growing, ttl: .seconds(60)) }
        try cache.close()
        let reopened = try Kache(directory: scratch.child("cache"), configuration: configuration)
        #expect(reopened.data(forKey: longest) == Data("longest".utf8))
        try reopened.close()
    }

    /// (composed, decomposed) spellings Swift's `String` compares as equal.
    static let twins = [("caf\u{E9}", "cafe\u{301}"), ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"), ("\u{1E69}", "s\u{323}\u{307}")]

    @Test(arguments: [false, true])
    func unicodeTwinsNameOneEntryBeforeAndAfterARestart(rebuildingFromHeaders: Bool) throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        let pool = try cache.pool(named: "twins", capacity: 10)
        for (index, (composed, decomposed)) in Self.twins.enumerated() {
            try cache.set(namedValue("top", version: index), forKey: composed, ttl: .seconds(3600))
            #expect(cache.data(forKey: decomposed) == namedValue("top", version: index))
            try pool.set(namedValue("pool", version: index), forKey: decomposed, ttl: .seconds(3600))
            #expect(pool.data(forKey: composed) == namedValue("pool", version: index))
        }
        #expect(cache.statistics.entries == 2 * Self.twins.count)
        try cache.close()
        if rebuildingFromHeaders {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(DiskStore.manifestFile))
        }
        #expect(DirectoryListing(root: directory).entryFiles().count == 2 * Self.twins.count)

        let reopened = try Kache(directory: directory, configuration: .reliability(.sync))
        let reopenedPool = try reopened.pool(named: "twins", capacity: 10)
        for (index, (composed, decomposed)) in Self.twins.enumerated() {
            for spelling in [composed, decomposed] {
                #expect(reopened.data(forKey: spelling) == namedValue("top", version: index), "\(spelling.unicodeScalars.map(\.value))")
                #expect(reopenedPool.data(forKey: spelling) == namedValue("pool", version: index))
            }
            // Overwriting under the other spelling replaces the one entry.
            try reopened.set(namedValue("top", version: 100 + index), forKey: decomposed, ttl: .seconds(3600))
            #expect(reopened.data(forKey: composed) == namedValue("top", version: 100 + index))
        }
        #expect(reopened.statistics.entries == 2 * Self.twins.count)
        try reopened.close()
    }
}
