import Foundation
import KacheRedis
import KacheTestSupport
import Logging
import Testing

/// A Redis Cluster of this test's own, started by scripts/redis-cluster.sh on
/// 127.0.0.1 and always stopped: after the body, whether it returned or threw,
/// and by the script's watcher if the test process dies first.
struct LiveCluster {
    let state: String
    let seeds: [NodeAddress]
    /// Every node's port, masters first as created, then replicas.
    let ports: [Int]
    /// The pid of each node, in the order of `ports`.
    let pids: [Int32]
    /// The default user's password, when the cluster requires one.
    var password: String? = nil
    /// The certificates the nodes serve TLS with, when they do.
    var certificates: TestCertificates? = nil

    static let script: String = {
        var folder = URL(fileURLWithPath: #filePath)
        while folder.path != "/" {
            folder.deleteLastPathComponent()
            let candidate = folder.appendingPathComponent("scripts/redis-cluster.sh")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
        }
        return "scripts/redis-cluster.sh"
    }()

    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") || FileManager.default.isExecutableFile(atPath: "/usr/local/bin/redis-server")
    }

    /// Runs `body` with a fresh cluster (3 masters, and 3 replicas when
    /// `replicas`), requiring `password` when given, serving TLS only with
    /// `certificates` when given.
    static func with<T>(
        replicas: Bool = false, password: String? = nil, certificates: TestCertificates? = nil,
        _ body: (LiveCluster) async throws -> T
    ) async throws -> T {
        var arguments = ["bash", script, "start", "--replicas", replicas ? "1" : "0", "--owner-pid", String(getpid())]
        if let password { arguments += ["--password", password] }
        if let certificates { arguments += ["--tls", certificates.path] }
        let started = try await ChildProcess.run(arguments, timeout: .seconds(90))
        let fields = Dictionary(uniqueKeysWithValues: started.output.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        })
        guard started.status == 0, let state = fields["KACHE_REDIS_STATE"], let seeds = fields["KACHE_REDIS_SEEDS"] else {
            Issue.record("redis-cluster.sh start failed (\(started.status)): \(started.stderr)\n\(started.output)")
            throw CancellationError()
        }
        let cluster = LiveCluster(
            state: state,
            seeds: seeds.split(separator: ",").compactMap { NodeAddress($0) },
            ports: ((try? String(contentsOfFile: state + "/ports", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int($0) },
            pids: ((try? String(contentsOfFile: state + "/pids", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) },
            password: password, certificates: certificates
        )
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }

    func stop() async {
        _ = try? await ChildProcess.run(["bash", Self.script, "stop", "--state", state], timeout: .seconds(30))
    }

    /// `redis-cli` against node `port`, bounded in time, with the cluster's
    /// TLS and password (in `REDISCLI_AUTH`, not on the command line).
    func cli(_ port: Int, _ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ChildProcess.Outcome {
        var tls: [String] = []
        if let certificates {
            tls = ["--tls", "--cacert", certificates.caBundle, "--cert", certificates.clientCertificate, "--key", certificates.clientKey]
        }
        return try await ChildProcess.run(
            ["redis-cli", "-h", "127.0.0.1", "-p", String(port)] + tls + arguments,
            environment: password.map { ["REDISCLI_AUTH": $0] } ?? [:], timeout: timeout
        )
    }

    /// A client configured for tests: short timeouts, quick back-off; with
    /// the cluster's password and TLS unless others are given.
    func client(
        connectionsPerNode: Int = 2, readFrom: ReadPreference = .master, credentials: RedisCredentials?? = nil,
        tls: RedisTLSConfiguration?? = nil, logger: Logger = Logger(label: "kache.redis")
    ) -> RedisClusterClient {
        var configuration = RedisClusterConfiguration(
            seeds: seeds, connectionsPerNode: connectionsPerNode,
            connection: RedisConnection.Options(
                commandTimeout: .seconds(2), connectTimeout: .milliseconds(500),
                credentials: credentials ?? password.map { RedisCredentials(password: $0) },
                tls: tls ?? certificates?.configuration
            ),
            reconnectBackoff: Backoff(base: .milliseconds(10), maximum: .milliseconds(200)),
            maximumAttempts: 40, retryBudget: .seconds(5), logger: logger
        )
        configuration.readFrom = readFrom
        return RedisClusterClient(configuration: configuration)
    }
}
