import Foundation
import ArgumentParser
import Kache
import KacheWorkloads

/// The options of `kache-bench run`.
struct RunOptions: ParsableArguments {
    @Option(name: .customLong("workload"), help: "Workloads to run: W1,W2,… or all.")
    var workloads = WorkloadSelection.all

    @Option(help: ArgumentHelp(
        "Thread counts for W2 and W3, e.g. 1,2; the others run on 1 thread.",
        discussion: "In fsync durability, W1 also runs with each count above 1 as writer threads, beside the same run with --segment-threshold 0."
    ))
    var threads = ThreadCounts([1])

    @Option(help: "Durability modes, one or more of memory, async, sync, fsync, e.g. async,sync.")
    var durability = DurabilitySelection([.async])

    @Option(help: "Kache's segmentThreshold in bytes for every workload: records shorter than this are appended to segment files; 0 gives every entry a file of its own (default: Kache's own, 16 KiB).")
    var segmentThreshold: Int?

    @Option(help: "Kache's blockCompression for every workload: fast or high (LZ4's high-compression encoder for the values in segment blocks; default: Kache's own, fast).")
    var blockCompression: BlockCompression?

    @Option(help: "Runs of each workload; figures are the median (min–max).")
    var runs = 3

    @Option(help: "Keep the cache directory here afterwards (it is wiped before each run); default: a temporary directory, removed at the end.")
    var dir: String?

    @Option(help: "Also write every figure, and the machine's description, as JSON to this file.")
    var json: String?

    @Option(help: "Also draw the run's charts as SVG files into this folder (as `kache-bench chart` does).")
    var charts: String?

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Run RocksDB and SQLite beside W1 and W8 in async and sync durability, on the same sets.",
        discussion: "--no-peers leaves them out: at the standard sizes they add about 75 s to each run of W8 on 2 cores, most of it SQLite's, and 10 s to each of W1."
    ))
    var peers = true

    @Option(help: ArgumentHelp(
        "W2's caches time 1 in this many of each thread's gets (Kache.sampleLatencies), as under a KacheMetricsReporter; default: untimed.",
        discussion: "For what the sampled timers cost the hot path: compare W2's ratio to its floor with and without."
    ))
    var sampleLatencies: Int?

    @Flag(help: "Scale every workload down about 20× for a smoke run.")
    var quick = false

    @Flag(help: "No progress line on stderr.")
    var quiet = false

    @Option(help: "Seconds W4's sorted-array floor may run, per capacity and run, before it stops (at capacity 100,000 it would take minutes).")
    var floorTimeLimit = 20.0

    @Option(help: "The seed of the generators.")
    var seed: UInt64 = SplitMix64.defaultSeed

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1 (it is \(runs))") }
        if let sampleLatencies, sampleLatencies < 1 { throw ValidationError("--sample-latencies must be at least 1 (it is \(sampleLatencies))") }
        guard floorTimeLimit > 0 else { throw ValidationError("--floor-time-limit must be positive") }
        if let segmentThreshold, segmentThreshold < 0 {
            throw ValidationError("--segment-threshold must not be negative (it is \(segmentThreshold))")
        }
    }

    var sizes: WorkloadSizes { quick ? .quick : .standard }
}

/// `--workload W1,W3` or `all`, in the order of WORKLOADS.md whatever the
/// order given, and in any case (`w4d` is W4d).
struct WorkloadSelection: ExpressibleByArgument, CustomStringConvertible {
    var workloads: [WorkloadID]

    static let all = WorkloadSelection(workloads: WorkloadID.allCases)

    init(workloads: [WorkloadID]) {
        self.workloads = workloads
    }

    init?(argument: String) {
        if argument.lowercased() == "all" {
            self = .all
            return
        }
        var chosen = Set<WorkloadID>()
        for item in argument.split(separator: ",") {
            let name = item.trimmingCharacters(in: .whitespaces).uppercased()
            guard let workload = WorkloadID.allCases.first(where: { $0.rawValue.uppercased() == name }) else { return nil }
            chosen.insert(workload)
        }
        guard !chosen.isEmpty else { return nil }
        workloads = WorkloadID.allCases.filter(chosen.contains)
    }

    var description: String {
        workloads == WorkloadID.allCases ? "all" : workloads.map(\.rawValue).joined(separator: ",")
    }

    static var allValueStrings: [String] { ["all"] + WorkloadID.allCases.map(\.rawValue) }
}

/// `--threads 1,2`: ascending, without repeats.
struct ThreadCounts: ExpressibleByArgument, CustomStringConvertible {
    var counts: [Int]

    init(_ counts: [Int]) {
        self.counts = counts
    }

    init?(argument: String) {
        var counts = Set<Int>()
        for item in argument.split(separator: ",") {
            guard let count = Int(item.trimmingCharacters(in: .whitespaces)), (1...256).contains(count) else { return nil }
            counts.insert(count)
        }
        guard !counts.isEmpty else { return nil }
        self.counts = counts.sorted()
    }

    var description: String { counts.map(String.init).joined(separator: ",") }
}

/// `--durability async,sync`, in the order given.
struct DurabilitySelection: ExpressibleByArgument, CustomStringConvertible {
    var modes: [Durability]

    init(_ modes: [Durability]) {
        self.modes = modes
    }

    init?(argument: String) {
        var modes: [Durability] = []
        for item in argument.split(separator: ",") {
            guard let mode = Durability(rawValue: item.trimmingCharacters(in: .whitespaces).lowercased()) else { return nil }
            if !modes.contains(mode) { modes.append(mode) }
        }
        guard !modes.isEmpty else { return nil }
        self.modes = modes
    }

    var description: String { modes.map(\.rawValue).joined(separator: ",") }

    static var allValueStrings: [String] { Durability.allCases.map(\.rawValue) }
}

extension BlockCompression: ExpressibleByArgument {}
