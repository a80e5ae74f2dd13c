import ArgumentParser
import Foundation
import Kache

/// The `DIR` argument every command starts with.
struct CacheDirectoryArgument: ParsableArguments {
    @Argument(help: "The cache directory.", completion: .directory)
    var directory: String

    var url: URL { URL(fileURLWithPath: directory, isDirectory: true) }

    /// The directory, checked to be a Kache cache directory. Read-only.
    func open() throws -> CacheDirectory {
        try CacheDirectory(url: url)
    }

    /// Throws `locked` when another process holds the writer lock: a command
    /// that reads its input from stdin checks this before it waits for it.
    func checkNotLocked() throws {
        let directory = try open()
        if let holder = directory.readLockHolder() {
            throw CacheDirectoryError.locked(path: directory.url.path, holderPID: holder.pid)
        }
    }

    /// Opens the cache for writing, as an application would: takes the writer
    /// lock, and (like any writer's opening) removes entries whose time is up.
    ///
    /// The default Pool and Queue keep the capacities the manifest saved, the
    /// disk budget the one it saved (unless `diskBudget` replaces it), and the
    /// limits on keys and values are the format's own, so that opening from
    /// here never resizes, evicts or rejects what the application stored.
    /// - Throws: `CacheDirectoryError` for a missing or damaged directory or
    ///   manifest, `KacheError.directoryLocked` when a writer holds it.
    func openForWriting(diskBudget: Int? = nil) throws -> Kache {
        let directory = try open()
        let saved = try directory.savedKeySpaces()
        var configuration = Kache.Configuration(
            maximumKeyLength: Int(UInt16.max), maximumValueSize: Int(UInt32.max), durability: .sync,
            diskBudget: try diskBudget ?? directory.savedDiskBudget()
        )
        if let pool = saved.first(where: { $0.name == Kache.defaultPoolName && $0.kind == .pool }) {
            configuration.defaultPoolCapacity = pool.capacity
        }
        if let queue = saved.first(where: { $0.name == Kache.defaultQueueName && $0.kind == .queue }) {
            configuration.defaultQueueCapacity = queue.capacity
        }
        return try Kache(directory: url, configuration: configuration)
    }
}

extension Kache {
    /// The capacity of the open key space `name` of `kind`, if there is one.
    func capacity(ofKeySpace name: String, kind: KeySpaceStatistics.Kind) -> Int? {
        keySpaces.first { $0.name == name && $0.kind == kind }?.capacity
    }
}
