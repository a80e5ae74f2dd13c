import Foundation
import Kache
@testable import KacheRedis

/// Runs `body` with a tiered cache over an in-memory `Kache` and a cluster
/// client whose only seed is a port nothing listens on, one attempt per
/// command: for what must be decided before Redis is asked. Anything sent
/// fails at once with ``RedisClientError/connectFailed(_:reason:)``.
func withUnreachableSharedTier<T>(_ body: (TieredCache) async throws -> T) async throws -> T {
    let client = RedisClusterClient(configuration: RedisClusterConfiguration(
        seeds: [NodeAddress(host: "127.0.0.1", port: try SilentServer.freePort())],
        connection: RedisConnection.Options(commandTimeout: .milliseconds(150), connectTimeout: .milliseconds(150)),
        maximumAttempts: 1
    ))
    let cache = await TieredCache(
        local: try Kache(inMemory: Kache.Configuration()), client: client,
        configuration: TieredCacheConfiguration(writePolicy: RetryPolicy(maximumAttempts: 1, budget: .milliseconds(150)), tracksInvalidations: false)
    )
    do {
        let result = try await body(cache)
        await cache.close()
        await client.shutdown()
        return result
    } catch {
        await cache.close()
        await client.shutdown()
        throw error
    }
}
