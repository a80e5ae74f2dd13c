import Foundation
import Synchronization

/// The in-memory floor for several cores: 64 dictionaries, each behind its
/// own lock, a key's shard chosen by its hash.
///
/// Exists beside `MutexDictionaryBaseline` because one lock stops scaling at
/// two threads: cores fight over its cache line even when every operation
/// is a read. This is the least any map that scales has to do (ConcurrentHashMap,
/// Ristretto and bigcache shard the same way), so Kache's figures on several
/// threads are read against it.
///
/// ```swift
/// let floor = ShardedDictionaryBaseline()
/// floor.set(value, forKey: "key-0000001")
/// let hit = floor.get("key-0000001") != nil
/// ```
public final class ShardedDictionaryBaseline: Sendable {
    /// One lock and its map, padded so that two shards' locks never share a
    /// cache line (each shard is its own heap object of 128 bytes or more).
    private final class Shard: Sendable {
        let storage: Mutex<[String: Data]>
        private let padding: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        init(minimumCapacity: Int) {
            storage = Mutex(Dictionary(minimumCapacity: minimumCapacity))
        }
    }

    /// As many shards as Kache's index has, several per core.
    public static let shardCount = 64

    private let shards: [Shard]

    /// Creates an empty map with room for `minimumCapacity` keys in all.
    public init(minimumCapacity: Int = 0) {
        let perShard = (minimumCapacity + Self.shardCount - 1) / Self.shardCount
        shards = (0 ..< Self.shardCount).map { _ in Shard(minimumCapacity: perShard) }
    }

    /// Stores `value` under `key`, replacing any earlier value.
    /// - Complexity: O(1) amortized.
    public func set(_ value: Data, forKey key: String) {
        shard(of: key).storage.withLock { $0[key] = value }
    }

    /// The value stored under `key`, if any.
    /// - Complexity: O(1).
    public func get(_ key: String) -> Data? {
        shard(of: key).storage.withLock { $0[key] }
    }

    /// The number of keys stored, summed over the shards (each locked in turn).
    public var count: Int {
        shards.reduce(0) { total, shard in total + shard.storage.withLock { $0.count } }
    }

    /// The key is hashed twice (here and inside its shard's dictionary), as
    /// any sharded map built on `Dictionary` must.
    private func shard(of key: String) -> Shard {
        shards[key.hashValue & (Self.shardCount - 1)]
    }
}
