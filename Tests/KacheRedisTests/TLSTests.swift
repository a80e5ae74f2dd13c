import Foundation
import Kache
import KacheTestSupport
import Testing
@testable import KacheRedis

extension LiveClusterTests {
    /// Clusters that serve TLS only, with certificates each test makes with openssl.
    @Suite struct TLSTests {
        private let password = "pw-\(UUID().uuidString.prefix(12))"

        /// Over TLS (and a password), a value set through one cache is read
        /// through another and its change reaches the other's listener; the
        /// nodes' certificates are checked against their address, 127.0.0.1,
        /// or a configured server name. Without a client certificate the
        /// nodes (tls-auth-clients yes) refuse the handshake.
        @Test(.timeLimit(.minutes(2))) func aTLSClusterServesTheTieredCacheAndItsInvalidations() async throws {
            let certificates = try await TestCertificates.make()
            try await LiveCluster.with(password: password, certificates: certificates) { cluster in
                // One client checks the nodes' certificates against 127.0.0.1, the other against a name.
                let writerClient = cluster.client()
                let readerClient = cluster.client(tls: try certificates.configuration(serverName: TestCertificates.serverName))
                let writer = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: writerClient)
                let reader = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: readerClient)
                #expect(writer.isTrackingInvalidations && reader.isTrackingInvalidations)
                try await writer.set(Data("first".utf8), forKey: "k", ttl: .seconds(60))
                #expect(await reader.data(forKey: "k") == Data("first".utf8))
                try await writer.set(Data("second".utf8), forKey: "k", ttl: .seconds(60))
                try await waitUntil("the change drops the reader's copy", timeout: .seconds(5)) { await reader.local.data(forKey: "k") == nil }
                #expect(await reader.data(forKey: "k") == Data("second".utf8))
                #expect(writer.statistics.writeErrors == 0 && reader.statistics.readErrors == 0)
                #expect(try await cluster.cli(cluster.ports[0], ["GET", "kache:k"]).status == 0, "redis-cli reaches it over TLS too")

                let anonymous = cluster.client(tls: try RedisTLSConfiguration(caBundlePath: certificates.caBundle))
                let refused = await clientError { try await anonymous.send(RedisCommand(["PING"], keyIndex: nil)) }
                #expect(refused != nil, "a client without a certificate was let in")
                await anonymous.shutdown()
                await writer.close()
                await reader.close()
                await writerClient.shutdown()
                await readerClient.shutdown()
            }
        }

        /// The convenience initializer from seeds takes the credentials and
        /// TLS the cluster client's configuration takes: the cache it opens
        /// reaches a TLS cluster with a password, writes, reads and tracks.
        @Test(.timeLimit(.minutes(2))) func aCacheOpenedFromSeedsUsesItsCredentialsAndTLS() async throws {
            let certificates = try await TestCertificates.make()
            try await LiveCluster.with(password: password, certificates: certificates) { cluster in
                let cache = try await TieredCache(
                    local: try Kache(inMemory: Kache.Configuration()), seeds: cluster.seeds.map(\.description),
                    credentials: RedisCredentials(password: password), tls: certificates.configuration
                )
                #expect(cache.isTrackingInvalidations, "the listener's connections authenticated over TLS")
                try await cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
                await cache.local.removeValue(forKey: "k")
                #expect(await cache.data(forKey: "k") == Data("v".utf8))
                #expect(cache.statistics.writeErrors == 0 && cache.statistics.readErrors == 0)
                #expect(cache.client.configuration.credentials?.password == password)
                await cache.close()
            }
        }

        /// A client that trusts another CA refuses every node, with its own
        /// error, at once; the local tier keeps answering.
        @Test(.timeLimit(.minutes(1))) func aCertificateFromAnUnknownCAIsRefusedAsUntrusted() async throws {
            let certificates = try await TestCertificates.make()
            let stranger = try await TestCertificates.make()
            try await LiveCluster.with(certificates: certificates) { cluster in
                let client = cluster.client(tls: try RedisTLSConfiguration(
                    caBundlePath: stranger.caBundle,
                    clientCertificatePath: certificates.clientCertificate, clientPrivateKeyPath: certificates.clientKey
                ))
                let error = await clientError { try await client.send(RedisCommand(["PING"], keyIndex: nil)) }
                #expect(error?.isCertificateNotTrusted == true, "\(String(describing: error))")
                try await expectTheLocalTierServes(through: client)
                await client.shutdown()
            }
        }

        /// Nodes whose certificate names only another server are refused, with
        /// the name that was expected, unless that other name is the
        /// configured server name: the name check is what refuses them.
        @Test(.timeLimit(.minutes(1))) func aCertificateForAnotherNameIsRefusedAsAServerNameMismatch() async throws {
            let authority = try await TestCertificates.make()
            let elsewhere = try await TestCertificates.make(subjectAlternativeNames: "DNS:elsewhere.kache.test", signedBy: authority)
            try await LiveCluster.with(certificates: elsewhere) { cluster in
                let byAddress = cluster.client()
                let error = await clientError { try await byAddress.send(RedisCommand(["PING"], keyIndex: nil)) }
                #expect(error?.expectedServerName == "127.0.0.1", "\(String(describing: error))")
                try await expectTheLocalTierServes(through: byAddress)
                await byAddress.shutdown()

                let byWrongName = cluster.client(tls: try elsewhere.configuration(serverName: TestCertificates.serverName))
                let wrongName = await clientError { try await byWrongName.send(RedisCommand(["PING"], keyIndex: nil)) }
                #expect(wrongName?.expectedServerName == TestCertificates.serverName, "\(String(describing: wrongName))")
                await byWrongName.shutdown()

                let byItsName = cluster.client(tls: try elsewhere.configuration(serverName: "elsewhere.kache.test"))
                #expect(try await byItsName.send(RedisCommand(["PING"], keyIndex: nil)).string == "PONG")
                await byItsName.shutdown()
            }
        }

        /// With `client` refused by every node: a local set is kept, a get of
        /// it is answered locally, a get of anything else is nil, and none
        /// waits for retries.
        private func expectTheLocalTierServes(through client: RedisClusterClient) async throws {
            let cache = await TieredCache(local: try Kache(inMemory: Kache.Configuration()), client: client)
            try await cache.set(Data("kept".utf8), forKey: "kept", ttl: .seconds(60))
            let started = ContinuousClock.now
            #expect(await cache.data(forKey: "kept") == Data("kept".utf8))
            #expect(await cache.data(forKey: "absent") == nil)
            #expect(ContinuousClock.now - started < .seconds(1), "a refusal is not retried")
            #expect(cache.statistics.localHits == 1 && cache.statistics.readErrors == 1 && cache.statistics.writeErrors == 1)
            await cache.close()
        }
    }
}
