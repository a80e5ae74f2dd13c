import ArgumentParser

/// `kache-bench`: the standard workloads of WORKLOADS.md, measured the same way every time.
@main
struct KacheBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kache-bench",
        abstract: "Measures Kache on the standard workloads W1–W9 and W4d, beside baselines run in the same process.",
        discussion: """
            Every figure is the median (min–max) of several runs, and is shown beside a baseline \
            measured in the same run, so that its ratio holds on a noisy machine.
            """,
        subcommands: [RunCommand.self, ChartCommand.self, MemoryCommand.self, MemoryProbeCommand.self, BlocksCommand.self, TraceCommand.self, ReadyCommand.self],
        defaultSubcommand: RunCommand.self
    )
}
