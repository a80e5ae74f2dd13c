import ArgumentParser
import Foundation

/// `kache-bench chart`: draws the charts of one or more runs' JSON as SVG files.
struct ChartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chart",
        abstract: "Draw a run's figures as SVG charts, from the JSON `kache-bench run --json` wrote.",
        discussion: """
            Draws, as far as the runs measured them: W4 sets/s against Pool capacity beside the 2012 \
            sorted array; W2/W3 latency percentiles beside the dictionary floor; W1 durable sets/s per \
            durability mode beside the file-system floors; bytes on disk per entry by value size; W2/W3 \
            throughput by thread count.

            Given several files, a later run's result replaces an earlier one's of the same workload, \
            variant, mode and thread count; bytes per entry are drawn run by run, side by side.

            Examples:
              kache-bench chart bench.json --out charts
              kache-bench chart bench.json w1.json w4.json --out docs/charts
            """
    )

    @Argument(help: "JSON files written by `kache-bench run --json`, oldest first.")
    var results: [String]

    @Option(help: "The folder to write the SVG files into (created if missing).")
    var out: String

    func validate() throws {
        guard !results.isEmpty else { throw ValidationError("give at least one JSON file written by `kache-bench run --json`") }
    }

    func run() throws {
        let sources = try results.map { path in
            do {
                return ChartSource(name: URL(fileURLWithPath: path).lastPathComponent, report: try BenchReport.read(from: path))
            } catch {
                throw ValidationError("\(path) is not the JSON of a kache-bench run: \(error)")
            }
        }
        let outcome = try BenchCharts.write(sources, to: out)
        Self.report(outcome)
        if outcome.written.isEmpty { throw ExitCode.failure }
    }

    /// Prints where the charts went, and which were left out and why.
    static func report(_ outcome: (written: [String], skipped: [String])) {
        for path in outcome.written { print("chart: \(path)") }
        for reason in outcome.skipped { print("not drawn: \(reason)") }
    }
}
