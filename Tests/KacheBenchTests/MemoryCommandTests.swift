import Foundation
import Testing
@testable import KacheBench

/// `kache-bench memory`: its arithmetic, and one run end to end.
@Suite struct MemoryCommandTests {
    private func outcome(
        entries: Int, start: Int, afterSets: Int, afterSave: Int, inMemory: Int, budget: Int = 16 << 20, peakDuringSave: Int? = nil
    ) -> MemoryProbeOutcome {
        MemoryProbeOutcome(
            workload: "W8", durability: "async", isFloor: false, entries: entries, meanKeyBytes: 11,
            memoryBudget: budget, bytesInMemory: inMemory, residentAtStart: start,
            residentAfterSets: afterSets, residentAfterSave: afterSave, peakResident: afterSets, peakDuringSave: peakDuringSave ?? afterSave
        )
    }

    @Test func bytesPerEntryLeaveOutTheRuntimeAndTheValues() {
        let figures = MemoryPerEntry(outcome: outcome(entries: 1000, start: 20_000_000, afterSets: 20_200_000, afterSave: 20_150_000, inMemory: 50_000))
        #expect(figures.bytesPerEntry == 100)
        #expect(figures.bytesBeyondKey == 89)
    }

    @Test func checksMeetAndMissAtTheCeilings() {
        // 1,000 entries: the ceiling is the budget, 111 bytes each (100 + the key) and 30 MB.
        let ceiling = 16 << 20 + 111_000 + 30_000_000
        let within = MemoryPerEntry(outcome: outcome(entries: 1000, start: 1_000_000, afterSets: ceiling, afterSave: 1_000_000 + 90_000, inMemory: 0))
        #expect(within.residentCeiling(ceilingBeyondKey: 100, slack: 30_000_000) == ceiling)
        #expect(within.checks(ceilingBeyondKey: 100, slack: 30_000_000).map(\.met) == [true, true, true, true])
        let over = MemoryPerEntry(outcome: outcome(entries: 1000, start: 1_000_000, afterSets: ceiling + 1, afterSave: 1_000_000 + 120_000, inMemory: 0))
        #expect(over.checks(ceilingBeyondKey: 100, slack: 30_000_000).map(\.met) == [false, false, true, true])
    }

    @Test func aSaveWhosePeakPassesTheHeadroomMissesItsCheck() {
        let afterSave = 100 << 20
        let within = MemoryPerEntry(outcome: outcome(entries: 1000, start: 0, afterSets: afterSave, afterSave: afterSave, inMemory: 0, peakDuringSave: afterSave + (16 << 20)))
        let over = MemoryPerEntry(outcome: outcome(entries: 1000, start: 0, afterSets: afterSave, afterSave: afterSave, inMemory: 0, peakDuringSave: afterSave + (16 << 20) + 1))
        #expect(within.checks(ceilingBeyondKey: 1e9, slack: 1 << 40).last?.met == true)
        #expect(over.checks(ceilingBeyondKey: 1e9, slack: 1 << 40).last?.met == false)
    }

    @Test func theMedianIsOneRunsFigures() {
        let runs = [130, 100, 115].map { MemoryPerEntry(outcome: outcome(entries: 10, start: 0, afterSets: $0 * 10, afterSave: $0 * 10, inMemory: 0)) }
        #expect(MemoryPerEntry.median(runs).bytesPerEntry == 115)
    }

    /// W1 in `memory` durability, once: a floor and a run, each from a probe
    /// process, in the JSON; nothing left in $TMPDIR.
    @Test func oneRunEndToEnd() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("memory.json")
        let result = try bench.run(["memory", "--workload", "W1", "--durability", "memory", "--runs", "1", "--json", json.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("index B/entry") && result.stdout.contains("floor [String: (Int64, Int32)]"), "\(result)")
        let outcomes = try JSONDecoder().decode([MemoryProbeOutcome].self, from: Data(contentsOf: json))
        #expect(outcomes.map(\.isFloor) == [true, false])
        #expect(outcomes.allSatisfy { $0.entries > 0 && $0.residentAfterSave > 0 })
        #expect(outcomes[0].entries == 100_000, "the floor holds every key")
        #expect(outcomes[1].peakDuringSave >= outcomes[1].residentAfterSave && outcomes[1].peakResident >= outcomes[1].peakDuringSave)
        #expect(result.stdout.contains("while save() ran"), "\(result)")
        #expect(try bench.leftovers().isEmpty)
    }
}
