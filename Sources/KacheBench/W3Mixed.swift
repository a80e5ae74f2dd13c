import Foundation
import Kache
import KacheWorkloads

/// W3 mixed: after W1, operations by Zipf, 90 % gets and 10 % sets of fresh
/// 1 KiB text values, split between the threads. The latency pass replays
/// the same operations after a `save()` (so each pass starts with no write
/// pending), and so does the async pass, a task per thread. Floors: the
/// dictionary behind one lock and behind 64, driven with the same operations.
struct W3Mixed {
    let context: BenchContext

    func run(_ durability: Durability, threads: Int) throws -> WorkloadResult {
        let operations = context.inputs.mixedOperations(threads: threads)
        let total = operations.reduce(0) { $0 + $1.count }
        let ttl = context.inputs.ttl
        let configuration = context.configuration(durability)
        let progress = context.progress
        var recorder = FigureRecorder()

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w3, durability, threads: threads, run: run, phase: phase) }
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            _ = try context.timed(label("load (W1)"), total: context.sizes.keyCount, unit: "sets") {
                try W1Load.load(cache, keys: context.inputs.loadKeys, values: context.inputs.loadValues, ttl: ttl, progress: progress)
            }
            let pass = try context.timed(label(nil), total: total, unit: "ops") {
                try TargetLoops.mixed(cache, operations: operations, ttl: ttl, progress: progress)
            }
            try cache.save()
            let latencies = try context.timed(label("latency"), total: total, unit: "ops") {
                try TargetLoops.mixedLatencies(cache, operations: operations, ttl: ttl, progress: progress)
            }
            try cache.save()
            let asyncPass = try context.timed(label("async"), total: total, unit: "ops") {
                try AsyncLoops.mixed(cache, operations: operations, ttl: ttl, progress: progress)
            }
            recorder.record("ops/s", Double(total) / pass.seconds, unit: .perSecond)
            recorder.record("async ops/s", Double(total) / asyncPass.seconds, unit: .perSecond)
            recorder.compare("async ops/s", with: Baselines.syncAPI, Double(total) / pass.seconds)
            for (name, percentile) in LatencyRecorder.reported {
                recorder.record(name, latencies.microseconds(atPercentile: percentile), unit: .microseconds, higherIsBetter: false)
            }
            try BenchCache.close(cache, in: context.workspace, recording: &recorder)

            let floor = Baselines.loadedDictionary(keys: context.inputs.loadKeys, values: context.inputs.loadValues)
            let floorPass = try context.timed(label("baseline"), total: total, unit: "ops") {
                try TargetLoops.mixed(floor, operations: operations, ttl: ttl, progress: progress)
            }
            let floorLatencies = try context.timed(label("baseline latency"), total: total, unit: "ops") {
                try TargetLoops.mixedLatencies(floor, operations: operations, ttl: ttl, progress: progress)
            }
            let sharded = Baselines.loadedShardedDictionary(keys: context.inputs.loadKeys, values: context.inputs.loadValues)
            let shardedPass = try context.timed(label("sharded baseline"), total: total, unit: "ops") {
                try TargetLoops.mixed(sharded, operations: operations, ttl: ttl, progress: progress)
            }
            recorder.compare("ops/s", with: Baselines.dictionary, Double(total) / floorPass.seconds)
            recorder.compare("ops/s", with: Baselines.shardedDictionary, Double(total) / shardedPass.seconds)
            for (name, percentile) in LatencyRecorder.reported {
                recorder.compare(name, with: Baselines.dictionary, floorLatencies.microseconds(atPercentile: percentile))
            }
        }
        return WorkloadResult(
            workload: .w3, durability: durability, threads: threads, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [
                BenchCache.budgetNote(configuration), "latencies from a second pass replaying the same operations, timing each",
                "async ops/s: a third pass replaying them, each thread's list run by a task of its own through the async API",
            ]
        )
    }
}
