import Foundation
import Kache
import KacheRedis
import KacheRedisServiceLifecycle
import Logging
import ServiceLifecycle
import Testing
import KacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `TieredCacheService` in a `ServiceGroup`: the shutdown closes the tiered
/// cache (its own client shut down) and saves and closes the local cache.
/// No cluster is needed: the seed is a port on 127.0.0.1 where nothing
/// listens, so writes to Redis fail at once and are only counted (best-effort).
@Suite struct TieredCacheServiceTests {
    @Test(.timeLimit(.minutes(1))) func gracefulShutdownShutsTheClientDownAndSavesTheLocalCache() async throws {
        let directory = TemporaryDirectory()
        var configuration = Kache.Configuration()
        configuration.durability = .async
        let local = try Kache(directory: directory.url, configuration: configuration)
        let cache = try await TieredCache(
            local: local, seeds: ["127.0.0.1:\(try Self.closedPort())"],
            configuration: TieredCacheConfiguration(writePolicy: RetryPolicy(maximumAttempts: 2, budget: .milliseconds(200)))
        )
        let group = ServiceGroup(
            services: [TieredCacheService(cache: cache)],
            logger: Logger(label: "TieredCacheServiceTests", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for index in 0 ..< 50 {
                try await cache.set(Data("value-\(index)".utf8), forKey: "key-\(index)", ttl: .seconds(3600))
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(cache.statistics.writeErrors == 50, "nothing listens on the seed's port")

        // The client the tiered cache created is shut down.
        do throws(RedisClientError) {
            _ = try await cache.client.send(RedisCommand(["PING"], keyIndex: nil))
            Issue.record("a command was sent after the shutdown")
        } catch {
            guard case .shutDown = error else {
                Issue.record("expected RedisClientError.shutDown, got \(error)")
                return
            }
        }
        // The local cache is closed, its lock free, every set in it.
        #expect(throws: KacheError.closed) { try local.set(Data("late".utf8), forKey: "late", ttl: .seconds(60)) }
        let reopened = try Kache(directory: directory.url, configuration: configuration)
        defer { try? reopened.close() }
        for index in 0 ..< 50 {
            #expect(await reopened.data(forKey: "key-\(index)") == Data("value-\(index)".utf8), "key-\(index)")
        }
    }

    /// A port on 127.0.0.1 that was free a moment ago: bound, read, and released.
    private static func closedPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
