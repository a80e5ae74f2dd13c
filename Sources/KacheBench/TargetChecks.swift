import Kache
import KacheWorkloads

/// One target of the issue, checked against a run's figures.
struct TargetCheck: Codable {
    /// What is promised, e.g. "W2 gets/s on 1 thread ≥ 0.5× Mutex<[String: Data]>".
    var target: String
    var durability: String?
    /// The median the check used, in the target's terms ("0.62×", "87 ms").
    var measured: String
    var met: Bool
    /// How far above or below the target the median is, as a fraction of the target
    /// (positive: met with room; negative: missed by that much).
    var margin: Double
    /// What the same run says about the target itself, e.g. how far the
    /// sharded floor scaled on this machine, so that a miss the machine
    /// caused can be told from one Kache caused.
    var context: String? = nil
}

/// The targets of the issue that a run's figures can decide. A target whose
/// figures the run did not take (another mode, another workload) is left out.
enum TargetChecks {
    static func evaluate(_ results: [WorkloadResult], sizes: WorkloadSizes) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        let modes = Durability.allCases.filter { mode in results.contains { $0.durability == mode } }
        for mode in modes {
            let here = results.filter { $0.durability == mode }
            func find(_ workload: WorkloadID, threads: Int = 1, variant: String? = nil) -> WorkloadResult? {
                here.first { $0.workload == workload && $0.threads == threads && $0.variant == variant }
            }
            if let w2 = find(.w2), let ratio = ratio(w2, "gets/s", Baselines.dictionary) {
                checks.append(atLeast("W2 gets/s on 1 thread ≥ 0.5× \(Baselines.dictionary)", mode, ratio, 0.5, asRatio: true))
            }
            // Issue 19's targets for reads on several cores.
            for (workload, name, factor, shown) in [(WorkloadID.w2, "gets/s", 1.7, "1.7×"), (.w3, "ops/s", 1.3, "1.3×")] {
                guard let one = find(workload)?.figure(name), let two = find(workload, threads: 2)?.figure(name),
                      let growth = scaling(one, two) else { continue }
                var check = atLeast("\(workload.rawValue) \(name) on 2 threads ≥ \(shown) on 1 thread", mode, growth, factor, asRatio: true)
                if let floor = scaling(one, two, baseline: Baselines.shardedDictionary) {
                    check.context = "\(Baselines.shardedDictionary) in the same run: \(Format.ratio(floor))"
                }
                checks.append(check)
            }
            // Issue 16's targets for W1's rate: in async ≥ 5× the rename floor and
            // ≥ 0.5× the append floor; in sync ≥ 3× the rename floor; in fsync,
            // on 2 writer threads, ≥ 2× the same run with a file per entry.
            if let w1 = find(.w1) {
                let renameFactor: Double? = mode == .async ? 5 : mode == .sync ? 3 : nil
                if let renameFactor, let ratio = ratio(w1, "durable sets/s", Baselines.rename) {
                    checks.append(atLeast("W1 durable sets/s ≥ \(Int(renameFactor))× \(Baselines.rename)", mode, ratio, renameFactor, asRatio: true))
                }
                if mode == .async, let ratio = ratio(w1, "durable sets/s", Baselines.append) {
                    checks.append(atLeast("W1 durable sets/s ≥ 0.5× \(Baselines.append)", mode, ratio, 0.5, asRatio: true))
                }
                // Issue 32's: at or below RocksDB's bytes, and W1 ≥ 2× its durable sets.
                if let allocated = w1.figure("allocated ÷ raw bytes")?.statistics {
                    checks.append(atMost("W1 allocated ÷ raw bytes ≤ 0.14", mode, allocated.median, 0.14, unit: ""))
                }
                if mode == .async, let ratio = ratio(w1, "durable sets/s", Baselines.rocksDB) {
                    checks.append(atLeast("W1 durable sets/s ≥ 2× \(Baselines.rocksDB)", mode, ratio, 2, asRatio: true))
                }
            }
            if mode == .fsync, let writers = find(.w1, threads: 2, variant: W1WriterThreads.variant(threads: 2)),
               let ratio = ratio(writers, "durable sets/s", Baselines.filePerEntry) {
                checks.append(atLeast("W1 durable sets/s on 2 writer threads ≥ 2× \(Baselines.filePerEntry)", mode, ratio, 2, asRatio: true))
            }
            let pools = here.filter { $0.workload == .w4 }.sorted { capacity($0) < capacity($1) }
            if let smallest = pools.first?.figure("sets/s")?.statistics, let largest = pools.last?.figure("sets/s")?.statistics, pools.count > 1 {
                let name = "W4 sets/s at capacity \(Format.grouped(capacity(pools.last!))) ≥ 0.7× at \(Format.grouped(capacity(pools.first!)))"
                checks.append(atLeast(name, mode, largest.median / smallest.median, 0.7, asRatio: true))
            }
            if let w5 = find(.w5) {
                let entries = Format.grouped(sizes.keyCount)
                if let ready = w5.figure("ms to ready")?.statistics {
                    checks.append(atMost("W5 ready in under 25 ms (\(entries) entries)", mode, ready.median, 25, unit: " ms"))
                }
                checks += noneEver(w5, ["keys lost", "wrong values"], mode)
            }
            if let w8 = find(.w8) {
                let entries = Format.grouped(sizes.manySmallCount)
                if let ready = w8.figure("ms to ready")?.statistics {
                    checks.append(atMost("W8 ready in under 200 ms (\(entries) entries)", mode, ready.median, 200, unit: " ms"))
                }
                if let allocated = w8.figure("allocated ÷ raw bytes")?.statistics {
                    checks.append(atMost("W8 allocated ÷ raw bytes ≤ 0.22", mode, allocated.median, 0.22, unit: ""))
                }
                if mode == .async, let ratio = ratio(w8, "durable sets/s", Baselines.append) {
                    checks.append(atLeast("W8 durable sets/s ≥ 0.5× \(Baselines.append)", mode, ratio, 0.5, asRatio: true))
                }
                if mode == .async, let ratio = ratio(w8, "durable sets/s", Baselines.rocksDB) {
                    checks.append(atLeast("W8 durable sets/s ≥ 1.3× \(Baselines.rocksDB)", mode, ratio, 1.3, asRatio: true))
                }
                if let files = w8.figure("files in the directory")?.statistics {
                    // "Under 1,000": at most 999, so that exactly 1,000 misses.
                    checks.append(atMost("W8 files in the directory < 1,000 (\(entries) entries)", mode, files.median, 999, unit: "", counting: true))
                }
                checks += noneEver(w8, ["keys lost", "wrong values"], mode)
            }
            if let w4d = find(.w4d) {
                if let amplification = w4d.figure("write amplification")?.statistics {
                    checks.append(atMost("W4d write amplification ≤ 2.0", mode, amplification.median, 2, unit: "×"))
                }
                if let dead = w4d.figure(W4dChurnOnDisk.deadFigure)?.statistics {
                    checks.append(atMost("W4d dead bytes ≤ 50 % of segment bytes at the end", mode, dead.median, 0.5, unit: ""))
                }
            }
            if let w6 = find(.w6) {
                if let bytes = w6.figure("file bytes ÷ bytes set")?.statistics {
                    checks.append(atMost("W6 bytes on disk ÷ bytes set ≤ 1.01 (file lengths)", mode, bytes.median, 1.01, unit: ""))
                }
                if let ratio = ratio(w6, "MB/s written", Baselines.lz4Compress) {
                    checks.append(atLeast("W6 MB/s written ≥ 0.8× \(Baselines.lz4Compress)", mode, ratio, 0.8, asRatio: true))
                }
                if let ratio = ratio(w6, "MB/s read", Baselines.lz4Decompress) {
                    checks.append(atLeast("W6 MB/s read ≥ 0.8× \(Baselines.lz4Decompress)", mode, ratio, 0.8, asRatio: true))
                }
                // The same target for the codec alone: Kache's framing and
                // checksum around LZ4, with the file system left out.
                if let ratio = ratio(w6, "MB/s encoded, no file", Baselines.lz4Compress) {
                    checks.append(atLeast("W6 MB/s encoded, no file ≥ 0.8× \(Baselines.lz4Compress)", mode, ratio, 0.8, asRatio: true))
                }
                if let ratio = ratio(w6, "MB/s decoded, no file", Baselines.lz4Decompress) {
                    checks.append(atLeast("W6 MB/s decoded, no file ≥ 0.8× \(Baselines.lz4Decompress)", mode, ratio, 0.8, asRatio: true))
                }
            }
            // Issue 33: the memory tier and the disk budget each within 0.005 of
            // S3-FIFO on traces (a) and (b); on (c), whose TTLs differ, at least
            // the better of S3-FIFO and earliest expiry.
            for w9 in here where w9.workload == .w9 {
                guard let hitRatio = w9.figure("hit ratio"), let kache = hitRatio.statistics?.median,
                      let s3fifo = hitRatio.median(of: Baselines.s3fifo) else { continue }
                let variant = w9.variant ?? ""
                let tier = variant.contains(W9HitRatio.Tier.disk.rawValue) ? W9HitRatio.Tier.disk : .memory
                var check: TargetCheck
                if variant.hasPrefix(HitRatioTrace.Kind.mixedTTL.title) {
                    guard let earliestExpiry = hitRatio.median(of: Baselines.earliestExpiry) else { continue }
                    let better = max(s3fifo, earliestExpiry)
                    check = atLeast("W9 \(tier.rawValue) hit ratio ≥ the better of S3-FIFO and earliest expiry, \(variant)", mode, kache, better, asRatio: false)
                    check.context = "S3-FIFO \(Format.significant(s3fifo)), earliest expiry \(Format.significant(earliestExpiry))"
                } else {
                    check = atLeast("W9 \(tier.rawValue) hit ratio ≥ S3-FIFO − 0.005, \(variant)", mode, kache, s3fifo - 0.005, asRatio: false)
                    check.context = "S3-FIFO \(Format.significant(s3fifo))"
                }
                checks.append(check)
            }
            if let budget = find(.w6, variant: W6DiskBudget.variant), let ratio = ratio(budget, "MB/s written", W6DiskBudget.unboundedBaseline) {
                checks.append(atLeast("W6 with a disk budget of ½: MB/s written ≥ 0.8× without", mode, ratio, 0.8, asRatio: true))
            }
        }
        let async = results.first { $0.workload == .w1 && $0.durability == .async }?.figure("sets/s")?.statistics
        let sync = results.first { $0.workload == .w1 && $0.durability == .sync }?.figure("sets/s")?.statistics
        if let async, let sync {
            checks.append(atLeast("W1 caller-visible sets/s in async ≥ 3× in sync", nil, async.median / sync.median, 3, asRatio: true))
        }
        return checks
    }

    /// The median, over runs, of a figure's ratio to one of its baselines.
    static func ratio(_ result: WorkloadResult, _ figure: String, _ baseline: String) -> Double? {
        guard let figure = result.figure(figure), let comparison = figure.comparisons.first(where: { $0.baseline == baseline }) else { return nil }
        return SampleStatistics(figure.ratios(to: comparison))?.median
    }

    /// How a figure grew from 1 thread to 2: the ratio of medians, of Kache's
    /// samples or, given `baseline`, of that baseline's.
    static func scaling(_ one: Figure, _ two: Figure, baseline: String? = nil) -> Double? {
        func median(_ figure: Figure) -> Double? {
            guard let baseline else { return figure.statistics?.median }
            return figure.comparisons.first { $0.baseline == baseline }.flatMap { SampleStatistics($0.samples)?.median }
        }
        guard let one = median(one), let two = median(two), one > 0 else { return nil }
        return two / one
    }

    /// "= 0 (every run)" checks of counts that must never be above zero, such as keys lost.
    private static func noneEver(_ result: WorkloadResult, _ figures: [String], _ mode: Durability) -> [TargetCheck] {
        figures.compactMap { name in
            guard let counted = result.figure(name)?.statistics else { return nil }
            return TargetCheck(target: "\(result.workload.rawValue) \(name) = 0 (every run)", durability: mode.rawValue,
                               measured: Format.grouped(Int(counted.max)), met: counted.max == 0, margin: counted.max == 0 ? 0 : -counted.max)
        }
    }

    private static func capacity(_ result: WorkloadResult) -> Int {
        Int(result.variant?.filter(\.isNumber) ?? "") ?? 0
    }

    private static func atLeast(_ target: String, _ mode: Durability?, _ measured: Double, _ threshold: Double, asRatio: Bool) -> TargetCheck {
        TargetCheck(target: target, durability: mode?.rawValue, measured: asRatio ? Format.ratio(measured) : Format.significant(measured),
                    met: measured >= threshold && measured.isFinite, margin: measured / threshold - 1)
    }

    /// `counting`: the figure is a count, printed as a whole number.
    private static func atMost(_ target: String, _ mode: Durability?, _ measured: Double, _ threshold: Double, unit: String, counting: Bool = false) -> TargetCheck {
        let shown = counting ? Format.grouped(Int(measured.rounded())) : Format.significant(measured, digits: 4)
        return TargetCheck(target: target, durability: mode?.rawValue, measured: shown + unit,
                           met: measured <= threshold, margin: measured > 0 ? threshold / measured - 1 : 0)
    }
}
