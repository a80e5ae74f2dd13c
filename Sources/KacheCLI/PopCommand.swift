import ArgumentParser
import Kache

/// `kache pop DIR --queue NAME`: takes the oldest item of a Queue.
struct PopCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "pop",
        abstract: "Remove the oldest live item of a Queue and write it to standard output (or to a file).",
        discussion: """
        Opens the directory as a writer: takes its lock (fails, naming the holder, when another \
        process has it) and, like any writer opening it, removes expired entries.

        \(ExitStatus.helpSection([.success, .usage, .notFound, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Option(help: "The Queue's name.")
    var queue: String

    @Option(name: .shortAndLong, help: "Write the item to this file instead of standard output.")
    var output: String?

    func run() throws {
        let cache = try location.openForWriting()
        defer { try? cache.close() }
        guard let capacity = cache.capacity(ofKeySpace: queue, kind: .queue) else {
            throw CommandFailure(.notFound, "there is no Queue named \"\(queue)\" in \(location.directory)")
        }
        let handle = try cache.queue(named: queue, capacity: capacity)
        // Written out before it leaves the Queue, so a failed write loses nothing.
        guard let item = handle.peek() else {
            throw CommandFailure(.notFound, "the Queue \"\(queue)\" is empty")
        }
        try ValueStreams.write(item, to: output)
        _ = handle.pop()
        try cache.close()
    }
}
