/// Which node of a shard serves the commands marked read-only
/// (``RedisCommand/isReadOnly``); writes always go to the master.
///
/// ```swift
/// var configuration = RedisClusterConfiguration(seeds: seeds)
/// configuration.readFrom = .replicaPreferred
/// ```
public enum ReadPreference: Sendable, Equatable {
    /// The slot's master, as for writes: a read sees every write made before it.
    case master
    /// A replica of the slot's master that is known and up, else the master.
    /// Connections to replicas send `READONLY`. Replicas apply writes
    /// asynchronously, so a plain read from one may return a value a write on
    /// the master already replaced; a ``TieredCache`` reads a key from a
    /// replica only once that replica is known to have applied every change
    /// of it this instance has heard of.
    case replicaPreferred
}
