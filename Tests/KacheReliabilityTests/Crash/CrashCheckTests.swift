import Foundation
import Testing
import KacheCrashHarness
@testable import Kache

/// The crash check itself: a directory that serves the predecessor of an
/// acknowledged `sync` write must be reported as a loss, not as one of the
/// states the journal allows (issue 30: such a value passed unnoticed).
@Suite struct CrashCheckTests {
    @Test func aPredecessorServedAfterAnAcknowledgedSetCountsAsLost() throws {
        let outcome = try checkAfterTwoAcknowledgedSets(directoryHolds: 1)
        #expect(outcome.lost == 1)
        #expect(outcome.problems.contains { $0.contains("k0 holds version 1, older than the acknowledged one") }, "\(outcome.problems)")
    }

    @Test func theNewestAcknowledgedVersionPasses() throws {
        let outcome = try checkAfterTwoAcknowledgedSets(directoryHolds: 2)
        #expect(outcome.lost == 0)
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
    }

    /// Checks a directory whose k0 holds `version` against a `sync` journal
    /// in which versions 1 and then 2 of k0 were both acknowledged.
    private func checkAfterTwoAcknowledgedSets(directoryHolds version: UInt64) throws -> CrashCheck.Outcome {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let now = CrashClock.now()
        let ttl: Int64 = 3_600_000_000_000
        let cache = try Kache(directory: directory, configuration: CrashLayout.configuration(durability: .sync))
        _ = try CrashLayout.keySpaces(of: cache)
        try cache.set(CrashValues.value(space: "", key: "k0", version: version), forKey: "k0", ttl: .nanoseconds(ttl))
        try cache.close()
        let journal: [JournalLine] = [
            .opened(pid: 1, durability: "sync", at: now),
            .begin(id: 1, at: now, operation: .set(space: "", key: "k0", version: 1, ttl: ttl)),
            .ack(id: 1, at: now + 1_000, popped: nil),
            .begin(id: 2, at: now + 2_000, operation: .set(space: "", key: "k0", version: 2, ttl: ttl)),
            .ack(id: 2, at: now + 3_000, popped: nil),
        ]
        var model = CrashModel()
        let run = model.replay(journal, killedAt: now + 4_000)
        return CrashCheck(directory: directory).check(run, model: &model)
    }
}
