import ArgumentParser
import Foundation
import Kache

/// `kache get DIR KEY`: a value, to standard output or a file.
struct GetCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write the value stored under a key to standard output (or to a file).",
        discussion: """
        Reads the key's file and verifies it; takes no lock and changes nothing, so it works \
        while another process writes to the directory. While that process writes in async \
        durability, a value it set in the last moments may not be in its file yet.

        \(ExitStatus.helpSection([.success, .damageFound, .usage, .notFound, .notACacheDirectory, .ioFailure]))
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Argument(help: "The key.")
    var key: String

    @Option(help: "Look in this Pool instead of the top level.")
    var pool: String?

    @Option(name: .shortAndLong, help: "Write the value to this file instead of standard output.")
    var output: String?

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("the key is empty") }
    }

    func run() throws {
        let now = Date()
        let place = pool.map { "Pool \"\($0)\"" } ?? "the top level"
        switch try location.open().lookUp(key: key, inKeySpace: pool ?? "", now: now) {
        case let .found(value, _):
            try ValueStreams.write(value, to: output)
        case .missing:
            throw CommandFailure(.notFound, "no entry for key \"\(key)\" in \(place) of \(location.directory)")
        case let .expired(entry):
            throw CommandFailure(
                .notFound,
                "the entry for key \"\(key)\" in \(place) expired \(HumanReadable.relative(entry.expiry, to: now)) (\(HumanReadable.timestamp(entry.expiry)))"
            )
        case let .damaged(file, reason):
            throw CommandFailure(
                .damageFound,
                "the file of key \"\(key)\" (\(file)) is damaged: \(reason); `kache verify --repair \(location.directory)` moves it to quarantine"
            )
        }
    }
}
