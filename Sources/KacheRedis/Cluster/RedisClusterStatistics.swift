import Synchronization

/// Counts of what a ``RedisClusterClient`` went through, since it started.
public struct RedisClusterStatistics: Sendable, Equatable {
    /// `MOVED` replies followed.
    public var movedRedirections: Int = 0
    /// `ASK` replies followed.
    public var askRedirections: Int = 0
    /// Retries after `TRYAGAIN`, `CLUSTERDOWN`, `LOADING` or a lost node.
    public var retries: Int = 0
    /// Topology refreshes that succeeded.
    public var topologyRefreshes: Int = 0
    /// Commands that failed in the end (errors surfaced to the caller).
    public var failures: Int = 0
    /// Read-only commands a replica answered (``ReadPreference/replicaPreferred``).
    public var replicaReads: Int = 0
}
