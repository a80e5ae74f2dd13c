import Foundation
import Kache
import KacheWorkloads

/// W9 hit ratio: each trace of ``HitRatioTrace`` replayed cache-aside on
/// Kache (a get; on a miss, a set of a 1 KiB text value with the request's
/// TTL), on a ``ManualClock`` that moves 1 ms per request, at budgets of 1 %
/// and 10 % of the N keys' values, in two tiers:
///
/// - **memory tier**: `memory` durability, the memory budget that many
///   values at the charge `Configuration.memoryBudget` documents (the value's
///   bytes + 96 past 14 bytes: 1,120 bytes for 1 KiB);
/// - **disk budget**: a disk mode (`async` unless `--durability` says), the
///   disk budget that many entries at what one costs the budget, measured
///   (``DiskCost``), and the memory tier's memory budget. Every entry also
///   lives on disk, so an entry the disk budget evicts leaves memory too.
///   (A memory budget of a tenth as many values made the run several times
///   slower: the memory tier's hand kept passing over values not yet written, since
///   the write-behind queue counts against the memory budget.)
///
/// Baselines: FIFO, LRU, S3-FIFO and earliest expiry simulated over the same trace, holding
/// the same number of objects (all values are 1 KiB). They are
/// deterministic, so they run once per trace and budget and pair with every run.
struct W9HitRatio {
    let context: BenchContext

    /// A tier of Kache that W9 measures.
    enum Tier: String {
        case memory = "memory tier"
        case disk = "disk budget"
    }

    /// The budgets, in percent of the N keys' values.
    static let budgetPercents = [1, 10]

    /// "(a) Zipf · memory tier · 1 % budget (1,000 values)": the result's variant.
    static func variant(_ kind: HitRatioTrace.Kind, _ tier: Tier, percent: Int, capacity: Int) -> String {
        "\(kind.title) · \(tier.rawValue) · \(percent) % budget (\(Format.grouped(capacity)) values)"
    }

    /// Runs every trace and budget: the memory tier if `memory` is true, the
    /// disk budget in each of `diskModes`.
    func run(memory: Bool, diskModes: [Durability]) throws -> [WorkloadResult] {
        var results: [WorkloadResult] = []
        for kind in HitRatioTrace.Kind.allCases {
            let trace = context.inputs.hitRatioTrace(kind)
            let diskCosts = try diskModes.map { try DiskCost.measure($0, on: trace, context: context) }
            for percent in Self.budgetPercents {
                let capacity = max(2, context.sizes.keyCount * percent / 100)
                let baselines = context.timed("W9 hit ratio · \(kind.title) · \(percent) % · baselines", total: 4, unit: "policies") {
                    Self.baselineRatios(trace, capacity: capacity)
                }
                if memory {
                    results.append(try measure(trace, .memory, tier: .memory, percent: percent, capacity: capacity, baselines: baselines))
                }
                for (mode, cost) in zip(diskModes, diskCosts) {
                    results.append(try measure(trace, mode, tier: .disk, percent: percent, capacity: capacity, baselines: baselines, diskCost: cost))
                }
            }
        }
        return results
    }

    /// The hit ratio of each baseline on `trace`, holding `capacity` objects.
    static func baselineRatios(_ trace: HitRatioTrace, capacity: Int) -> [(name: String, ratio: Double)] {
        var fifo = FIFOSimulator(capacity: capacity)
        var lru = LRUSimulator(capacity: capacity)
        var s3fifo = S3FIFOSimulator(capacity: capacity)
        var earliestExpiry = EarliestExpirySimulator(capacity: capacity)
        let requests = Double(max(trace.count, 1))
        return [
            (Baselines.fifo, Double(trace.hits(replayingOn: &fifo)) / requests),
            (Baselines.lru, Double(trace.hits(replayingOn: &lru)) / requests),
            (Baselines.s3fifo, Double(trace.hits(replayingOn: &s3fifo)) / requests),
            (Baselines.earliestExpiry, Double(trace.hits(replayingOn: &earliestExpiry)) / requests),
        ]
    }

    private func measure(
        _ trace: HitRatioTrace, _ durability: Durability, tier: Tier, percent: Int, capacity: Int,
        baselines: [(name: String, ratio: Double)], diskCost: DiskCost? = nil
    ) throws -> WorkloadResult {
        let valueBytes = context.sizes.textValueBytes
        // The charge Configuration.memoryBudget documents; the engine's own
        // function is internal, and the bench uses the public API only.
        let memoryCharge = valueBytes > 14 ? valueBytes + 96 : valueBytes
        let variant = Self.variant(trace.kind, tier, percent: percent, capacity: capacity)
        var recorder = FigureRecorder()
        var configuration = context.configuration(.memory)
        let budgetDetail: String
        switch tier {
        case .memory:
            budgetDetail = " (\(Format.grouped(capacity)) values at \(Format.grouped(memoryCharge)) bytes each, the documented charge)"
        case .disk:
            guard let diskCost else { preconditionFailure("the disk budget's run needs the measured cost of an entry") }
            budgetDetail = " (\(Format.grouped(capacity)) entries at \(Format.grouped(diskCost.bytesPerEntry)) bytes each, measured, "
                + "+ \(Format.bytes(Double(diskCost.emptyBytes))) for the empty directory; memory: as many values)"
        }
        for run in 1...context.runs {
            let clock = ManualClock()
            configuration = context.configuration(
                durability, memoryBudget: capacity * memoryCharge,
                diskBudget: diskCost?.budget(forEntries: capacity), clock: clock
            )
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let label = context.label(.w9, durability, variant: variant, run: run)
            let hits = try context.timed(label, total: trace.count, unit: "requests") {
                try Self.replay(trace, on: cache, clock: clock, valueBytes: valueBytes, seed: context.inputs.seed, progress: context.progress)
            }
            let statistics = cache.statistics
            recorder.record("hit ratio", Double(hits) / Double(max(trace.count, 1)), unit: .ratio)
            for baseline in baselines { recorder.compare("hit ratio", with: baseline.name, baseline.ratio) }
            if tier == .disk {
                recorder.record("budget evictions", Double(statistics.budgetEvictions), unit: .count, higherIsBetter: false)
                recorder.record("disk hits", Double(statistics.diskHits), unit: .count)
                // A few fewer than the budget's: the room held for the index
                // grows in whole blocks, and records block differently in the churn.
                recorder.record("entries at the end", Double(statistics.entries), unit: .count)
                // What eviction costs the disk: records written (compaction's
                // copies included) over the values set; records evicted
                // before the writer reached them are never written.
                recorder.record("bytes written ÷ bytes set", Double(statistics.bytesWritten) / (Double(max(statistics.sets, 1)) * Double(valueBytes)),
                                unit: .ratio, higherIsBetter: false)
                recorder.record("compactions", Double(statistics.compactions), unit: .count, higherIsBetter: false)
            } else {
                recorder.record("memory evictions", Double(statistics.memoryEvictions), unit: .count, higherIsBetter: false)
            }
            recorder.record("expirations", Double(statistics.expirations), unit: .count, higherIsBetter: false)
            try BenchCache.close(cache, in: context.workspace, recording: &recorder)
        }
        let notes = [
            BenchCache.budgetNote(configuration) + budgetDetail,
            "baselines hold \(Format.grouped(capacity)) objects; an expired object is a miss and is set afresh; simulated clock, 1 ms per request",
        ]
        return WorkloadResult(
            workload: .w9, variant: variant, durability: durability, threads: 1,
            memoryBudget: configuration.memoryBudget, diskBudget: configuration.diskBudget,
            figures: recorder.figures, notes: notes
        )
    }

    /// Replays `trace` on `cache`, cache-aside, moving `clock` 1 ms after each
    /// request; returns the hits. Values come from the trace's value stream.
    static func replay(_ trace: HitRatioTrace, on cache: Kache, clock: ManualClock, valueBytes: Int, seed: UInt64, progress: ProgressLine) throws -> Int {
        var values = HitRatioTrace.valueStream(seed: seed)
        var hits = 0
        for index in trace.keys.indices {
            let keyIndex = Int(trace.keys[index])
            let key = WorkloadKeys.key(keyIndex)
            if cache.data(forKey: key) != nil {
                hits += 1
            } else {
                let value = WorkloadValues.text(index: keyIndex, byteCount: valueBytes, using: &values)
                try cache.set(value, forKey: key, ttl: .seconds(Int64(trace.ttlSeconds[index])))
            }
            clock.advance(by: .milliseconds(HitRatioTrace.millisecondsPerRequest))
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        return hits
    }
}

extension W9HitRatio {
    /// What one W9 entry costs the disk budget, measured rather than
    /// estimated (it depends on LZ4, the record format and the segment
    /// layout, which change): an empty cache in the mode, then the entries of
    /// the trace's first `sample` keys set as its replay sets them (values,
    /// order and TTLs) and saved; the growth of `allocatedBytes +
    /// reservedBytes` (what the budget limits) over `sample`. The trace's own
    /// entries, since neighbouring values compress together: keys 0 to 1,999
    /// in order took 7 % less than the trace's (142 bytes a record against
    /// 153), and the budget then held 5 % fewer entries than its size.
    struct DiskCost {
        /// What the empty directory counts against the budget.
        var emptyBytes: Int
        /// What each entry adds, rounded up.
        var bytesPerEntry: Int

        static let sample = 2_000

        /// The budget that holds `entries` entries.
        func budget(forEntries entries: Int) -> Int {
            emptyBytes + entries * bytesPerEntry
        }

        static func measure(_ durability: Durability, on trace: HitRatioTrace, context: BenchContext) throws -> DiskCost {
            let cache = try BenchCache.openEmpty(context.configuration(durability, clock: ManualClock()), in: context.workspace)
            defer { try? cache.close() }
            try cache.save()
            let empty = cache.statistics
            var values = HitRatioTrace.valueStream(seed: context.inputs.seed)
            var seen = Set<Int32>()
            for index in trace.keys.indices where seen.count < sample && seen.insert(trace.keys[index]).inserted {
                let keyIndex = Int(trace.keys[index])
                let value = WorkloadValues.text(index: keyIndex, byteCount: context.sizes.textValueBytes, using: &values)
                try cache.set(value, forKey: WorkloadKeys.key(keyIndex), ttl: .seconds(Int64(trace.ttlSeconds[index])))
            }
            try cache.save()
            let full = cache.statistics
            let emptyBytes = empty.allocatedBytes + empty.reservedBytes
            let grown = full.allocatedBytes + full.reservedBytes - emptyBytes
            let entries = max(seen.count, 1)
            return DiskCost(emptyBytes: emptyBytes, bytesPerEntry: (grown + entries - 1) / entries)
        }
    }
}
