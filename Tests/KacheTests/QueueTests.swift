import Foundation
import Synchronization
import Testing
@testable import Kache
import KacheTestSupport

@Suite struct QueueTests {
    @Test(arguments: [Durability.memory, .async, .sync])
    func popsInFIFOOrder(durability: Durability) throws {
        // A small budget makes the disk modes read items back from their files;
        // in `memory` durability the budget bounds the whole cache, so it must hold them all.
        let budget = durability == .memory ? 1 << 20 : 2_000
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: .testing(durability, memoryBudget: budget))
        let queue = try cache.queue(named: "q", capacity: 100)
        for i in 0 ..< 20 { try queue.push(compressible(300, seed: i), ttl: .seconds(60)) }
        #expect(queue.peek() == compressible(300, seed: 0))
        for i in 0 ..< 20 { #expect(queue.pop() == compressible(300, seed: i)) }
        #expect(queue.pop() == nil)
        #expect(queue.statistics.pushes == 20 && queue.statistics.pops == 20)
        cache.checkInvariants()
    }

    @Test func aFullQueueDropsTheOldest() throws {
        let cache = try Kache(inMemory: .testing())
        let queue = try cache.queue(named: "q", capacity: 3)
        for i in 0 ..< 5 { try queue.push(Data([UInt8(i)]), ttl: .seconds(60)) }
        #expect(queue.count == 3)
        #expect(queue.pop() == Data([2]))
        #expect(queue.statistics.evictions == 2)
    }

    @Test func expiredItemsAreSkippedAndRemoved() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock))
        let queue = try cache.queue(named: "q", capacity: 10)
        try queue.push(Data("short".utf8), ttl: .seconds(1))
        try queue.push(Data("long".utf8), ttl: .seconds(100))
        try queue.push(Data("short2".utf8), ttl: .seconds(2))
        try queue.push(Data("last".utf8), ttl: .seconds(100))
        clock.advance(by: .seconds(5))
        #expect(queue.peek() == Data("long".utf8))
        #expect(queue.pop() == Data("long".utf8))
        #expect(queue.pop() == Data("last".utf8))
        #expect(queue.pop() == nil)
        #expect(dir.entryFiles().isEmpty)
    }

    @Test func queuesSurviveSaveAndACrash() throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
            let queue = try cache.queue(named: "jobs", capacity: 5)
            for i in 0 ..< 4 { try queue.push(Data("job\(i)".utf8), ttl: .seconds(60)) }
            try cache.save()
            try queue.push(Data("job4".utf8), ttl: .seconds(60))
            _ = queue.pop()
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        let queue = try cache.queue(named: "jobs", capacity: 5)
        #expect(queue.count == 4)
        for i in 1 ..< 5 { #expect(queue.pop() == Data("job\(i)".utf8)) }
        try queue.push(Data("after".utf8), ttl: .seconds(60))
        #expect(queue.pop() == Data("after".utf8))
    }

    /// `load()`, and opening the directory again, bring a Queue back whole:
    /// its items in push order (not expiry order), pops that go on from where
    /// they were, and its capacity, which drops the oldest item when full.
    @Test(arguments: [Durability.sync, .async], Reload.allCases)
    func aQueueComesBackInOrderAfterLoadOrReopen(durability: Durability, reload: Reload) throws {
        let dir = TemporaryDirectory()
        let first = try Kache(directory: dir.url, configuration: .testing(durability))
        let queue = try first.queue(named: "jobs", capacity: 5)
        // Each item expires before the one pushed ahead of it, and alternate items
        // go to files of two lifetimes: neither expiry nor file order is push order.
        for i in 0 ..< 5 { try queue.push(Data("job\(i)".utf8), ttl: .seconds((i.isMultiple(of: 2) ? 5000 : 100) - i)) }
        #expect(queue.pop() == Data("job0".utf8))
        try queue.push(Data("job5".utf8), ttl: .seconds(90))

        let cache = try reload.apply(to: first)
        #expect(cache.statistics.entriesInMemory == 0, "the index was not rebuilt from the directory")
        let restored = try #require(cache.keySpaces.first { $0.name == "jobs" })
        #expect(restored.kind == .queue && restored.capacity == 5 && restored.count == 5)
        let again = try cache.queue(named: "jobs", capacity: 5)
        #expect(again.peek() == Data("job1".utf8))
        try again.push(Data("job6".utf8), ttl: .seconds(80))
        #expect(again.count == 5, "the full Queue dropped its oldest item")
        for i in 2 ... 6 { #expect(again.pop() == Data("job\(i)".utf8)) }
        #expect(again.pop() == nil)
        cache.checkInvariants()
    }

    @Test func concurrentPushesAndPopsLoseAndDuplicateNothing() async throws {
        let scratch = TemporaryDirectory()
        let cache = try Kache(directory: scratch.url, configuration: .testing(.async, memoryBudget: 50_000))
        let queue = try cache.queue(named: "q", capacity: 100_000)
        let producers = 4, perProducer = 500
        let popped = Collected()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for p in 0 ..< producers {
                group.addTask {
                    for i in 0 ..< perProducer { try queue.push(Data("\(p)-\(i)".utf8), ttl: .seconds(60)) }
                }
            }
            for _ in 0 ..< 3 {
                group.addTask {
                    var mine: [String] = []
                    for _ in 0 ..< 400 {
                        if let item = queue.pop() { mine.append(String(decoding: item, as: UTF8.self)) }
                    }
                    popped.lists.withLock { $0.append(mine) }
                }
            }
            try await group.waitForAll()
        }
        var last: [String] = []
        while let item = await queue.pop() { last.append(String(decoding: item, as: UTF8.self)) }
        let lists = popped.lists.withLock { $0 } + [last]
        let all = lists.flatMap { $0 }
        #expect(all.count == producers * perProducer)
        #expect(Set(all).count == all.count)
        // FIFO: each consumer's successive pops see every producer's items in push order.
        for list in lists {
            for p in 0 ..< producers {
                let order = list.filter { $0.hasPrefix("\(p)-") }.map { Int($0.split(separator: "-")[1])! }
                #expect(order == order.sorted(), "producer \(p)'s items came out of order")
            }
        }
        cache.checkInvariants()
    }
}

/// Items gathered by concurrent tasks.
final class Collected: Sendable {
    let lists = Mutex<[[String]]>([])
}
