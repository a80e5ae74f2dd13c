import Foundation
import KacheStorage
import Testing
@testable import Kache
import KacheTestSupport

/// The segment accounting against a reference: seeded random sets of every
/// size, overwrites, removals, expiries, checkpoints and compactions, after
/// which each segment file's length on disk is what the ledger counts (the
/// shares of each block adding up to it), the live bytes are those the index
/// points at, and every value reads back as the model has it.
@Suite struct SegmentAccountingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var durability: Durability
        var seed: UInt64
        /// With a budget, segment files are small (a 16th of it) and fill, seal and compact often.
        var diskBudget: Int?
        var testDescription: String { "\(durability), seed \(seed), budget \(diskBudget.map { "\($0 >> 10) KiB" } ?? "none")" }
    }

    static let cases = [
        Case(durability: .async, seed: 1, diskBudget: nil),
        Case(durability: .sync, seed: 2, diskBudget: nil),
        Case(durability: .async, seed: 3, diskBudget: 3 << 20),
        Case(durability: .sync, seed: 4, diskBudget: 3 << 20),
    ]

    @Test(arguments: cases)
    func theLedgerAddsUpToTheFilesUnderRandomChanges(_ test: Case) throws {
        var random = SeededGenerator(seed: test.seed)
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        var configuration = Kache.Configuration.testing(test.durability, clock: clock, memoryBudget: 64 << 10)
        configuration.diskBudget = test.diskBudget
        configuration.compactionThreshold = 0.25
        let cache = try Kache(directory: dir.url, configuration: configuration)
        let records = try #require(cache.records)
        // The value and expiry the model holds for each key.
        var model: [String: (value: Data, expiry: Timestamp)] = [:]
        let sizes = [0, 40, 200, 1_000, 3_000, 20_000]
        for step in 1 ... 3_000 {
            let key = "k\(Int.random(in: 0 ..< 400, using: &random))"
            switch Int.random(in: 0 ..< 20, using: &random) {
            case 0 ..< 14:
                let size = sizes[Int.random(in: 0 ..< sizes.count, using: &random)]
                let value = compressible(size, seed: step)
                let ttl = Int64.random(in: 30 ... 3_000, using: &random)
                try cache.set(value, forKey: key, ttl: .seconds(ttl))
                model[key] = (value, Timestamp(clock.now()) + ttl * 1_000_000_000)
            case 14 ..< 17:
                cache.removeValue(forKey: key)
                model[key] = nil
            case 17 ..< 19:
                clock.advance(by: .seconds(Int64.random(in: 1 ... 60, using: &random)))
            default:
                try cache.save()
            }
            guard step % 250 == 0 else { continue }
            records.drain()
            records.segments.checkLengths()
            cache.checkInvariants()
            let now = Timestamp(clock.now())
            for (key, (value, expiry)) in model {
                let read = cache.data(forKey: key)
                if expiry <= now {
                    #expect(read == nil, "\(key) expired")
                } else if test.diskBudget == nil {
                    #expect(read == value, "\(key) at step \(step)")
                } else {
                    // The budget may have evicted it; never a wrong value.
                    #expect(read == nil || read == value, "\(key) at step \(step)")
                }
            }
        }
        #expect(cache.statistics.compactions > 0 || test.diskBudget == nil, "compaction ran")
        try cache.close()
    }
}
