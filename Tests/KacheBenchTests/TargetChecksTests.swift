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
            result(.w2, .async, threads: 2, [figure("gets/s", [8.5, 8.5, 8.5])]),
            result(.w3, .async, [figure("ops/s", [10])]),
            result(.w3, .async, threads: 2, [figure("ops/s", [12])]),
        ], sizes: .standard)
        #expect(checks.map(\.target) == [
            "W2 gets/s on 1 thread ≥ 0.5× Mutex<[String: Data]>",
            "W2 gets/s on 2 threads ≥ 1.7× on 1 thread",
            "W3 ops/s on 2 threads ≥ 1.3× on 1 thread",
        ])
        let floor = try #require(checks.first)
        #expect(floor.met && floor.measured == "0.500×" && floor.margin == 0)
        #expect(checks[1].met && abs(checks[1].margin) < 1e-9, "2 threads at 8.5 against 1 thread at 5: 1.7× exactly")
        #expect(!checks[2].met, "W3: 12 against 10 is 1.2×")
        #expect(abs(checks[2].margin - (1.2 / 1.3 - 1)) < 1e-9)
        #expect(checks[1].context == nil && checks[2].context == nil, "no sharded floor in these results")
    }

    @Test func scalingTargetsSayHowFarTheShardedFloorScaledInTheSameRun() throws {
        func gets(_ samples: [Double], floor: [Double]) -> Figure {
            var figure = figure("gets/s", samples, baseline: Baselines.dictionary, samples)
            figure.comparisons.append(Comparison(baseline: Baselines.shardedDictionary, samples: floor))
            return figure
        }
        let checks = TargetChecks.evaluate([
            result(.w2, .async, [gets([5, 5, 5], floor: [6, 5, 7])]),
            result(.w2, .async, threads: 2, [gets([6, 6, 6], floor: [6.6, 6, 7])]),
        ], sizes: .standard)
        let scaling = try #require(checks.first { $0.target.hasPrefix("W2 gets/s on 2 threads") })
        #expect(!scaling.met && scaling.measured == "1.20×")
        #expect(scaling.context == "\(Baselines.shardedDictionary) in the same run: 1.10×", "medians 6.6 over 6")
    }

    @Test func loadTargetsNeedBothModesForTheAsyncOverSyncRatio() {
        let sync = result(.w1, .sync, [figure("sets/s", [10]), figure("durable sets/s", [30], baseline: Baselines.rename, [10])])
        let async = result(.w1, .async, [figure("sets/s", [40]), figure("durable sets/s", [45], baseline: Baselines.rename, [10])])
        let onlySync = TargetChecks.evaluate([sync], sizes: .standard)
        #expect(onlySync.map(\.met) == [true], "sync: 3× the rename floor")
        #expect(onlySync.first?.target == "W1 durable sets/s ≥ 3× temp file + rename")
        let both = TargetChecks.evaluate([sync, async], sizes: .standard)
        #expect(both.map(\.met) == [false, true, true], "async durable 4.5× misses 5×; sync 3× meets; async 4× sync meets")
        #expect(both.first?.target == "W1 durable sets/s ≥ 5× temp file + rename")
        #expect(both.last?.target.contains("3×") == true)
    }

    @Test func loadTargetsReadTheAppendFloorAndTheDirectoryInAsync() {
        var durable = figure("durable sets/s", [60, 60, 60], baseline: Baselines.rename, [10, 10, 10])
        durable.comparisons.append(Comparison(baseline: Baselines.append, samples: [100, 150, 130]))
        durable.comparisons.append(Comparison(baseline: Baselines.rocksDB, samples: [25, 35, 30]))
        let allocated = Figure(name: "allocated ÷ raw bytes", unit: .ratio, higherIsBetter: false, samples: [0.12, 0.3, 0.135])
        let checks = TargetChecks.evaluate([result(.w1, .async, [durable, allocated])], sizes: .standard)
        #expect(checks.map(\.target) == [
            "W1 durable sets/s ≥ 5× temp file + rename",
            "W1 durable sets/s ≥ 0.5× LZ4 records appended to one file, then syncfs",
            "W1 allocated ÷ raw bytes ≤ 0.14",
            "W1 durable sets/s ≥ 2× \(Baselines.rocksDB)",
        ])
        #expect(checks.map(\.met) == [true, false, true, true], "6×; a median of 0.462×; a median of 0.135; 2×")
    }

    @Test func writerThreadsInFsyncAreReadAgainstAFilePerEntry() throws {
        let writers = result(.w1, .fsync, threads: 2, variant: W1WriterThreads.variant(threads: 2), [
            figure("durable sets/s", [5, 5, 5], baseline: Baselines.filePerEntry, [2, 2, 3]),
        ])
        let checks = TargetChecks.evaluate([writers], sizes: .standard)
        let check = try #require(checks.first)
        #expect(checks.count == 1 && check.met && check.measured == "2.50×")
        #expect(check.target == "W1 durable sets/s on 2 writer threads ≥ 2× segmentThreshold 0 (a file per entry)")
        #expect(TargetChecks.evaluate([result(.w1, .async, threads: 2, variant: W1WriterThreads.variant(threads: 2), writers.figures)], sizes: .standard).isEmpty,
                "the target is for fsync")
    }

    @Test func manySmallAndChurnOnDiskTargets() {
        let w8 = result(.w8, .async, [
            Figure(name: "ms to ready", unit: .milliseconds, higherIsBetter: false, samples: [150, 600, 190]),
            Figure(name: "keys lost", unit: .count, higherIsBetter: false, samples: [0, 0, 0]),
            Figure(name: "wrong values", unit: .count, higherIsBetter: false, samples: [0, 2, 0]),
            Figure(name: "allocated ÷ raw bytes", unit: .ratio, higherIsBetter: false, samples: [0.21]),
            Figure(name: "files in the directory", unit: .count, higherIsBetter: false, samples: [1_000]),
            Figure(name: "durable sets/s", unit: .perSecond, higherIsBetter: true, samples: [100, 100, 100], comparisons: [
                Comparison(baseline: Baselines.append, samples: [180, 210, 190]),
                Comparison(baseline: Baselines.rocksDB, samples: [80, 70, 90]),
            ]),
        ])
        let w4d = result(.w4d, .async, [
            Figure(name: "write amplification", unit: .ratio, higherIsBetter: false, samples: [1.5]),
            Figure(name: W4dChurnOnDisk.deadFigure, unit: .ratio, higherIsBetter: false, samples: []),
        ])
        let checks = TargetChecks.evaluate([w8, w4d], sizes: .standard)
        #expect(checks.map(\.target) == [
            "W8 ready in under 200 ms (1,000,000 entries)", "W8 allocated ÷ raw bytes ≤ 0.22",
            "W8 durable sets/s ≥ 0.5× \(Baselines.append)", "W8 durable sets/s ≥ 1.3× \(Baselines.rocksDB)",
            "W8 files in the directory < 1,000 (1,000,000 entries)", "W8 keys lost = 0 (every run)", "W8 wrong values = 0 (every run)",
            "W4d write amplification ≤ 2.0",
        ], "dead bytes have no target check while there are no segments")
        #expect(checks.map(\.met) == [true, true, true, false, false, true, false, true], "0.526×; 1.25×")
        #expect(checks[4].measured == "1,000", "a count is printed whole")
        let dead = TargetChecks.evaluate([result(.w4d, .sync, [
            Figure(name: W4dChurnOnDisk.deadFigure, unit: .ratio, higherIsBetter: false, samples: [0.55]),
        ])], sizes: .standard)
        #expect(dead.map(\.met) == [false] && dead.first?.target.contains("50 %") == true)
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
                Figure(name: "ms to ready", unit: .milliseconds, higherIsBetter: false, samples: [20, 70, 22]),
                Figure(name: "keys lost", unit: .count, higherIsBetter: false, samples: [0, 1, 0]),
            ]),
        ], sizes: .standard)
        #expect(checks.map(\.met) == [true, false], "the median ready time is 22 ms; one run lost a key")
        #expect(checks.first?.target == "W5 ready in under 25 ms (100,000 entries)")
        #expect(checks.first?.target.contains("100,000 entries") == true)
    }

    /// Issue 33: the memory tier and the disk budget within 0.005 of S3-FIFO
    /// on traces (a) and (b); on (c), at least the better of S3-FIFO and earliest expiry.
    @Test func hitRatiosAreCheckedAgainstS3FIFOAndOnMixedTTLsAgainstTheBetterOfItAndEarliestExpiry() {
        func w9(_ kind: HitRatioTrace.Kind, _ tier: W9HitRatio.Tier, _ durability: Durability, kache: Double, s3fifo: Double) -> WorkloadResult {
            result(.w9, durability, variant: W9HitRatio.variant(kind, tier, percent: 1, capacity: 1_000), [
                Figure(name: "hit ratio", unit: .ratio, higherIsBetter: true, samples: [kache], comparisons: [
                    Comparison(baseline: Baselines.lru, samples: [0.4]), Comparison(baseline: Baselines.s3fifo, samples: [s3fifo]),
                    Comparison(baseline: Baselines.earliestExpiry, samples: [0.55]),
                ]),
            ])
        }
        let checks = TargetChecks.evaluate([
            w9(.zipf, .memory, .memory, kache: 0.501, s3fifo: 0.583),
            w9(.oneHitWonders, .memory, .memory, kache: 0.580, s3fifo: 0.583),
            w9(.mixedTTL, .memory, .memory, kache: 0.56, s3fifo: 0.5),
            w9(.zipf, .disk, .async, kache: 0.9, s3fifo: 0.5),
            w9(.mixedTTL, .disk, .async, kache: 0.579, s3fifo: 0.58),
        ], sizes: .standard)
        #expect(checks.map(\.target) == [
            "W9 memory tier hit ratio ≥ S3-FIFO − 0.005, (a) Zipf · memory tier · 1 % budget (1,000 values)",
            "W9 memory tier hit ratio ≥ S3-FIFO − 0.005, (b) + 30 % one-hit wonders · memory tier · 1 % budget (1,000 values)",
            "W9 memory tier hit ratio ≥ the better of S3-FIFO and earliest expiry, (c) Zipf, TTL 60 s / 1 h / 1 d · memory tier · 1 % budget (1,000 values)",
            "W9 disk budget hit ratio ≥ S3-FIFO − 0.005, (a) Zipf · disk budget · 1 % budget (1,000 values)",
            "W9 disk budget hit ratio ≥ the better of S3-FIFO and earliest expiry, (c) Zipf, TTL 60 s / 1 h / 1 d · disk budget · 1 % budget (1,000 values)",
        ])
        #expect(checks.map(\.met) == [false, true, true, true, false], "0.501 < 0.578; 0.580 ≥ 0.578; 0.56 ≥ 0.55; 0.9 ≥ 0.495; 0.579 < 0.58")
        #expect(checks.first?.measured == "0.501" && checks.first?.context == "S3-FIFO 0.583")
        #expect(checks.last?.context == "S3-FIFO 0.580, earliest expiry 0.550")
    }
}
