import Foundation
import Kache
import KacheWorkloads

/// What every workload needs: the sizes, the inputs, where to write, how often to run.
struct BenchContext {
    let sizes: WorkloadSizes
    let runs: Int
    let workspace: Workspace
    let progress: ProgressLine
    let inputs: WorkloadInputs
    /// How long W4's sorted-array floor may run per capacity and run.
    let floorTimeLimit: Double
    /// `--segment-threshold`, or nil for Kache's default.
    var segmentThreshold: Int? = nil
    /// `--block-compression`, or nil for Kache's default.
    var blockCompression: BlockCompression? = nil
    /// Whether W1 and W8 run RocksDB and SQLite beside Kache (`--no-peers` turns them off).
    var peers = true
    /// `--sample-latencies`: W2's caches time 1 in this many gets, as under a metrics reporter; nil: untimed.
    var latencySampling: Int? = nil

    /// The configuration of a workload in `durability`, with the run's segment threshold.
    func configuration(
        _ durability: Durability, memoryBudget: Int = BenchCache.roomyMemoryBudget, diskBudget: Int? = nil, clock: any WallClock = SystemClock()
    ) -> Kache.Configuration {
        var configuration = BenchCache.configuration(durability, memoryBudget: memoryBudget, diskBudget: diskBudget, clock: clock)
        if let segmentThreshold { configuration.segmentThreshold = segmentThreshold }
        if let blockCompression { configuration.blockCompression = blockCompression }
        return configuration
    }

    /// "W2 read-hot · async · 2 threads · run 2/3", for the progress line.
    func label(_ workload: WorkloadID, _ durability: Durability, threads: Int = 1, variant: String? = nil, run: Int, phase: String? = nil) -> String {
        var parts = ["\(workload.rawValue) \(workload.name)", durability.rawValue]
        if threads > 1 { parts.append("\(threads) threads") }
        if let variant { parts.append(variant) }
        parts.append("run \(run)/\(runs)")
        if let phase { parts.append(phase) }
        return parts.joined(separator: " · ")
    }

    /// Runs a timed loop of `total` operations under the progress line.
    func timed<T>(_ label: String, total: Int, unit: String, _ body: () throws -> T) rethrows -> T {
        progress.begin(label, total: total, unit: unit)
        defer { progress.end() }
        return try body()
    }
}
