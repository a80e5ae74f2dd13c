import ArgumentParser
import Foundation
import Kache

/// `kache inspect DIR`: what a cache directory holds, at a glance.
struct InspectCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarize a cache directory: entries, sizes, expiry, key spaces, files, lock.",
        discussion: """
        Reads the manifest and the header of every entry file, never a payload. Takes no lock \
        and changes nothing, so it works while another process writes to the directory. \
        Entries are those the next writer would find: the manifest's when it is current, \
        else the entry files'. `kache verify` also checks every file's checksum.

        \(ExitStatus.helpSection([.success, .usage, .notACacheDirectory, .ioFailure, .damagedManifest]))
        """
    )

    /// How `--keys` orders the keys.
    enum KeyOrder: String, ExpressibleByArgument, CaseIterable {
        /// Earliest expiry first.
        case expiry
        /// Largest value first.
        case size
    }

    @OptionGroup var location: CacheDirectoryArgument

    @Flag(help: "Also list keys with their size, stored size, expiry and key space.")
    var keys = false

    @Option(help: "With --keys, list at most this many keys (0 for all).")
    var limit = 100

    @Option(help: "With --keys, order keys by expiry (earliest first) or size (largest first).")
    var sort: KeyOrder = .expiry

    @Flag(help: "Print the summary (and keys) as JSON, for scripts.")
    var json = false

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 (all) or more") }
    }

    func run() throws {
        let now = Date()
        let inspection = try location.open().inspect(now: now)
        let listed = keys ? orderedKeys(inspection.entries) : nil
        if json {
            try JSONOutput.print(InspectOutput(summary: inspection.summary, keys: listed))
            return
        }
        var text = InspectText(summary: inspection.summary).rendered()
        if let listed {
            text += "\n\n" + InspectText.keyList(listed, of: inspection.entries.count, now: now, limit: limit)
        }
        ValueStreams.printLine(text)
    }

    private func orderedKeys(_ entries: [CacheDirectory.Entry]) -> [CacheDirectory.Entry] {
        let sorted = switch sort {
        case .expiry: entries.sorted { ($0.expiry, $0.sequence) < ($1.expiry, $1.sequence) }
        case .size: entries.sorted { ($1.size, $0.sequence) < ($0.size, $1.sequence) }
        }
        return limit == 0 ? sorted : Array(sorted.prefix(limit))
    }
}

/// What `kache inspect --json` prints.
struct InspectOutput: Encodable {
    var summary: CacheDirectory.Summary
    /// With `--keys` only.
    var keys: [CacheDirectory.Entry]?
}
