import Testing

/// The tests that run against a live Redis Cluster of their own. One at a
/// time: each starts 3 to 6 servers on a 2-core machine.
@Suite(.serialized, .enabled(if: LiveCluster.isAvailable, "redis-server is not installed"))
enum LiveClusterTests {}
