import Foundation
import Kache
import KacheWorkloads

/// W2 read-hot: after W1 (and its `save()`, so that no write is pending),
/// gets of keys drawn by Zipf, split between the threads; then the same gets
/// through the `async` API, a task per thread. Floors: the dictionary
/// holding the same values behind one lock, and behind 64 (the floor that
/// scales with threads), read with the same keys.
struct W2ReadHot {
    let context: BenchContext

    func run(_ durability: Durability, threads: Int) throws -> WorkloadResult {
        let keys = context.inputs.readKeys(threads: threads)
        let total = keys.reduce(0) { $0 + $1.count }
        let configuration = context.configuration(durability)
        let progress = context.progress
        var recorder = FigureRecorder()

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w2, durability, threads: threads, run: run, phase: phase) }
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            // As a KacheMetricsReporter would, less the backend's timer (the observer does nothing).
            if let interval = context.latencySampling { cache.sampleLatencies(every: interval) { _, _ in } }
            _ = try context.timed(label("load (W1)"), total: context.sizes.keyCount, unit: "sets") {
                try W1Load.load(cache, keys: context.inputs.loadKeys, values: context.inputs.loadValues, ttl: context.inputs.ttl, progress: progress)
            }
            let reads = try context.timed(label(nil), total: total, unit: "gets") {
                try TargetLoops.reads(cache, keys: keys, progress: progress)
            }
            let latencies = try context.timed(label("latency"), total: total, unit: "gets") {
                try TargetLoops.readLatencies(cache, keys: keys, progress: progress)
            }
            let asyncReads = try context.timed(label("async"), total: total, unit: "gets") {
                try AsyncLoops.reads(cache, keys: keys, progress: progress)
            }
            recorder.record("gets/s", Double(total) / reads.seconds, unit: .perSecond)
            recorder.record("hit ratio", Double(reads.hits) / Double(total), unit: .ratio)
            recorder.record("async gets/s", Double(total) / asyncReads.seconds, unit: .perSecond)
            recorder.compare("async gets/s", with: Baselines.syncAPI, Double(total) / reads.seconds)
            for (name, percentile) in LatencyRecorder.reported {
                recorder.record(name, latencies.microseconds(atPercentile: percentile), unit: .microseconds, higherIsBetter: false)
            }
            try BenchCache.close(cache, in: context.workspace, recording: &recorder)

            let floor = Baselines.loadedDictionary(keys: context.inputs.loadKeys, values: context.inputs.loadValues)
            let floorReads = try context.timed(label("baseline"), total: total, unit: "gets") {
                try TargetLoops.reads(floor, keys: keys, progress: progress)
            }
            let floorLatencies = try context.timed(label("baseline latency"), total: total, unit: "gets") {
                try TargetLoops.readLatencies(floor, keys: keys, progress: progress)
            }
            let sharded = Baselines.loadedShardedDictionary(keys: context.inputs.loadKeys, values: context.inputs.loadValues)
            let shardedReads = try context.timed(label("sharded baseline"), total: total, unit: "gets") {
                try TargetLoops.reads(sharded, keys: keys, progress: progress)
            }
            recorder.compare("gets/s", with: Baselines.dictionary, Double(total) / floorReads.seconds)
            recorder.compare("gets/s", with: Baselines.shardedDictionary, Double(total) / shardedReads.seconds)
            recorder.compare("hit ratio", with: Baselines.dictionary, Double(floorReads.hits) / Double(total))
            for (name, percentile) in LatencyRecorder.reported {
                recorder.compare(name, with: Baselines.dictionary, floorLatencies.microseconds(atPercentile: percentile))
            }
        }
        return WorkloadResult(
            workload: .w2, durability: durability, threads: threads, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [
                BenchCache.budgetNote(configuration), "latencies from a second pass over the same keys, timing every get",
                "async gets/s: a third pass, each thread's keys read by a task of its own with await cache.data(forKey:)",
            ] + (context.latencySampling.map { ["the cache timed 1 in \($0) of each thread's gets (Kache.sampleLatencies)"] } ?? [])
        )
    }
}
