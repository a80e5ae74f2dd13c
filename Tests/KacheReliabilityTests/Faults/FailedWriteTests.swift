import Foundation
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 15, item 4: in `sync` and `fsync` durability a `set` whose file can't
/// be written throws, and loses nothing stored before: not the key it would
/// have replaced, and not the entries it would have evicted from a full Pool,
/// a full Queue or a full disk budget.
@Suite struct FailedWriteTests {
    static let modes: [Durability] = [.sync, .fsync]

    func open(_ fixture: FaultFixture, _ durability: Durability, budget: Int? = nil) throws -> Kache {
        var configuration = FaultFixture.configuration(durability)
        configuration.diskBudget = budget
        return try Kache(directory: fixture.directory, configuration: configuration)
    }

    /// Stores 300 KiB values through `store` (their index, the value) until the
    /// first eviction for the disk budget.
    func fillUntilTheBudgetEvicts(_ cache: Kache, _ store: (Int, Data) throws -> Void) throws {
        var index = 0
        while cache.statistics.budgetEvictions == 0 {
            try store(index, incompressible(300 << 10, seed: UInt64(index + 1)))
            index += 1
            try #require(index < 100, "the budget never evicted")
        }
    }

    @Test(arguments: modes)
    func aFailedWriteIntoAFullPoolEvictsNothing(durability: Durability) throws {
        let fixture = try FaultFixture(count: 0)
        let cache = try open(fixture, durability)
        let pool = try cache.pool(named: "p", capacity: 2)
        try pool.set(Data("a".utf8), forKey: "a", ttl: .seconds(100))
        try pool.set(Data("b".utf8), forKey: "b", ttl: .seconds(200))
        fixture.inject(ENOSPC, on: .write, times: 1)
        #expect(throws: KacheError.diskFull(path: fixture.listing.entryPath(key: "c", space: "p"))) {
            try pool.set(Data("c".utf8), forKey: "c", ttl: .seconds(300))
        }
        #expect(pool.data(forKey: "a") == Data("a".utf8))
        #expect(pool.statistics.evictions == 0)
        cache.checkInvariants()
        try cache.close()

        let reopened = try open(fixture, durability)
        let again = try reopened.pool(named: "p", capacity: 2)
        #expect(again.data(forKey: "a") == Data("a".utf8), "the entry the failed set would have evicted")
        #expect(again.data(forKey: "b") == Data("b".utf8))
        #expect(again.data(forKey: "c") == nil)
        try reopened.close()
    }

    @Test(arguments: modes)
    func aFailedPushIntoAFullQueueDropsNothing(durability: Durability) throws {
        let fixture = try FaultFixture(count: 0)
        let cache = try open(fixture, durability)
        let queue = try cache.queue(named: "q", capacity: 2)
        try queue.push(Data("x".utf8), ttl: .seconds(100))
        try queue.push(Data("y".utf8), ttl: .seconds(100))
        fixture.inject(ENOSPC, on: .write, times: 1)
        let error = #expect(throws: KacheError.self) { try queue.push(Data("z".utf8), ttl: .seconds(100)) }
        #expect(error?.case == .diskFull)
        cache.checkInvariants()
        try cache.close()

        let reopened = try open(fixture, durability)
        let again = try reopened.queue(named: "q", capacity: 2)
        #expect(again.pop() == Data("x".utf8), "the item the failed push would have dropped")
        #expect(again.pop() == Data("y".utf8))
        #expect(again.pop() == nil)
        try reopened.close()
    }

    @Test(arguments: modes)
    func aFailedWriteWithinTheDiskBudgetEvictsNothing(durability: Durability) throws {
        let fixture = try FaultFixture(count: 0)
        let budget = 8 << 20
        let cache = try open(fixture, durability, budget: budget)
        // Fill until the first eviction shows how many entries the budget holds.
        var held: [String: Data] = [:]
        try fillUntilTheBudgetEvicts(cache) { index, value in
            try cache.set(value, forKey: "k\(index)", ttl: .seconds(1000 + index))
            held["k\(index)"] = value
        }
        held = held.filter { cache.contains($0.key) }
        fixture.inject(EIO, on: .write, times: 1)
        let path = fixture.listing.entryPath(key: "refused")
        #expect(throws: KacheError.io(operation: "Writing the entry file", path: path, errno: EIO)) {
            try cache.set(incompressible(300 << 10, seed: 999), forKey: "refused", ttl: .seconds(5000))
        }
        cache.checkInvariants()
        try cache.close()

        let reopened = try open(fixture, durability, budget: budget)
        for (key, value) in held { #expect(reopened.data(forKey: key) == value, "\(key), held before the failed set") }
        #expect(reopened.data(forKey: "refused") == nil)
        try reopened.close()
    }

    /// Queue items the disk budget evicted go back in push order, each once.
    @Test(arguments: modes)
    func aFailedPushWithinTheDiskBudgetDropsNoQueueItem(durability: Durability) throws {
        let fixture = try FaultFixture(count: 0)
        let budget = 8 << 20
        let cache = try open(fixture, durability, budget: budget)
        let queue = try cache.queue(named: "q", capacity: 1000)
        var pushed: [Data] = []
        try fillUntilTheBudgetEvicts(cache) { index, value in
            try queue.push(value, ttl: .seconds(1000 + index))
            pushed.append(value)
        }
        let held = Array(pushed.suffix(queue.count))
        fixture.inject(EIO, on: .write, times: 1)
        let error = #expect(throws: KacheError.self) { try queue.push(incompressible(300 << 10, seed: 999), ttl: .seconds(5000)) }
        #expect(error?.case == .io)
        cache.checkInvariants()
        #expect(queue.count == held.count)
        try cache.close()

        let reopened = try open(fixture, durability, budget: budget)
        let again = try reopened.queue(named: "q", capacity: 1000)
        for (index, value) in held.enumerated() { #expect(again.pop() == value, "item \(index) of \(held.count)") }
        #expect(again.pop() == nil)
        try reopened.close()
    }
}
