import Logging

/// How a ``RedisClusterClient`` finds and talks to the cluster.
///
/// ```swift
/// let configuration = RedisClusterConfiguration(seeds: [NodeAddress(host: "127.0.0.1", port: 7000)])
/// let secured = RedisClusterConfiguration(
///     seeds: seeds, credentials: RedisCredentials(username: "cache", password: secret),
///     tls: try RedisTLSConfiguration(caBundlePath: "/etc/redis/ca.crt", serverName: "redis.internal")
/// )
/// ```
///
/// Every connection the client opens (the command pools, the topology
/// queries, a ``TieredCache``'s invalidation listener) uses the same
/// ``RedisConnection/Options``, so all of them authenticate and use TLS alike.
public struct RedisClusterConfiguration: Sendable {
    /// Nodes to ask for the topology first; one reachable node is enough.
    public var seeds: [NodeAddress]
    /// Connections kept to each node; each carries many pipelined commands.
    public var connectionsPerNode: Int
    /// Timeouts and protocol of each connection.
    public var connection: RedisConnection.Options
    /// The delay before reconnecting to a node that failed.
    public var reconnectBackoff: Backoff
    /// How many redirections (`MOVED`, `ASK`) and retries (`TRYAGAIN`,
    /// `CLUSTERDOWN`, a lost node) one command may go through.
    public var maximumAttempts: Int
    /// How long one command may keep retrying in all, from its first attempt.
    public var retryBudget: Duration
    /// Where the client logs topology changes and failures.
    public var logger: Logger
    /// Which node serves commands marked ``RedisCommand/isReadOnly``: the
    /// master (the default) or, when one is up, a replica.
    public var readFrom: ReadPreference = .master

    /// Who every connection authenticates as (kept in ``connection``).
    public var credentials: RedisCredentials? {
        get { connection.credentials }
        set { connection.credentials = newValue }
    }

    /// TLS for every connection (kept in ``connection``).
    public var tls: RedisTLSConfiguration? {
        get { connection.tls }
        set { connection.tls = newValue }
    }

    /// Creates a configuration. `credentials` and `tls`, when given, replace
    /// those of `connection`.
    public init(
        seeds: [NodeAddress],
        connectionsPerNode: Int = 2,
        connection: RedisConnection.Options = RedisConnection.Options(),
        credentials: RedisCredentials? = nil,
        tls: RedisTLSConfiguration? = nil,
        reconnectBackoff: Backoff = Backoff(),
        maximumAttempts: Int = 16,
        retryBudget: Duration = .seconds(3),
        logger: Logger = Logger(label: "kache.redis")
    ) {
        self.seeds = seeds
        self.connectionsPerNode = connectionsPerNode
        self.connection = connection
        if let credentials { self.connection.credentials = credentials }
        if let tls { self.connection.tls = tls }
        self.reconnectBackoff = reconnectBackoff
        self.maximumAttempts = maximumAttempts
        self.retryBudget = retryBudget
        self.logger = logger
    }
}
