import ArgumentParser
import Kache

/// `kache sweep DIR`: removes expired entries.
struct SweepCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Remove every expired entry and its file, and say how many.",
        discussion: """
        Opens the directory as a writer: takes its lock (fails, naming the holder, when another \
        process has it).

        \(ExitStatus.helpSection([.success, .usage, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    func run() throws {
        let cache = try location.openForWriting()
        defer { try? cache.close() }
        cache.sweep()
        // Opening already swept what had expired; the counter covers that sweep and this one.
        let statistics = cache.statistics
        try cache.close()
        let removed = statistics.expirations
        ValueStreams.printLine("Removed \(removed) expired entr\(removed == 1 ? "y" : "ies"); \(statistics.entries) remain.")
    }
}
