import ArgumentParser
import Foundation
import Kache
import KacheWorkloads

/// `kache-bench run`: runs the chosen workloads in the chosen durability
/// modes, each the chosen number of times with its baselines, then prints the
/// table and writes the JSON.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the standard workloads (WORKLOADS.md) and their baselines.",
        discussion: """
            Examples:
              kache-bench run --quick                          a smoke run of every workload, a few seconds each
              kache-bench run --workload W2,W3 --threads 1,2   the read workloads on one and two threads
              kache-bench run --workload W1 --durability sync,async --json w1.json
              kache-bench run --workload W1 --durability fsync --threads 2   W1 on 2 writer threads beside a file per entry
              kache-bench run --workload W8,W4d --segment-threshold 0      the small-entry workloads with today's layout
              kache-bench run --workload W1,W8                 beside RocksDB and SQLite on the same sets (--no-peers: without)
              kache-bench run --quick --json run.json --charts charts   the figures, and the charts drawn from them
              kache-bench run --workload W9 --runs 1           hit ratios beside FIFO, LRU, S3-FIFO and earliest expiry (memory tier, and disk budget in async)
              kache-bench run --tier redis --workload W1,W2,W3,W7   through a tiered cache on a Redis Cluster
            """
    )

    @OptionGroup var options: RunOptions
    @OptionGroup var tier: RedisTierOptions

    func run() throws {
        if tier.tier == .redis { return try RedisTierRun(options: options, tier: tier).run() }
        let workspace = try Workspace(keeping: options.dir)
        defer { workspace.finish() }
        let progress = ProgressLine(shown: ProgressLine.shouldShow(quiet: options.quiet))
        defer { progress.stop() }

        let started = Date()
        let machine = MachineDescription.current(directory: workspace.cacheDirectory, scratch: try workspace.scratchFolder())
        let sizes = options.sizes
        let context = BenchContext(
            sizes: sizes, runs: options.runs, workspace: workspace, progress: progress,
            inputs: WorkloadInputs(sizes: sizes, seed: options.seed), floorTimeLimit: options.floorTimeLimit,
            segmentThreshold: options.segmentThreshold, blockCompression: options.blockCompression, peers: options.peers,
            latencySampling: options.sampleLatencies
        )
        var results: [WorkloadResult] = []
        for durability in options.durability.modes {
            for workload in options.workloads.workloads where workload != .w9 {
                results += try Self.run(workload, durability, threadCounts: options.threads.counts, context: context)
            }
        }
        if options.workloads.workloads.contains(.w9) {
            // W9 measures two tiers: the memory tier in `memory` durability
            // whatever the modes chosen, and the disk budget in each disk mode.
            results += try W9HitRatio(context: context).run(memory: true, diskModes: options.durability.modes.filter { $0 != .memory })
        }

        let report = BenchReport(
            date: started, command: ["kache-bench"] + CommandLine.arguments.dropFirst(),
            options: BenchReport.Options(
                workloads: options.workloads.workloads.map(\.rawValue), threads: options.threads.counts,
                durability: options.durability.modes.map(\.rawValue), runs: options.runs, quick: options.quick,
                seed: options.seed, segmentThreshold: options.segmentThreshold, blockCompression: options.blockCompression?.rawValue,
                directory: workspace.cacheDirectory.path, directoryKept: workspace.keepsCache, peers: options.peers
            ),
            machine: machine, sizes: sizes, results: results
        )
        progress.stop()
        print(ReportTable.render(report))
        if let json = options.json { try report.write(to: json) }
        if let folder = options.charts {
            let name = options.json.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "this run"
            ChartCommand.report(try BenchCharts.write([ChartSource(name: name, report: report)], to: folder))
        }
    }

    /// Runs one workload in one mode: W2 and W3 at each thread count, the
    /// others on 1 thread (W1 in fsync also at each count above 1).
    static func run(_ workload: WorkloadID, _ durability: Durability, threadCounts: [Int], context: BenchContext) throws -> [WorkloadResult] {
        switch workload {
        case .w1:
            // Writer threads compete for the disk's flushes only in fsync, where group commit is the point.
            [try W1Load(context: context).run(durability)]
                + (durability == .fsync ? try threadCounts.filter { $0 > 1 }.map { try W1WriterThreads(context: context).run(durability, threads: $0) } : [])
        case .w2: try threadCounts.map { try W2ReadHot(context: context).run(durability, threads: $0) }
        case .w3: try threadCounts.map { try W3Mixed(context: context).run(durability, threads: $0) }
        case .w4: try W4Churn(context: context).run(durability)
        case .w5: [try W5Restart(context: context).run(durability)].compactMap { $0 }
        case .w6: try W6Blobs(context: context).run(durability)
        case .w7: [try W7Queue(context: context).run(durability)]
        case .w8: [try W8ManySmall(context: context).run(durability)].compactMap { $0 }
        case .w4d: [try W4dChurnOnDisk(context: context).run(durability)].compactMap { $0 }
        case .w9: try W9HitRatio(context: context).run(memory: durability == .memory, diskModes: durability == .memory ? [] : [durability])
        }
    }
}
