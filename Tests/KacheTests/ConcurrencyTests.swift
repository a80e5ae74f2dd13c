import Foundation
import Testing
@testable import Kache
import KacheTestSupport

@Suite struct ConcurrencyTests {
    @Test(arguments: [Durability.async, .sync])
    func concurrentSetsAndGetsStayConsistent(durability: Durability) async throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock, memoryBudget: 20_000))
        // Each value names its key, so a read can tell a foreign value from a torn one.
        func value(_ key: String, _ version: Int) -> Data { Data("\(key)#\(version)#".utf8) + compressible(200, seed: version) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< 8 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(task))
                    for step in 0 ..< 400 {
                        let key = "k\(Int.random(in: 0 ..< 40, using: &random))"
                        switch Int.random(in: 0 ..< 10, using: &random) {
                        case 0 ..< 4: try cache.set(value(key, step), forKey: key, ttl: .seconds(Int64.random(in: 1 ... 100, using: &random)))
                        case 4: cache.removeValue(forKey: key)
                        case 5: cache.sweep()
                        case 6: clock.advance(by: .milliseconds(100))
                        default:
                            if let data = cache.data(forKey: key) {
                                #expect(data.starts(with: Data("\(key)#".utf8)), "foreign bytes for \(key)")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        cache.checkInvariants()
        try await cache.close()
        // Whatever survived reads back exactly as some version that was set.
        let reopened = try Kache(directory: dir.url, configuration: .testing(durability, clock: clock))
        reopened.checkInvariants()
        for i in 0 ..< 40 {
            if let data = await reopened.data(forKey: "k\(i)") { #expect(data.starts(with: Data("k\(i)#".utf8))) }
        }
        #expect(reopened.statistics.quarantined == 0)
    }

    /// Readers count reads for the disk budget under their shard's lock while
    /// writers evict by it and the writer settles it as records land: the
    /// state stays whole and within the budget, and what is read is its own key's.
    @Test(arguments: [Durability.async, .sync])
    func concurrentReadsAndEvictionsUnderADiskBudgetStayConsistent(durability: Durability) async throws {
        let dir = TemporaryDirectory()
        var configuration = Kache.Configuration.testing(durability, memoryBudget: 20_000)
        configuration.diskBudget = DiskBudgetTests.reserved + 32 * 1024
        let cache = try Kache(directory: dir.url, configuration: configuration)
        // Incompressible: about a hundred entries fit.
        func value(_ key: String, _ version: Int) -> Data { Data("\(key)#\(version)#".utf8) + incompressible(300, seed: UInt64(version)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< 8 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(100 + task))
                    for step in 0 ..< 400 {
                        // The smaller of two draws: a few keys are read far more often than the rest.
                        let key = "k\(min(Int.random(in: 0 ..< 400, using: &random), Int.random(in: 0 ..< 400, using: &random)))"
                        if let data = cache.data(forKey: key) {
                            #expect(data.starts(with: Data("\(key)#".utf8)), "foreign bytes for \(key)")
                        } else {
                            try cache.set(value(key, step), forKey: key, ttl: .seconds(3600))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await cache.save()
        cache.checkInvariants()
        #expect(cache.statistics.budgetEvictions > 100)
        try await cache.close()
    }

    @Test func aSecondWriterIsRefusedWithTheHoldersPID() throws {
        let dir = TemporaryDirectory()
        let first = try Kache(directory: dir.url, configuration: .testing())
        #expect(throws: KacheError.directoryLocked(path: dir.url.standardizedFileURL.path, holderPID: getpid())) {
            try Kache(directory: dir.url, configuration: .testing())
        }
        try first.close()
        let second = try Kache(directory: dir.url, configuration: .testing())
        try second.close()
    }
}
