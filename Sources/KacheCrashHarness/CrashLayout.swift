import Foundation
import Kache

/// The key spaces and keys the `write` command uses, shared with the crash
/// tests so that they read back exactly the keys that were written.
///
/// - The top level and `crash-pool` are checked strictly: `crash-pool` has
///   room for all its keys, so nothing is ever evicted from it.
/// - `crash-small` holds 8 of its 24 keys: it evicts, so a key may be gone,
///   but what is there must be a value that was set for it.
/// - `crash-queue` is a FIFO big enough never to drop an item.
public enum CrashLayout {
    /// Keys set at the top level.
    public static let topLevelKeys = (0 ..< 64).map { "k\($0)" }
    /// The Pool that never evicts.
    public static let poolName = "crash-pool"
    public static let poolCapacity = 64
    public static let poolKeys = (0 ..< 40).map { "p\($0)" }
    /// The Pool that evicts.
    public static let smallPoolName = "crash-small"
    public static let smallPoolCapacity = 8
    public static let smallPoolKeys = (0 ..< 24).map { "s\($0)" }
    /// The Queue.
    public static let queueName = "crash-queue"
    public static let queueCapacity = 100_000
    /// The time to live of Queue items and of most values.
    public static let longTTL: Duration = .seconds(3600)

    /// The configuration the harness opens the directory with (and the tests
    /// reopen it with): a small memory budget, so reads also come from files.
    public static func configuration(durability: Durability) -> Kache.Configuration {
        Kache.Configuration(memoryBudget: 256 << 10, durability: durability)
    }

    /// Opens the directory's key spaces with the harness's capacities.
    public static func keySpaces(of cache: Kache) throws -> (pool: Kache.Pool, smallPool: Kache.Pool, queue: Kache.Queue) {
        (try cache.pool(named: poolName, capacity: poolCapacity),
         try cache.pool(named: smallPoolName, capacity: smallPoolCapacity),
         try cache.queue(named: queueName, capacity: queueCapacity))
    }
}
