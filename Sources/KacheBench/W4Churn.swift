import Foundation
import Kache
import KacheWorkloads

/// W4 churn: sets of 256-byte text values into a Pool, keys by Zipf over many
/// more keys than it holds, TTLs uniform in 1…600 s, on a simulated clock
/// (`ManualClock`) that advances 1 ms per set. Run at a tenth of the
/// standard capacity, at it, and at ten times it (1,000, 10,000 and 100,000),
/// so that the cost of a full Pool's eviction shows as capacity grows. Floor:
/// the 2012 bookkeeping (an array sorted by expiry) with the same keys and
/// TTLs on the same clock, which does no I/O and keeps no values.
///
/// In the disk modes that is a million file writes (most of them, in `async`,
/// found stale and skipped by the writer, since the key left the Pool first).
struct W4Churn {
    let context: BenchContext

    /// How a result's note begins when the sorted-array floor ran out of time (the charts look for it).
    static let floorStoppedNote = "the sorted-array floor stopped"

    func capacities() -> [Int] {
        let standard = context.sizes.churnCapacity
        return [max(1, standard / 10), standard, standard * 10]
    }

    func run(_ durability: Durability) throws -> [WorkloadResult] {
        let operations = context.inputs.churnOperations()
        return try capacities().map { try run(durability, capacity: $0, operations: operations) }
    }

    private func run(_ durability: Durability, capacity: Int, operations: ChurnOperations) throws -> WorkloadResult {
        let total = operations.keys.count
        let variant = "capacity \(Format.grouped(capacity))"
        let progress = context.progress
        var recorder = FigureRecorder()
        var notes: [String] = []
        var memoryBudget = 0

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w4, durability, variant: variant, run: run, phase: phase) }
            let clock = ManualClock()
            let configuration = context.configuration(durability, clock: clock)
            memoryBudget = configuration.memoryBudget
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let pool = try cache.pool(named: "w4-churn", capacity: capacity)
            let seconds = try context.timed(label(nil), total: total, unit: "sets") {
                try Self.churn(pool, clock: clock, operations: operations, progress: progress)
            }
            let statistics = pool.statistics
            recorder.record("sets/s", Double(total) / seconds, unit: .perSecond)
            recorder.record("evictions", Double(statistics.evictions), unit: .count, higherIsBetter: false)
            recorder.record("expirations", Double(statistics.expirations), unit: .count, higherIsBetter: false)
            try BenchCache.close(cache, in: context.workspace, recording: &recorder)

            let floor = context.timed(label("baseline"), total: total, unit: "sets") {
                Baselines.sortedArrayChurn(operations, capacity: capacity, timeLimit: context.floorTimeLimit, progress: progress)
            }
            recorder.compare("sets/s", with: Baselines.sortedArray, Double(floor.sets) / floor.seconds)
            if floor.sets == total {
                recorder.compare("evictions", with: Baselines.sortedArray, Double(floor.evictions))
                recorder.compare("expirations", with: Baselines.sortedArray, Double(floor.expirations))
            } else if run == 1 {
                notes.append("\(Self.floorStoppedNote) after \(Format.grouped(floor.sets)) of \(Format.grouped(total)) sets "
                    + "(--floor-time-limit \(Format.significant(context.floorTimeLimit)) s); its rate is over the sets it did, while it was still filling, so it flatters the floor")
            }
        }
        notes.insert("memory budget \(Format.bytes(Double(memoryBudget))); simulated clock, 1 ms per set", at: 0)
        return WorkloadResult(
            workload: .w4, variant: variant, durability: durability, threads: 1, memoryBudget: memoryBudget,
            figures: recorder.figures, notes: notes
        )
    }

    /// Sets every value into the Pool, advancing the clock 1 ms after each; returns the seconds.
    static func churn(_ pool: Kache.Pool, clock: ManualClock, operations: ChurnOperations, progress: ProgressLine) throws -> Double {
        try MonotonicClock.measure {
            for index in operations.keys.indices {
                try pool.set(operations.values[index], forKey: operations.keys[index], ttl: .seconds(operations.ttlSeconds[index]))
                clock.advance(by: .milliseconds(1))
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
        }.seconds
    }
}
