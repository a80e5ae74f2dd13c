import Foundation
import Kache
import KacheWorkloads

/// Everything a run measured, as written to `--json`: every figure with its
/// samples, median, min and max, every baseline and ratio, the targets, and
/// the machine.
struct BenchReport: Codable {
    struct Options: Codable {
        var workloads: [String]
        var threads: [Int]
        var durability: [String]
        var runs: Int
        var quick: Bool
        var seed: UInt64
        /// `--segment-threshold`, or nil for Kache's default.
        var segmentThreshold: Int?
        /// `--block-compression`, or nil for Kache's default (absent in reports from before it).
        var blockCompression: String? = nil
        /// Where the cache directory was, and whether it was kept.
        var directory: String
        var directoryKept: Bool
        /// Whether W1 and W8 ran their peers (absent in reports from before them).
        var peers: Bool? = nil
    }

    struct Summary: Codable {
        var median: Double
        var min: Double
        var max: Double

        init?(_ samples: [Double]) {
            guard let statistics = SampleStatistics(samples) else { return nil }
            (median, min, max) = (statistics.median, statistics.min, statistics.max)
        }
    }

    struct ComparisonRecord: Codable {
        var baseline: String
        var samples: [Double]
        var summary: Summary?
        /// The figure over the baseline, run by run.
        var ratios: [Double]
        var ratio: Summary?
    }

    struct FigureRecord: Codable {
        var name: String
        var unit: String
        var higherIsBetter: Bool
        var samples: [Double]
        var summary: Summary?
        var comparisons: [ComparisonRecord]
    }

    struct ResultRecord: Codable {
        var workload: String
        var name: String
        var description: String
        var variant: String?
        var durability: String
        var threads: Int
        var memoryBudget: Int
        var diskBudget: Int?
        var figures: [FigureRecord]
        var notes: [String]
    }

    var tool = "kache-bench"
    var formatVersion = 1
    var date: String
    var command: [String]
    var options: Options
    var machine: MachineDescription
    var results: [ResultRecord]
    var targets: [TargetCheck]

    init(date: Date, command: [String], options: Options, machine: MachineDescription, sizes: WorkloadSizes, results: [WorkloadResult]) {
        self.date = ISO8601DateFormatter().string(from: date)
        self.command = command
        self.options = options
        self.machine = machine
        self.results = results.map { result in
            ResultRecord(
                workload: result.workload.rawValue, name: result.workload.name,
                // The description is the workload's standard one; a variant
                // (another Pool capacity, a disk budget) changes one parameter.
                description: result.workload.description(sizes: sizes) + (result.variant.map { "; this run: \($0)" } ?? ""),
                variant: result.variant,
                durability: result.durability.rawValue, threads: result.threads,
                memoryBudget: result.memoryBudget, diskBudget: result.diskBudget,
                figures: result.figures.map { figure in
                    FigureRecord(
                        name: figure.name, unit: figure.unit.rawValue, higherIsBetter: figure.higherIsBetter,
                        samples: figure.samples, summary: Summary(figure.samples),
                        comparisons: figure.comparisons.map { comparison in
                            let ratios = figure.ratios(to: comparison)
                            return ComparisonRecord(
                                baseline: comparison.baseline, samples: comparison.samples, summary: Summary(comparison.samples),
                                ratios: ratios, ratio: Summary(ratios)
                            )
                        }
                    )
                },
                notes: result.notes
            )
        }
        targets = TargetChecks.evaluate(results, sizes: sizes)
    }

    /// Reads a report that `kache-bench run --json` wrote.
    static func read(from path: String) throws -> BenchReport {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(BenchReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes the report as pretty-printed JSON to `path`, atomically.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
