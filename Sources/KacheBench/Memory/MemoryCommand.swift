import ArgumentParser
import Foundation
import Kache

/// `kache-bench memory`: what the index costs per entry (issue 21), and
/// whether resident memory stays within the memory budget plus the index.
///
/// Each run is a fresh `kache-bench memory-probe` process: the sets of W1 or
/// W8 with the issue's memory budget, then `save()`. Index bytes per entry
/// = (resident after `save()` − resident once the cache is open − bytes of
/// values in memory) ÷ live entries; "beyond the key" subtracts the keys'
/// mean UTF-8 length. Beside it, measured the same way in its own process,
/// a `[String: (Int64, Int32)]` of the same keys: the least an index could cost.
struct MemoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Measure resident memory and the index's bytes per entry on W1 and W8 (issue 21).",
        discussion: """
            Examples:
              kache-bench memory                                  W1 and W8, async, 3 runs each
              kache-bench memory --workload W8 --durability memory,async,sync,fsync
            """
    )

    @Option(help: "W1, W8 or both, e.g. W1,W8.")
    var workload = "W1,W8"

    @Option(help: "Durability modes, e.g. async,sync.")
    var durability = DurabilitySelection([.async])

    @Option(help: "Runs of each measurement (each in a fresh process); figures are the median.")
    var runs = 3

    @Option(help: "Also write every run's figures as JSON to this file.")
    var json: String?

    /// Issue 21's ceilings: the index's bytes per entry beyond the key, and
    /// what resident memory may exceed the memory budget plus the index by.
    static let ceilingBeyondKey = 100.0
    static let slack = 30_000_000

    func run() throws {
        let workloads = try workload.split(separator: ",").map { name in
            guard let workload = MemoryWorkload(argument: String(name)) else { throw ValidationError("unknown workload \(name): W1 or W8") }
            return workload
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-bench-memory-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var outcomes: [MemoryProbeOutcome] = []
        var missed = false
        for workload in workloads {
            let floors = try (0 ..< runs).map { _ in try Self.probe(["--workload", workload.rawValue, "--durability", "async", "--dir", scratch.path, "--floor"]) }
            outcomes += floors
            let floor = MemoryPerEntry.median(floors.map { MemoryPerEntry(outcome: $0) })
            for mode in durability.modes {
                let runs = try (0 ..< runs).map { _ in
                    try Self.probe(["--workload", workload.rawValue, "--durability", mode.rawValue, "--dir", scratch.path])
                }
                outcomes += runs
                let figures = MemoryPerEntry.median(runs.map { MemoryPerEntry(outcome: $0) })
                print(figures.table(title: "\(workload.rawValue) — \(mode.rawValue), \(runs.count) runs", floor: floor))
                let checks = figures.checks(ceilingBeyondKey: Self.ceilingBeyondKey, slack: Self.slack)
                for check in checks {
                    print("  \(check.met ? "met   " : "MISSED") \(check.text)")
                    missed = missed || !check.met
                }
                print()
            }
        }
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(outcomes).write(to: URL(fileURLWithPath: json))
        }
        if missed { print("Some targets were missed (see above).") }
    }

    /// Runs one probe in a child process and decodes its line.
    static func probe(_ arguments: [String]) throws -> MemoryProbeOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.isExecutableFile(atPath: process.executableURL!.path) {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        process.arguments = ["memory-probe"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").last
        else {
            throw ValidationError("memory-probe \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus))")
        }
        return try JSONDecoder().decode(MemoryProbeOutcome.self, from: Data(line.utf8))
    }
}
