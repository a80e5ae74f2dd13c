import Foundation
import Kache
import KacheWorkloads

/// W4d churn on disk: W4's sets (keys by Zipf over many more keys than the
/// Pool holds, TTLs 1…600 s, a simulated clock advancing 1 ms per set) into a
/// Pool of the standard capacity, in a disk mode, where every set writes a
/// record and every replacement, eviction and expiry leaves a dead one.
///
/// Figures: sets/s, beside the same churn in `memory` durability
/// (``Baselines/churnInMemory``), run right before it, so the ratio is what
/// the disk costs; the write amplification, the bytes Kache handed to the
/// file system for entries (`Statistics.bytesWritten`, after a final
/// `save()` so that no queued write is left out) over the bytes of the
/// values set; and dead bytes ÷ segment bytes at the end, which has no value
/// (printed "–") while there are no segment files. Only in the disk modes.
struct W4dChurnOnDisk {
    let context: BenchContext

    static let poolName = "w4d-churn"

    func run(_ durability: Durability) throws -> WorkloadResult? {
        guard durability != .memory else { return nil }
        let operations = context.inputs.churnOperations()
        let capacity = context.sizes.churnCapacity
        let total = operations.keys.count
        let bytesSet = Double(operations.values.reduce(0) { $0 + $1.count })
        var recorder = FigureRecorder()
        // Each run gets a fresh simulated clock; this one is for the notes.
        let configuration = context.configuration(durability)

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w4d, durability, run: run, phase: phase) }
            let inMemory = try churn(context.configuration(.memory, clock: ManualClock()), capacity: capacity, operations: operations, label: label("baseline"))
            try inMemory.cache.close()

            let onDisk = try churn(context.configuration(durability, clock: ManualClock()), capacity: capacity, operations: operations, label: label(nil))
            try onDisk.cache.save()
            let statistics = onDisk.cache.statistics
            recorder.record("sets/s", Double(total) / onDisk.seconds, unit: .perSecond)
            recorder.compare("sets/s", with: Baselines.churnInMemory, Double(total) / inMemory.seconds)
            recorder.record("write amplification", Double(statistics.bytesWritten) / bytesSet, unit: .ratio, higherIsBetter: false)
            if statistics.segmentBytes > 0 {
                recorder.record(Self.deadFigure, Double(statistics.deadBytes) / Double(statistics.segmentBytes), unit: .ratio, higherIsBetter: false)
            } else {
                recorder.declare(Self.deadFigure, unit: .ratio, higherIsBetter: false)
            }
            recorder.record("segment files", Double(statistics.segmentFiles), unit: .count, higherIsBetter: false)
            recorder.record("segment bytes", Double(statistics.segmentBytes), unit: .bytes, higherIsBetter: false)
            try BenchCache.close(onDisk.cache, in: context.workspace, recording: &recorder)
        }
        return WorkloadResult(
            workload: .w4d, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration) + "; simulated clock, 1 ms per set",
                    "\(Format.bytes(bytesSet)) set; write amplification counts the bytes of records and files, headers included, after LZ4"]
        )
    }

    /// The figure that has no value while there are no segment files.
    static let deadFigure = "dead ÷ segment bytes"

    /// Opens an empty cache with `configuration` (whose clock must be a
    /// fresh `ManualClock`) and runs the churn into its Pool; the cache is left open.
    private func churn(_ configuration: Kache.Configuration, capacity: Int, operations: ChurnOperations, label: String) throws -> (cache: Kache, seconds: Double) {
        guard let clock = configuration.clock as? ManualClock else { preconditionFailure("W4d runs on a simulated clock") }
        let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
        let pool = try cache.pool(named: Self.poolName, capacity: capacity)
        let seconds = try context.timed(label, total: operations.keys.count, unit: "sets") {
            try W4Churn.churn(pool, clock: clock, operations: operations, progress: context.progress)
        }
        return (cache, seconds)
    }
}
