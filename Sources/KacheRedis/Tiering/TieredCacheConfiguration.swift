/// How a ``TieredCache`` uses its shared tier.
///
/// ```swift
/// var configuration = TieredCacheConfiguration()
/// configuration.writes = .required   // a set throws when Redis did not take it
/// ```
public struct TieredCacheConfiguration: Sendable {
    /// What a failed write to Redis does.
    public enum WritePolicy: Sendable, Equatable {
        /// The local tier is written; a Redis failure is logged and counted, not thrown.
        case bestEffort
        /// A Redis failure is thrown (after the local tier was written).
        case required
    }

    /// Prepended to every key in Redis, and the prefix invalidations are tracked under.
    public var keyPrefix: String
    /// What a failed write to Redis does.
    public var writes: WritePolicy
    /// How long a `get` may spend on Redis, retries included, before it counts
    /// an error and answers from the local tier alone.
    public var readPolicy: RetryPolicy
    /// How long a write may spend on Redis, retries included.
    public var writePolicy: RetryPolicy
    /// Drop local copies when another instance changes a key (Redis client-side
    /// caching, `CLIENT TRACKING … BCAST`, RESP3 push).
    public var tracksInvalidations: Bool
    /// How often the invalidation listener checks that it tracks every master,
    /// and, when the client reads from replicas, how often replicas are
    /// checked for having applied the changes this cache heard of.
    public var trackingCheckInterval: Duration
    /// Values at least this long are LZ4-compressed in the record, as in the local files.
    public var compressionThreshold: Int
    /// Called after a key's local copy was dropped because it changed elsewhere
    /// (the key without the prefix); for measuring the lag.
    public var onInvalidation: (@Sendable (String) -> Void)?

    /// Creates a configuration.
    public init(
        keyPrefix: String = "kache:",
        writes: WritePolicy = .bestEffort,
        readPolicy: RetryPolicy = RetryPolicy(maximumAttempts: 3, budget: .milliseconds(250)),
        writePolicy: RetryPolicy = RetryPolicy(maximumAttempts: 8, budget: .seconds(2)),
        tracksInvalidations: Bool = true,
        trackingCheckInterval: Duration = .milliseconds(200),
        compressionThreshold: Int = 64,
        onInvalidation: (@Sendable (String) -> Void)? = nil
    ) {
        self.keyPrefix = keyPrefix
        self.writes = writes
        self.readPolicy = readPolicy
        self.writePolicy = writePolicy
        self.tracksInvalidations = tracksInvalidations
        self.trackingCheckInterval = trackingCheckInterval
        self.compressionThreshold = compressionThreshold
        self.onInvalidation = onInvalidation
    }
}
