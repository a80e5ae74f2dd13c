import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 6, part 7: times to live of zero, negative, tiny and too large to count.
@Suite struct HostileTTLTests {
    static let nonPositive: [Duration] = [
        .zero, .nanoseconds(-1), .seconds(-1), .seconds(Int64.min), Duration(secondsComponent: 0, attosecondsComponent: -1),
    ]

    @Test(arguments: nonPositive)
    func nonPositiveTTLsAreRefusedAndStoreNothing(ttl: Duration) throws {
        let scratch = ScratchFolder()
        let cache = try Kache(directory: scratch.child("cache"), configuration: .reliability(.sync))
        let pool = try cache.pool(named: "p", capacity: 4)
        let queue = try cache.queue(named: "q", capacity: 4)
        #expect(throws: KacheError.invalidTTL(ttl)) { try cache.set(Data("v".utf8), forKey: "k", ttl: ttl) }
        #expect(throws: KacheError.invalidTTL(ttl)) { try pool.set(Data("v".utf8), forKey: "k", ttl: ttl) }
        #expect(throws: KacheError.invalidTTL(ttl)) { try queue.push(Data("v".utf8), ttl: ttl) }
        #expect(cache.statistics.entries == 0 && cache.statistics.sets == 0)
        #expect(DirectoryListing(root: scratch.child("cache")).entryFiles().isEmpty)
        try cache.close()
    }

    static let overflowing: [Duration] = [
        .seconds(Int64.max), Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999),
        .seconds(Int64.max / 1_000_000_000 + 1), .milliseconds(Int64.max),
    ]

    @Test(arguments: overflowing)
    func ttlsTooLongToCountNeverExpire(ttl: Duration) throws {
        let scratch = ScratchFolder()
        let clock = ManualClock()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync, clock: clock))
        try cache.set(Data("forever".utf8), forKey: "k", ttl: ttl)
        try cache.queue(named: "q", capacity: 4).push(Data("forever".utf8), ttl: ttl)
        clock.advance(by: .seconds(200 * 365 * 86_400))
        #expect(cache.sweep() == 0)
        #expect(cache.data(forKey: "k") == Data("forever".utf8))
        try cache.close()
        // The expiry saturated at the largest instant the format holds.
        let header = try DiskStore.readHeader(path: DirectoryListing(root: directory).entryPath(key: "k")).get().header
        #expect(header.expiry == Int64.max)
        let reopened = try Kache(directory: directory, configuration: .reliability(.sync, clock: clock))
        #expect(reopened.data(forKey: "k") == Data("forever".utf8))
        #expect(try reopened.queue(named: "q", capacity: 4).pop() == Data("forever".utf8))
        try reopened.close()
    }

    @Test func theShortestTTLExpiresAsSoonAsTimeMoves() throws {
        let scratch = ScratchFolder()
        let clock = ManualClock()
        let cache = try Kache(directory: scratch.child("cache"), configuration: .reliability(.sync, clock: clock))
        try cache.set(Data("brief".utf8), forKey: "k", ttl: .nanoseconds(1))
        #expect(cache.data(forKey: "k") == Data("brief".utf8))
        clock.advance(by: .milliseconds(1))
        #expect(cache.data(forKey: "k") == nil)
        #expect(cache.sweep() == 1)
        #expect(DirectoryListing(root: scratch.child("cache")).entryFiles().isEmpty)
        try cache.close()
    }

    @Test func emptyAndOversizedValues() throws {
        let scratch = ScratchFolder()
        var configuration = Kache.Configuration.reliability(.sync)
        configuration.maximumValueSize = 1 << 16
        let cache = try Kache(directory: scratch.child("cache"), configuration: configuration)
        try cache.set(Data(), forKey: "empty", ttl: .seconds(60))
        let everyByte = Data((0 ... 255).map { UInt8($0) })
        try cache.set(everyByte, forKey: "bytes", ttl: .seconds(60))
        #expect(throws: KacheError.valueTooLarge(bytes: (1 << 16) + 1, limit: 1 << 16)) {
            try cache.set(Data(count: (1 << 16) + 1), forKey: "big", ttl: .seconds(60))
        }
        try cache.close()
        let reopened = try Kache(directory: scratch.child("cache"), configuration: configuration)
        #expect(reopened.data(forKey: "empty") == Data())
        #expect(reopened.data(forKey: "bytes") == everyByte)
        #expect(reopened.data(forKey: "big") == nil)
        try reopened.close()
    }
}
