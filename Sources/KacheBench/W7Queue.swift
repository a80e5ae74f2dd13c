import Foundation
import Kache
import KacheWorkloads

/// W7 queue: pushes into a Queue of capacity 10,000 (a full Queue drops its
/// oldest item), and a pop after every second push. Ops/s counts pushes and
/// pops. WORKLOADS.md names no floor for it, and kache-bench runs none.
struct W7Queue {
    let context: BenchContext

    func run(_ durability: Durability) throws -> WorkloadResult {
        let values = context.inputs.queueValues()
        let configuration = context.configuration(durability)
        let capacity = context.sizes.queueCapacity
        let ttl = context.inputs.ttl
        let progress = context.progress
        let operations = values.count + values.count / 2
        var recorder = FigureRecorder()

        for run in 1...context.runs {
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let queue = try cache.queue(named: "w7-queue", capacity: capacity)
            let (popped, seconds) = try context.timed(context.label(.w7, durability, run: run), total: operations, unit: "ops") {
                try MonotonicClock.measure {
                    var popped = 0
                    for index in values.indices {
                        try queue.push(values[index], ttl: ttl)
                        if index & 1 == 1, queue.pop() != nil { popped += 1 }
                        if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 {
                            progress.advance(by: ProgressLine.stride + ProgressLine.stride / 2)
                        }
                    }
                    return popped
                }
            }
            let statistics = queue.statistics
            recorder.record("ops/s", Double(operations) / seconds, unit: .perSecond)
            recorder.record("items popped", Double(popped), unit: .count)
            recorder.record("items dropped", Double(statistics.evictions), unit: .count, higherIsBetter: false)
            try BenchCache.close(cache, in: context.workspace, recording: &recorder)
        }
        return WorkloadResult(
            workload: .w7, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration), "items are 256-byte text values (W4's kind), TTL \(context.sizes.ttlSeconds) s"]
        )
    }
}
