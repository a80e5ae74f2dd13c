import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

/// What never shows a password: no cluster needed.
@Suite struct CredentialsRedactionTests {
    private let secret = "pw-never-printed-5f1c"

    @Test func theConfigurationNeverPrintsThePassword() throws {
        let credentials = RedisCredentials(username: "cache", password: secret)
        let configuration = RedisClusterConfiguration(seeds: [NodeAddress(host: "127.0.0.1", port: 7000)], credentials: credentials)
        var dumped = ""
        dump(configuration, to: &dumped)
        var dumpedOptions = ""
        dump(configuration.connection, to: &dumpedOptions)
        let printed = [
            String(describing: credentials), String(reflecting: credentials), "\(credentials)",
            String(describing: configuration), String(reflecting: configuration),
            String(describing: configuration.connection), String(reflecting: configuration.connection),
            dumped, dumpedOptions,
        ]
        for text in printed {
            #expect(!text.contains(secret), "\(text)")
            #expect(text.contains("<redacted>"), "\(text)")
            #expect(text.contains("cache"), "the user is shown: \(text)")
        }
        #expect(configuration.credentials == credentials, "the password is kept, only not printed")
    }

    @Test func aMissingCABundleIsAnInvalidTLSConfiguration() async {
        let error = await clientError { _ = try RedisTLSConfiguration(caBundlePath: "/nonexistent/ca.crt") }
        guard case .tlsConfigurationInvalid = error else {
            Issue.record("expected tlsConfigurationInvalid, got \(String(describing: error))")
            return
        }
        let halfAClient = await clientError {
            _ = try RedisTLSConfiguration(caBundlePath: "/nonexistent/ca.crt", clientCertificatePath: "/nonexistent/client.crt")
        }
        guard case .tlsConfigurationInvalid = halfAClient else {
            Issue.record("expected tlsConfigurationInvalid, got \(String(describing: halfAClient))")
            return
        }
    }
}

extension LiveClusterTests {
    @Suite struct CredentialsTests {
        private let password = "pw-\(UUID().uuidString.prefix(12))"

        /// The command pools, the topology queries and the invalidation
        /// listeners all authenticate: a value set through one cache is read
        /// through another, and its change reaches the other's listener. The
        /// replicas synced with the password too (the script's masterauth).
        @Test(.timeLimit(.minutes(2))) func everyConnectionOfAPasswordClusterAuthenticates() async throws {
            try await LiveCluster.with(replicas: true, password: password) { cluster in
                let (writerClient, readerClient) = (cluster.client(), cluster.client())
                let writer = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: writerClient)
                let reader = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: readerClient)
                #expect(writer.isTrackingInvalidations && reader.isTrackingInvalidations, "the listeners' connections authenticated")

                try await writer.set(Data("first".utf8), forKey: "k", ttl: .seconds(60))
                #expect(await reader.data(forKey: "k") == Data("first".utf8))
                // The writer's set reaches the reader's listener as an invalidation too
                // (tracking is by prefix); arriving after the read began, on a busy
                // machine, it rightly drops the copy that read made. Read until one stays.
                try await waitUntil("the reader keeps a local copy", timeout: .seconds(10)) {
                    _ = await reader.data(forKey: "k")
                    return await reader.local.data(forKey: "k") == Data("first".utf8)
                }
                try await writer.set(Data("second".utf8), forKey: "k", ttl: .seconds(60))
                try await waitUntil("the change drops the reader's copy", timeout: .seconds(5)) { await reader.local.data(forKey: "k") == nil }
                #expect(await reader.data(forKey: "k") == Data("second".utf8))
                #expect(writer.statistics.writeErrors == 0 && reader.statistics.readErrors == 0)

                for port in cluster.ports.suffix(3) {
                    try await waitUntil("replica \(port) synced with its master", timeout: .seconds(30)) {
                        try await cluster.cli(port, ["INFO", "replication"]).output.contains("master_link_status:up")
                    }
                }

                let anonymous = cluster.client(credentials: .some(nil))
                let error = await clientError { try await anonymous.send(RedisCommand(["GET", "kache:k"], keyIndex: 1)) }
                #expect(error?.isAuthenticationRequired == true, "\(String(describing: error))")
                await anonymous.shutdown()
                await writer.close()
                await reader.close()
                await writerClient.shutdown()
                await readerClient.shutdown()
            }
        }

        /// A wrong password is refused at once with its own error, every time
        /// (not a back-off nor a topology error), and the local tier answers
        /// for what it holds.
        @Test(.timeLimit(.minutes(1))) func aWrongPasswordFailsAsAuthenticationFailedAndTheLocalTierKeepsServing() async throws {
            try await LiveCluster.with(password: password) { cluster in
                let client = cluster.client(credentials: RedisCredentials(password: "not-" + password))
                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                #expect(!cache.isTrackingInvalidations)
                try await cache.set(Data("kept".utf8), forKey: "kept", ttl: .seconds(60))
                #expect(cache.statistics.writeErrors == 1, "best effort: the local tier took it, Redis did not")
                let started = ContinuousClock.now
                #expect(await cache.data(forKey: "kept") == Data("kept".utf8))
                #expect(await cache.data(forKey: "absent") == nil)
                #expect(ContinuousClock.now - started < .seconds(1), "a refusal is not retried")
                #expect(cache.statistics.readErrors == 1 && cache.statistics.localHits == 1)

                for _ in 0..<3 {
                    let error = await clientError { try await client.send(RedisCommand(["GET", "kache:kept"], keyIndex: 1)) }
                    #expect(error?.refusedUsername == "default", "\(String(describing: error))")
                }

                let strict = await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), client: client,
                    configuration: TieredCacheConfiguration(writes: .required, tracksInvalidations: false)
                )
                do {
                    try await strict.set(Data("x".utf8), forKey: "x", ttl: .seconds(60))
                    Issue.record("a required write went through with a wrong password")
                } catch {
                    guard case let .sharedTier(cause)? = error as? TieredCacheError, cause.isAuthenticationFailed else {
                        Issue.record("expected sharedTier(authenticationFailed), got \(error)")
                        return
                    }
                }
                await strict.close()
                await cache.close()
                await client.shutdown()
            }
        }

        /// Logged at every level across a refused and an accepted
        /// authentication, the password shows in no line.
        @Test(.timeLimit(.minutes(1))) func thePasswordAppearsInNoLogLine() async throws {
            try await LiveCluster.with(password: password) { cluster in
                let log = CapturedLog()
                let wrongPassword = "wrong-" + password
                let refused = cluster.client(credentials: RedisCredentials(password: wrongPassword), logger: log.logger)
                let refusedCache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: refused)
                try await refusedCache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
                #expect(await refusedCache.data(forKey: "other") == nil)
                await refusedCache.close()
                await refused.shutdown()

                let accepted = cluster.client(logger: log.logger)
                let acceptedCache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: accepted)
                try await acceptedCache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
                await acceptedCache.local.removeValue(forKey: "k")
                #expect(await acceptedCache.data(forKey: "k") == Data("v".utf8))
                await acceptedCache.close()
                await accepted.shutdown()

                let lines = log.text
                #expect(lines.contains { $0.contains("refused the credentials of user \"default\"") }, "the refusal was logged: \(lines)")
                #expect(lines.contains { $0.contains("Redis cluster masters") }, "the accepted client logged too: \(lines)")
                for line in lines {
                    #expect(!line.contains(password) && !line.contains(wrongPassword), "\(line)")
                }
            }
        }

        /// An ACL user authenticates in its HELLO and is held to its own keys:
        /// Redis knows the connection as that user.
        @Test(.timeLimit(.minutes(1))) func anACLUserAuthenticatesWithHELLOAndIsHeldToItsKeys() async throws {
            try await LiveCluster.with(password: password) { cluster in
                let userPassword = "user-" + password
                for port in cluster.ports {
                    let made = try await cluster.cli(port, ["ACL", "SETUSER", "cache", "on", ">" + userPassword, "~kache:*", "&*", "+@all"])
                    #expect(made.output.contains("OK"), "\(made)")
                }
                let credentials = RedisCredentials(username: "cache", password: userPassword)
                let (client, otherClient) = (cluster.client(credentials: credentials), cluster.client(credentials: credentials))
                #expect(try await client.send(RedisCommand(["ACL", "WHOAMI"], keyIndex: nil)).string == "cache")
                let connection = try await client.pool(for: client.refreshTopology().masterNodes[0]).connection()
                #expect(connection.protocolVersion == 3, "one HELLO 3 AUTH settled both")

                let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
                let other = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: otherClient)
                #expect(cache.isTrackingInvalidations && other.isTrackingInvalidations)
                try await cache.set(Data("one".utf8), forKey: "k", ttl: .seconds(60))
                #expect(await other.data(forKey: "k") == Data("one".utf8))
                try await cache.set(Data("two".utf8), forKey: "k", ttl: .seconds(60))
                try await waitUntil("the change drops the other copy", timeout: .seconds(5)) { await other.local.data(forKey: "k") == nil }

                let outside = await clientError { try await client.send(RedisCommand(["SET", "elsewhere:k", "v"], keyIndex: 1)) }
                guard case let .server(message) = outside, message.hasPrefix("NOPERM") else {
                    Issue.record("a key outside ~kache:* was written: \(String(describing: outside))")
                    return
                }
                let impostor = cluster.client(credentials: RedisCredentials(username: "cache", password: password))
                let refused = await clientError { try await impostor.send(RedisCommand(["PING"], keyIndex: nil)) }
                #expect(refused?.refusedUsername == "cache", "\(String(describing: refused))")
                await impostor.shutdown()
                await cache.close()
                await other.close()
                await client.shutdown()
                await otherClient.shutdown()
            }
        }
    }
}

/// A server without `HELLO` (as before Redis 6): one of our own, with the
/// command renamed away. No cluster.
@Suite(.enabled(if: LiveCluster.isAvailable, "redis-server is not installed"))
struct HandshakeFallbackTests {
    @Test(.timeLimit(.minutes(1))) func aServerWithoutHELLOIsAuthenticatedWithAUTHOnRESP2() async throws {
        let port = try SilentServer.freePort()
        let password = "pw-\(UUID().uuidString.prefix(12))"
        let server = try ChildProcess([
            "redis-server", "--port", String(port), "--bind", "127.0.0.1", "--requirepass", password,
            "--rename-command", "HELLO", "\"\"", "--save", "\"\"", "--appendonly", "no",
        ])
        defer {
            server.signal(SIGTERM)
            _ = try? server.wait(timeout: .seconds(10))
        }
        let address = NodeAddress(host: "127.0.0.1", port: port)
        let options = RedisConnection.Options(credentials: RedisCredentials(password: password))
        var opened: RedisConnection?
        try await waitUntil("the server accepts connections", timeout: .seconds(10)) {
            opened = try? await RedisConnection.connect(to: address, options: options)
            return opened != nil
        }
        let connection = try #require(opened)
        #expect(connection.protocolVersion == 2)
        #expect(try await connection.send(["ACL", "WHOAMI"]).string == "default")
        #expect(try await connection.send(["PING"]).string == "PONG")
        connection.close()

        var wrong = options
        wrong.credentials = RedisCredentials(password: "not-" + password)
        let error = await clientError { _ = try await RedisConnection.connect(to: address, options: wrong) }
        #expect(error?.isAuthenticationFailed == true, "\(String(describing: error))")

        var resp2 = options
        resp2.prefersRESP3 = false
        let plain = try await RedisConnection.connect(to: address, options: resp2)
        #expect(plain.protocolVersion == 2)
        #expect(try await plain.send(["PING"]).string == "PONG")
        plain.close()
    }
}
