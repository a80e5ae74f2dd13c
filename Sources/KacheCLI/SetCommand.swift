import ArgumentParser
import Foundation
import Kache

/// `kache set DIR KEY --ttl 1h < FILE`: stores a value.
struct SetCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store standard input (or a file) under a key, for a time to live.",
        discussion: """
        Opens the directory as a writer: takes its lock (fails, naming the holder, when another \
        process has it) and, like any writer opening it, removes expired entries. The file is \
        written before the command returns, and the manifest when it closes.

        \(ExitStatus.helpSection([.success, .usage, .notFound, .notACacheDirectory, .locked, .ioFailure, .damagedManifest]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Argument(help: "The key.")
    var key: String

    @Option(help: ArgumentHelp("How long the value lives, \(DurationArgument.format).", valueName: "duration"),
            transform: DurationArgument.parse)
    var ttl: Duration

    @Option(help: "Store in this Pool instead of the top level.")
    var pool: String?

    @Option(help: "With --pool: the Pool's capacity. Required to create a Pool; resizes an existing one (evicting if it shrinks).")
    var capacity: Int?

    @Option(name: .shortAndLong, help: "Read the value from this file instead of standard input.")
    var input: String?

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("the key is empty") }
        if capacity != nil, pool == nil { throw ValidationError("--capacity applies to a Pool; give --pool too") }
        if let capacity, capacity < 1 { throw ValidationError("--capacity must be 1 or more") }
    }

    func run() throws {
        // Fail before waiting for the value when the directory can't take it.
        try location.checkNotLocked()
        let value = try ValueStreams.readAll(from: input)
        let cache = try location.openForWriting()
        defer { try? cache.close() }
        if let pool {
            guard let capacity = capacity ?? cache.capacity(ofKeySpace: pool, kind: .pool) else {
                throw CommandFailure(.notFound, "there is no Pool named \"\(pool)\" in \(location.directory); give --capacity to create it")
            }
            try cache.pool(named: pool, capacity: capacity).set(value, forKey: key, ttl: ttl)
        } else {
            try cache.set(value, forKey: key, ttl: ttl)
        }
        try cache.close()
        let expiry = Date().addingTimeInterval(Double(ttl.components.seconds))
        let place = pool.map { " in Pool \"\($0)\"" } ?? ""
        ValueStreams.printLine("Stored \(HumanReadable.bytes(value.count)) under \"\(key)\"\(place), until \(HumanReadable.timestamp(expiry)).")
    }
}
