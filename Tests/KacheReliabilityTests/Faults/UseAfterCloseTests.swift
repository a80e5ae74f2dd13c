import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 15, item 2: after `close()` every call does what the documentation
/// says (reads return nil, writes throw `.closed`, removals do nothing) and
/// touches no file.
@Suite struct UseAfterCloseTests {
    @Test(arguments: [Durability.sync, .async])
    func removalsAfterCloseTouchNoFile(durability: Durability) throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let clock = ManualClock()
        var configuration = Kache.Configuration(durability: durability, clock: clock, logger: quietLogger)
        configuration.defaultQueueCapacity = 10
        configuration.segmentThreshold = 0
        let cache = try Kache(directory: directory, configuration: configuration)
        let pool = try cache.pool(named: "p", capacity: 10)
        let queue = try cache.queue(named: "q", capacity: 10)
        try cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(10))
        try cache.set(Data("b".utf8), forKey: "b", ttl: .seconds(1000))
        try pool.set(Data("c".utf8), forKey: "c", ttl: .seconds(10))
        try queue.push(Data("d".utf8), ttl: .seconds(1000))
        try queue.push(Data("e".utf8), ttl: .seconds(1000))
        try cache.close()

        let listing = DirectoryListing(root: directory)
        let files = Set(listing.entryFiles())
        let manifest = try Data(contentsOf: directory.appendingPathComponent(DiskStore.manifestFile))
        #expect(files.count == 5)

        clock.advance(by: .seconds(100))
        cache.removeValue(forKey: "b")
        pool.removeValue(forKey: "c")
        #expect(cache.sweep() == 0)
        #expect(queue.pop() == nil)
        #expect(queue.peek() == nil)
        queue.removeAll()
        pool.removeAll()
        cache.removeAll()
        #expect(cache.data(forKey: "b") == nil)
        #expect(pool.data(forKey: "c") == nil)
        #expect(cache.statistics.pendingWrites == 0)

        #expect(Set(listing.entryFiles()) == files)
        #expect(try Data(contentsOf: directory.appendingPathComponent(DiskStore.manifestFile)) == manifest)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(DiskStore.dirtyFile).path))
    }

    @Test func peekAfterCloseReturnsAtOnce() throws {
        let scratch = ScratchFolder()
        let cache = try Kache(directory: scratch.child("cache"), configuration: .init(durability: .sync, logger: quietLogger))
        let queue = try cache.queue(named: "q", capacity: 10)
        try queue.push(Data("x".utf8), ttl: .seconds(1000))
        try cache.close()
        let call = BackgroundCall()
        let returned = Locked(false)
        call.start {
            _ = queue.peek()
            returned.withLock { $0 = true }
        }
        let deadline = Date().addingTimeInterval(5)
        while !returned.withLock({ $0 }), Date() < deadline { usleep(1000) }
        #expect(returned.withLock { $0 }, "peek() after close() did not return within 5 s")
    }

    @Test(arguments: [Durability.sync, .async, .memory])
    func writesAfterCloseThrowClosed(durability: Durability) throws {
        let scratch = ScratchFolder()
        let cache = try Kache(directory: scratch.child("cache"), configuration: .init(durability: durability, logger: quietLogger))
        let pool = try cache.pool(named: "p", capacity: 10)
        let queue = try cache.queue(named: "q", capacity: 10)
        try cache.close()
        #expect(throws: KacheError.closed) { try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(10)) }
        #expect(throws: KacheError.closed) { try pool.set(Data("v".utf8), forKey: "k", ttl: .seconds(10)) }
        #expect(throws: KacheError.closed) { try queue.push(Data("v".utf8), ttl: .seconds(10)) }
        #expect(throws: KacheError.closed) { try cache.pool(named: "other", capacity: 3) }
        if durability != .memory {
            #expect(throws: KacheError.closed) { try cache.save() }
            #expect(throws: KacheError.closed) { try cache.load() }
        }
        try cache.close()
    }
}
