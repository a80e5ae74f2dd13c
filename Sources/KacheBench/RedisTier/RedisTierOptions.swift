import ArgumentParser

/// The options of `kache-bench run` that choose the tier: `--tier redis`
/// runs W1, W2, W3 and W7 through KacheRedis's tiered cache against a Redis
/// Cluster, beside `redis-benchmark --cluster` on the same cluster; over TLS
/// with `--redis-tls`.
struct RedisTierOptions: ParsableArguments {
    /// Which tier the workloads run against.
    enum Tier: String, ExpressibleByArgument, CaseIterable {
        case local, redis
    }

    @Option(help: "local (the default): the engine alone; redis: W1, W2, W3, W7 through a tiered cache on a Redis Cluster, with redis-benchmark as the floor.")
    var tier: Tier = .local

    @Option(help: "With --tier redis: an existing cluster's nodes (host:port,…); default: start one with scripts/redis-cluster.sh for the run and stop it after.")
    var redisSeeds: String?

    /// 50 by default: as many as redis-benchmark's clients (`-c 50`), so that
    /// the client and the floor keep as many commands in flight (50 × 16 pipelined).
    @Option(help: "With --tier redis: concurrent tasks driving the cluster (50, as redis-benchmark's clients).")
    var redisTasks = 50

    /// Where the run's Swift tasks run.
    enum Executor: String, ExpressibleByArgument, CaseIterable {
        /// Swift's own global executor (its thread pool), as in any program that changes nothing.
        case swift
        /// SwiftNIO's singleton event-loop group, installed as Swift's global executor
        /// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`):
        /// every task runs on the loops that hold the client's connections.
        case nio
    }

    @Option(help: "With --tier redis: the global executor the run's tasks run on: swift (Swift's own, the default) or nio (SwiftNIO's event loops, installed as Swift's global executor, as an application can at its start).")
    var redisExecutor: Executor = .swift

    @Flag(inversion: .prefixedNo, help: "With --tier redis: track invalidations (CLIENT TRACKING), as a tiered cache does by default.")
    var redisTracking = true

    @Flag(help: "With --tier redis: everything over TLS, the client and redis-benchmark --tls alike; the cluster started for the run serves TLS only, with certificates made for it.")
    var redisTLS = false

    @Option(help: "With --redis-tls and --redis-seeds: the folder of ca.crt, and of client.crt and client.key when the nodes require a client certificate.")
    var redisTLSCertificates: String?
}
