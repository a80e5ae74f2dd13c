import ArgumentParser
import Kache

/// `kache rm DIR KEY`: removes an entry.
struct RemoveCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove the entry stored under a key, and its file.",
        discussion: """
        Opens the directory as a writer: takes its lock (fails, naming the holder, when another \
        process has it) and, like any writer opening it, removes expired entries.

        \(ExitStatus.helpSection([.success, .usage, .notFound, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Argument(help: "The key.")
    var key: String

    @Option(help: "Remove from this Pool instead of the top level.")
    var pool: String?

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("the key is empty") }
    }

    func run() throws {
        let cache = try location.openForWriting()
        defer { try? cache.close() }
        let place = pool.map { "Pool \"\($0)\"" } ?? "the top level"
        let missing = CommandFailure(.notFound, "no entry for key \"\(key)\" in \(place) of \(location.directory)")
        if let pool {
            guard let capacity = cache.capacity(ofKeySpace: pool, kind: .pool) else {
                throw CommandFailure(.notFound, "there is no Pool named \"\(pool)\" in \(location.directory)")
            }
            let handle = try cache.pool(named: pool, capacity: capacity)
            guard handle.contains(key) else { throw missing }
            handle.removeValue(forKey: key)
        } else {
            guard cache.contains(key) else { throw missing }
            cache.removeValue(forKey: key)
        }
        try cache.close()
        ValueStreams.printLine("Removed \"\(key)\" from \(place).")
    }
}
