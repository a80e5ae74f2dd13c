import Foundation
import Kache
import KacheWorkloads

/// W5 restart: after W1 and `save()`, close the cache, open the same
/// directory anew (the time to ready is that of the initializer), then get
/// every key once in index order. Keys lost are the keys that read nil, and
/// must be 0; values that read back different bytes are counted too. Floor
/// for the cold gets: reading the same values' raw files, each opened,
/// measured and read. Also what the directory costs after the reads and
/// close: allocated bytes ÷ raw bytes set, and files. Only in the disk modes: `memory` keeps nothing across
/// a restart.
struct W5Restart {
    let context: BenchContext

    func run(_ durability: Durability) throws -> WorkloadResult? {
        guard durability != .memory else { return nil }
        let keys = context.inputs.loadKeys
        let values = context.inputs.loadValues
        let configuration = context.configuration(durability)
        let progress = context.progress
        var recorder = FigureRecorder()

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w5, durability, run: run, phase: phase) }
            let loaded = try BenchCache.openEmpty(configuration, in: context.workspace)
            _ = try context.timed(label("load (W1)"), total: keys.count, unit: "sets") {
                try W1Load.load(loaded, keys: keys, values: values, ttl: context.inputs.ttl, progress: progress)
            }
            try loaded.close()

            ResidentMemory.resetPeak()
            let (cache, ready) = try MonotonicClock.measure {
                try Kache(directory: context.workspace.cacheDirectory, configuration: configuration)
            }
            var read: [Data?] = []
            read.reserveCapacity(keys.count)
            let seconds = context.timed(label(nil), total: keys.count, unit: "gets") {
                MonotonicClock.measure {
                    for index in keys.indices {
                        read.append(cache.data(forKey: keys[index]))
                        if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
                    }
                }.seconds
            }
            recorder.record("ms to ready", ready * 1000, unit: .milliseconds, higherIsBetter: false)
            recorder.record("cold gets/s", Double(keys.count) / seconds, unit: .perSecond)
            recorder.record("keys lost", Double(read.filter { $0 == nil }.count), unit: .count, higherIsBetter: false)
            recorder.record("wrong values", Double(zip(read, values).filter { $0 != nil && $0 != $1 }.count), unit: .count, higherIsBetter: false)
            let usage = try BenchCache.close(cache, in: context.workspace, recording: &recorder)
            BenchCache.recordFootprint(usage, rawBytes: W1Load.rawBytes(values), into: &recorder)

            let folder = try context.workspace.resetFloor()
            let floor = try context.timed(label("baseline"), total: keys.count, unit: "gets") {
                try Baselines.fileReads(keys: keys, values: values, folder: folder, progress: progress)
            }
            precondition(floor.wrong == 0, "the file floor read back \(floor.wrong) wrong values")
            recorder.compare("cold gets/s", with: Baselines.fileRead, Double(keys.count) / floor.seconds)
            _ = try context.workspace.resetFloor()
        }
        return WorkloadResult(
            workload: .w5, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration), "\(Format.grouped(keys.count)) entries; the files are in the page cache, as after a process restart"]
        )
    }
}
