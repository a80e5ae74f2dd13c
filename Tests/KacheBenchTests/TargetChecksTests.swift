import Kache
import KacheWorkloads
import Testing
@testable import KacheBench

@Suite("Targets checked from the figures")
struct TargetChecksTests {
    private func result(_ workload: WorkloadID, _ durability: Durability, threads: Int = 1, variant: String? = nil, _ figures: [Figure]) -> WorkloadResult {
        WorkloadResult(workload: workload, variant: variant, durability: durability, threads: threads, memoryBudget: 1 << 30, figures: figures)
    }

    private func figure(_ name: String, _ samples: [Double], baseline: String? = nil, _ baselineSamples: [Double] = []) -> Figure {
        Figure(name: name, unit: .perSecond, higherIsBetter: true, samples: samples,
               comparisons: baseline.map { [Comparison(baseline: $0, samples: baselineSamples)] } ?? [])
    }

    @Test func readTargetsCompareWithTheFloorAndAcrossThreadCounts() throws {
        let checks = TargetChecks.evaluate([
            result(.w2, .async, [figure("gets/s", [4, 6, 5], baseline: Baselines.dictionary, [10, 10, 10])]),
            result(.w2, .async, threads: 2, [figure("gets/s", [4.5, 4.5, 4.5])]),
        ], sizes: .standard)
        #expect(checks.count == 2)
        let floor = try #require(checks.first)
        #expect(floor.met && floor.measured == "0.500×" && floor.margin == 0)
        let scaling = try #require(checks.last)
        #expect(!scaling.met, "2 threads at 4.5 against 1 thread at 5")
        #expect(abs(scaling.margin + 0.1) < 1e-9)
    }

    @Test func loadTargetsNeedBothModesForTheAsyncOverSyncRatio() {
        let sync = result(.w1, .sync, [figure("sets/s", [10]), figure("durable sets/s", [9], baseline: Baselines.rename, [10])])
        let async = result(.w1, .async, [figure("sets/s", [40]), figure("durable sets/s", [5], baseline: Baselines.rename, [10])])
        let onlySync = TargetChecks.evaluate([sync], sizes: .standard)
        #expect(onlySync.map(\.met) == [true])
        let both = TargetChecks.evaluate([sync, async], sizes: .standard)
        #expect(both.map(\.met) == [false, true, true], "async durable 0.5× misses; sync 0.9× meets; async 4× sync meets")
        #expect(both.last?.target.contains("3×") == true)
    }

    @Test func churnCompareTheLargestCapacityWithTheSmallest() throws {
        let checks = TargetChecks.evaluate([
            result(.w4, .memory, variant: "capacity 1,000", [figure("sets/s", [100])]),
            result(.w4, .memory, variant: "capacity 10,000", [figure("sets/s", [90])]),
            result(.w4, .memory, variant: "capacity 100,000", [figure("sets/s", [60])]),
        ], sizes: .standard)
        let check = try #require(checks.first)
        #expect(checks.count == 1 && !check.met)
        #expect(check.target.contains("100,000") && check.measured == "0.600×")
    }

    @Test func restartTargetsAreAbsolute() {
        let checks = TargetChecks.evaluate([
            result(.w5, .sync, [
                Figure(name: "ms to ready", unit: .milliseconds, higherIsBetter: false, samples: [120, 200, 140]),
                Figure(name: "keys lost", unit: .count, higherIsBetter: false, samples: [0, 1, 0]),
            ]),
        ], sizes: .standard)
        #expect(checks.map(\.met) == [true, false], "the median ready time is 140 ms; one run lost a key")
        #expect(checks.first?.target.contains("100,000 entries") == true)
    }
}
