import Foundation
import Kache
import KacheWorkloads

/// The disk-budget variant of W6: the same blobs and reads, with
/// `Configuration.diskBudget` at half the bytes set, so that the second half
/// of the sets each evicts the entry expiring earliest (here, the oldest).
/// Its writes are read against the unbounded run of the same round, which is
/// its baseline (target ≥ 0.8×); about half the reads miss, by design.
struct W6DiskBudget {
    let context: BenchContext
    let operations: BlobOperations

    static let variant = "disk budget ½"
    static let unboundedBaseline = "W6 without a disk budget"

    var diskBudget: Int { operations.bytesSet / 2 }

    func configuration(_ durability: Durability) -> Kache.Configuration {
        context.configuration(durability, memoryBudget: W6Blobs.memoryBudget(bytesSet: operations.bytesSet), diskBudget: diskBudget)
    }

    /// Runs the variant once and records it beside `unbounded`, the run before it.
    func measure(_ durability: Durability, run: Int, unbounded: W6Blobs.Pass, into recorder: inout FigureRecorder) throws {
        let label = context.label(.w6, durability, variant: Self.variant, run: run)
        let cache = try BenchCache.openEmpty(configuration(durability), in: context.workspace)
        let pass = try W6Blobs.measure(cache, operations, context: context, label: label)
        let statistics = cache.statistics

        recorder.record("MB/s written", pass.bytesSet / 1e6 / pass.setSeconds, unit: .megabytesPerSecond)
        recorder.compare("MB/s written", with: Self.unboundedBaseline, unbounded.bytesSet / 1e6 / unbounded.setSeconds)
        recorder.record("durable MB/s written", pass.bytesSet / 1e6 / pass.savedSeconds, unit: .megabytesPerSecond)
        recorder.compare("durable MB/s written", with: Self.unboundedBaseline, unbounded.bytesSet / 1e6 / unbounded.savedSeconds)
        recorder.record("MB/s read", pass.bytesRead / 1e6 / pass.readSeconds, unit: .megabytesPerSecond)
        recorder.record("hit ratio", Double(pass.hits) / Double(pass.reads), unit: .ratio)
        recorder.record("budget evictions", Double(statistics.budgetEvictions), unit: .count, higherIsBetter: false)
        recorder.record("allocated ÷ disk budget", Double(statistics.allocatedBytes) / Double(diskBudget), unit: .ratio, higherIsBetter: false)
        try BenchCache.close(cache, in: context.workspace, recording: &recorder)
    }

    func result(_ durability: Durability, figures: [Figure]) -> WorkloadResult {
        let configuration = configuration(durability)
        return WorkloadResult(
            workload: .w6, variant: Self.variant, durability: durability, threads: 1,
            memoryBudget: configuration.memoryBudget, diskBudget: diskBudget, figures: figures,
            notes: [BenchCache.budgetNote(configuration) + " (half the bytes set); about half the reads miss, by design"]
        )
    }
}
