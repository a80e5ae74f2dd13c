import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

/// Redis unreachable or silent: reads never throw and stay fast, errors are
/// counted, writes are best-effort unless required. No cluster needed.
@Suite struct FaultTests {
    private func client(port: Int) -> RedisClusterClient {
        RedisClusterClient(configuration: RedisClusterConfiguration(
            seeds: [NodeAddress(host: "127.0.0.1", port: port)],
            connection: RedisConnection.Options(commandTimeout: .milliseconds(150), connectTimeout: .milliseconds(150)),
            reconnectBackoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(100))
        ))
    }

    @Test(.timeLimit(.minutes(1))) func redisDown_readsServeTheLocalTierAndCountErrors() async throws {
        let port = try SilentServer.freePort()
        let client = client(port: port)
        let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
        try await cache.set(Data("kept".utf8), forKey: "local", ttl: .seconds(60))
        #expect(cache.statistics.writeErrors == 1)
        #expect(await cache.data(forKey: "local") == Data("kept".utf8))
        let started = ContinuousClock.now
        #expect(await cache.data(forKey: "absent") == nil)
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(cache.statistics.readErrors == 1)
        try await cache.removeValue(forKey: "local")
        #expect(cache.statistics.writeErrors == 2)

        let strict = await TieredCache(
            local: try Kache(inMemory: Kache.Configuration()), client: client,
            configuration: TieredCacheConfiguration(writes: .required, writePolicy: RetryPolicy(maximumAttempts: 2, budget: .milliseconds(100)))
        )
        await #expect(throws: TieredCacheError.self) { try await strict.set(Data("x".utf8), forKey: "k", ttl: .seconds(1)) }
        await #expect(strict.local.data(forKey: "k") == Data("x".utf8), "the local tier was written first")
        await cache.close()
        await strict.close()
        await client.shutdown()
    }

    /// A local tier with files reads a value its memory let go from its
    /// file (through its `async` read, off the caller's thread), and a local
    /// tier in memory answers from memory: neither asks Redis, down here.
    @Test(.timeLimit(.minutes(1))) func redisDown_localHitsFromMemoryAndFromFilesAreServedWithoutRedis() async throws {
        let directory = TemporaryDirectory()
        let client = client(port: try SilentServer.freePort())
        let onDisk = try Kache(directory: directory.url, configuration: Kache.Configuration(memoryBudget: 0, durability: .sync))
        let inMemory = try Kache(inMemory: Kache.Configuration())
        for local in [onDisk, inMemory] {
            let cache = await TieredCache(local: local, client: client, configuration: TieredCacheConfiguration(tracksInvalidations: false))
            try await cache.set(Data("kept".utf8), forKey: "k", ttl: .seconds(60))
            #expect(local.statistics.entriesInMemory == (local === onDisk ? 0 : 1))
            #expect(await cache.data(forKey: "k") == Data("kept".utf8))
            #expect(cache.statistics.localHits == 1)
            #expect(cache.statistics.readErrors == 0, "Redis was asked for a value the local tier holds")
            await cache.close()
        }
        await client.shutdown()
    }

    @Test(.timeLimit(.minutes(1))) func redisSilent_readsGiveUpWithinTheReadPolicy() async throws {
        let server = try SilentServer()
        defer { server.close() }
        let client = client(port: server.port)
        let cache = await TieredCache(
            local: try Kache(inMemory: Kache.Configuration()), client: client,
            configuration: TieredCacheConfiguration(tracksInvalidations: false)
        )
        let started = ContinuousClock.now
        #expect(await cache.data(forKey: "absent") == nil)
        let elapsed = ContinuousClock.now - started
        // The server never answers, so only the command timeout ends an attempt,
        // and the read policy's attempt limit and budget end the read: 3 attempts
        // of 150 ms at most. The count is the exact check (the client's default
        // policy would make up to 16); the wall-clock bound, with room for a
        // loaded machine, tells a read given up on from one left waiting.
        let readPolicy = TieredCacheConfiguration().readPolicy
        #expect(client.statistics.failures == 1)
        #expect(client.statistics.retries < readPolicy.maximumAttempts, "\(client.statistics)")
        #expect(elapsed < .seconds(5))
        #expect(cache.statistics.readErrors == 1)
        await cache.close()
        await client.shutdown()
    }
}

/// A socket that listens on 127.0.0.1 and never answers: connections are
/// accepted by the kernel's backlog, and commands wait for a reply that never comes.
final class SilentServer: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptor = descriptor
    }

    func close() { _ = Glibc.close(descriptor) }

    /// A port nothing listens on now (bound, then released).
    static func freePort() throws -> Int {
        let server = try SilentServer()
        server.close()
        return server.port
    }
}
