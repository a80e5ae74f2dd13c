import ArgumentParser
import Foundation
import Kache

/// `kache init DIR [--disk-budget SIZE]`: creates a cache directory.
struct InitCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a cache directory (or change the disk budget of an existing one).",
        discussion: """
        Creates DIR (and its parents) with its folders and a manifest, as an application opening \
        it for the first time would. An existing cache directory is left as it is, except that \
        --disk-budget replaces the budget saved in it (a smaller one removes expired entries \
        first, then evicts by S3-FIFO until the entries fit). A folder that exists, holds \
        anything, and is not a cache directory is refused: kache never turns someone's folder \
        into a cache.

        \(ExitStatus.helpSection([.success, .usage, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Option(help: ArgumentHelp("The most bytes the directory may occupy on disk, \(ByteSizeArgument.format).", valueName: "size"),
            transform: ByteSizeArgument.parse)
    var diskBudget: Int?

    func run() throws {
        let existing = try? location.open()
        if existing == nil, try !isAbsentOrEmpty(location.url) {
            throw CommandFailure(.notACacheDirectory, "\(location.directory) exists and is not an empty folder or a Kache cache directory; kache init creates only new ones")
        }
        if existing != nil, diskBudget == nil {
            ValueStreams.printLine("\(location.directory) is already a Kache cache directory; nothing changed.")
            return
        }
        let cache: Kache
        if existing == nil {
            let existedEmpty = FileManager.default.fileExists(atPath: location.url.path)
            do {
                cache = try Kache(directory: location.url, configuration: Kache.Configuration(durability: .sync, diskBudget: diskBudget))
            } catch {
                // Take back what the failed opening created: the folder was absent or empty.
                removeCreated(keepingFolder: existedEmpty)
                throw error
            }
        } else {
            cache = try location.openForWriting(diskBudget: diskBudget)
        }
        defer { try? cache.close() }
        try cache.close()
        let budget = diskBudget.map { HumanReadable.bytes($0) }
        if existing == nil {
            ValueStreams.printLine("Created the cache directory \(location.directory)" + (budget.map { " with a disk budget of \($0)." } ?? "."))
        } else {
            ValueStreams.printLine("Set the disk budget of \(location.directory) to \(budget ?? "none").")
        }
    }

    /// Removes what a failed opening created in a folder that was absent or empty.
    private func removeCreated(keepingFolder: Bool) {
        let url = location.url
        guard keepingFolder else {
            try? FileManager.default.removeItem(at: url)
            return
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
            try? FileManager.default.removeItem(at: url.appendingPathComponent(name))
        }
    }

    /// Whether nothing is at `url`, or an empty folder.
    private func isAbsentOrEmpty(_ url: URL) throws -> Bool {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { return true }
        guard isFolder.boolValue else { return false }
        return try FileManager.default.contentsOfDirectory(atPath: url.path).isEmpty
    }
}
