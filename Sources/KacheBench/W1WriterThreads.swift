import Foundation
import Kache
import KacheWorkloads

/// W1 on several writer threads, in `fsync` durability: each thread sets its
/// share of the keys (thread 0 the first, in index order), and the clock
/// stops when the last thread is done and a final `save()` returns.
///
/// In `fsync` a set returns only once its bytes are on the device, so with
/// one writer the disk's flush time bounds the rate whatever the layout;
/// with several, writers whose records share a segment can share a flush
/// (group commit), which entries in files of their own can't. Its baseline is
/// therefore the same run with `segmentThreshold = 0` (``Baselines/filePerEntry``),
/// measured right before it in each round.
struct W1WriterThreads {
    let context: BenchContext

    static func variant(threads: Int) -> String { "\(threads) writer threads" }

    func run(_ durability: Durability, threads: Int) throws -> WorkloadResult {
        let keys = context.inputs.loadKeys
        let values = context.inputs.loadValues
        let configuration = context.configuration(durability)
        var filePerEntry = configuration
        filePerEntry.segmentThreshold = 0
        let variant = Self.variant(threads: threads)
        let count = Double(keys.count)
        var recorder = FigureRecorder()

        for run in 1...context.runs {
            let baseline = try measure(filePerEntry, threads: threads, label: context.label(.w1, durability, variant: variant, run: run, phase: "baseline"))
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let (visible, durable) = try context.timed(context.label(.w1, durability, variant: variant, run: run), total: keys.count, unit: "sets") {
                try Self.load(cache, keys: keys, values: values, ttl: context.inputs.ttl, threads: threads, progress: context.progress)
            }
            recorder.record("sets/s", count / visible, unit: .perSecond)
            recorder.compare("sets/s", with: Baselines.filePerEntry, count / baseline.visible)
            recorder.record("durable sets/s", count / durable, unit: .perSecond)
            recorder.compare("durable sets/s", with: Baselines.filePerEntry, count / baseline.durable)
            let usage = try BenchCache.close(cache, in: context.workspace, recording: &recorder)
            BenchCache.recordFootprint(usage, rawBytes: W1Load.rawBytes(values), into: &recorder)
        }
        return WorkloadResult(
            workload: .w1, variant: variant, durability: durability, threads: threads, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration), "the keys split into \(threads) runs of consecutive indices, one per thread"]
        )
    }

    /// One untimed-setup, timed-load round of `configuration` on an empty directory; the cache is closed after.
    private func measure(_ configuration: Kache.Configuration, threads: Int, label: String) throws -> (visible: Double, durable: Double) {
        let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
        let seconds = try context.timed(label, total: context.inputs.loadKeys.count, unit: "sets") {
            try Self.load(cache, keys: context.inputs.loadKeys, values: context.inputs.loadValues, ttl: context.inputs.ttl,
                          threads: threads, progress: context.progress)
        }
        try cache.close()
        return seconds
    }

    /// Sets every value, each thread its share in index order, then saves;
    /// returns the seconds to the last set of the slowest thread and to the end of the save.
    static func load(_ cache: Kache, keys: [String], values: [Data], ttl: Duration, threads: Int, progress: ProgressLine) throws -> (visible: Double, durable: Double) {
        let shares = (0..<threads).map { WorkloadInputs.share(of: keys.count, thread: $0, threads: threads) }
        let starts = shares.indices.map { thread in shares[..<thread].reduce(0, +) }
        let (_, visible) = try Workers.run(count: threads) { thread in
            for index in starts[thread]..<(starts[thread] + shares[thread]) {
                try cache.set(values[index], forKey: keys[index], ttl: ttl)
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
        }
        let saved = try MonotonicClock.measure { try cache.save() }.seconds
        return (visible, visible + saved)
    }
}
