import Dispatch
import Foundation
import Kache
import KacheRedis
import KacheWorkloads
import NIOCore
import NIOPosix
import Synchronization

/// `kache-bench run --tier redis`: W1, W2, W3 and W7 through a ``TieredCache``
/// on a Redis Cluster, each run beside `redis-benchmark --cluster` on the same
/// cluster with the same value size: `-P 16` as the throughput floor and
/// `-c 1 -P 1` as the round-trip floor, measured in the same run; with
/// `--redis-tls`, client and redis-benchmark alike over TLS.
struct RedisTierRun {
    let options: RunOptions
    let tier: RedisTierOptions

    func run() throws {
        // Before any task exists: the hook decides where every task runs, from the first.
        if tier.redisExecutor == .nio, !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
            throw BenchClusterError("--redis-executor nio: SwiftNIO could not install its event loops as Swift's global executor")
        }
        let workspace = try Workspace(keeping: options.dir)
        defer { workspace.finish() }
        let progress = ProgressLine(shown: ProgressLine.shouldShow(quiet: options.quiet))
        defer { progress.stop() }
        let started = Date()
        let machine = MachineDescription.current(directory: workspace.cacheDirectory, scratch: try workspace.scratchFolder())
        let sizes = options.sizes
        let context = BenchContext(
            sizes: sizes, runs: options.runs, workspace: workspace, progress: progress,
            inputs: WorkloadInputs(sizes: sizes, seed: options.seed), floorTimeLimit: options.floorTimeLimit
        )
        let cluster = try BenchCluster.start(seeds: tier.redisSeeds, tls: tier.redisTLS, certificates: tier.redisTLSCertificates)
        defer { cluster.stop() }
        let chosen = options.workloads.workloads.filter { [.w1, .w2, .w3, .w7].contains($0) }
        let workloads = RedisTierWorkloads(
            context: context, cluster: cluster, tasks: tier.redisTasks, threadCounts: options.threads.counts, tracking: tier.redisTracking,
            executor: tier.redisExecutor
        )
        let results = try Self.blocking { try await workloads.run(chosen) }

        let report = BenchReport(
            date: started, command: ["kache-bench"] + CommandLine.arguments.dropFirst(),
            options: BenchReport.Options(
                workloads: chosen.map(\.rawValue), threads: options.threads.counts,
                durability: ["memory"], runs: options.runs, quick: options.quick,
                seed: options.seed, directory: "redis cluster \(cluster.seeds.map(\.description).joined(separator: ","))\(cluster.tls == nil ? "" : " over TLS")", directoryKept: false
            ),
            machine: machine, sizes: sizes, results: results
        )
        progress.stop()
        print(ReportTable.render(report))
        if let json = options.json { try report.write(to: json) }
    }

    /// Runs async work from this synchronous command (on the main thread, not
    /// one of the pool's, so waiting here starves nothing).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
