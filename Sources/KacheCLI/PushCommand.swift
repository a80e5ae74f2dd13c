import ArgumentParser
import Foundation
import Kache

/// `kache push DIR --queue NAME --ttl 1h < FILE`: appends an item to a Queue.
struct PushCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Append standard input (or a file) to a Queue, for a time to live.",
        discussion: """
        Opens the directory as a writer: takes its lock (fails, naming the holder, when another \
        process has it) and, like any writer opening it, removes expired entries. A full Queue \
        drops its oldest item. The item is written before the command returns, and the manifest when it closes.

        \(ExitStatus.helpSection([.success, .usage, .notFound, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Option(help: "The Queue's name.")
    var queue: String

    @Option(help: ArgumentHelp("How long the item lives, \(DurationArgument.format).", valueName: "duration"),
            transform: DurationArgument.parse)
    var ttl: Duration

    @Option(help: "The Queue's capacity. Required to create a Queue; resizes an existing one (dropping the oldest if it shrinks).")
    var capacity: Int?

    @Option(name: .shortAndLong, help: "Read the item from this file instead of standard input.")
    var input: String?

    func validate() throws {
        guard !queue.isEmpty else { throw ValidationError("the Queue's name is empty") }
        if let capacity, capacity < 1 { throw ValidationError("--capacity must be 1 or more") }
    }

    func run() throws {
        // Fail before waiting for the item when the directory can't take it.
        try location.checkNotLocked()
        let item = try ValueStreams.readAll(from: input)
        let cache = try location.openForWriting()
        defer { try? cache.close() }
        guard let capacity = capacity ?? cache.capacity(ofKeySpace: queue, kind: .queue) else {
            throw CommandFailure(.notFound, "there is no Queue named \"\(queue)\" in \(location.directory); give --capacity to create it")
        }
        let handle = try cache.queue(named: queue, capacity: capacity)
        try handle.push(item, ttl: ttl)
        let count = handle.count
        try cache.close()
        ValueStreams.printLine("Pushed \(HumanReadable.bytes(item.count)) onto Queue \"\(queue)\" (\(count) of \(capacity) items).")
    }
}
