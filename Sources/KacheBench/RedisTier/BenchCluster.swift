import Foundation
import KacheRedis

/// The Redis Cluster a `--tier redis` run measures: one given by
/// `--redis-seeds`, or one started by scripts/redis-cluster.sh for the run
/// (3 masters, no replicas) and stopped by ``stop()`` (by the script, which
/// ends exactly the servers it started). With TLS, the started cluster
/// serves TLS only, with a CA and certificates the script makes for the run.
struct BenchCluster {
    let seeds: [NodeAddress]
    /// The client's TLS (and redis-benchmark's files), when the cluster is measured over TLS.
    let tls: RedisTLSConfiguration?
    private let state: String?
    /// Certificates made for the run, removed by ``stop()``.
    private let madeCertificates: String?

    static func start(seeds: String?, tls: Bool, certificates given: String?) throws -> BenchCluster {
        var certificates = tls ? given : nil
        var made: String?
        if tls, certificates == nil {
            guard seeds == nil else { throw BenchClusterError("--redis-tls with --redis-seeds needs --redis-tls-certificates") }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kache-bench-tls-\(UUID().uuidString)").path
            _ = try Self.script(["certs", folder])
            (certificates, made) = (folder, folder)
        }
        let configuration = try certificates.map { folder in
            let client = FileManager.default.fileExists(atPath: folder + "/client.crt")
            return try RedisTLSConfiguration(
                caBundlePath: folder + "/ca.crt",
                clientCertificatePath: client ? folder + "/client.crt" : nil, clientPrivateKeyPath: client ? folder + "/client.key" : nil
            )
        }
        if let seeds {
            let nodes = seeds.split(separator: ",").compactMap { NodeAddress($0) }
            guard !nodes.isEmpty else { throw BenchClusterError("--redis-seeds has no host:port") }
            return BenchCluster(seeds: nodes, tls: configuration, state: nil, madeCertificates: made)
        }
        let output = try Self.script(["start", "--replicas", "0", "--owner-pid", String(getpid())] + (certificates.map { ["--tls", $0] } ?? []))
        var fields: [String: String] = [:]
        for line in output.split(separator: "\n") {
            if let equals = line.firstIndex(of: "=") { fields[String(line[..<equals])] = String(line[line.index(after: equals)...]) }
        }
        guard let state = fields["KACHE_REDIS_STATE"], let seeds = fields["KACHE_REDIS_SEEDS"] else {
            throw BenchClusterError("scripts/redis-cluster.sh start printed no cluster: \(output)")
        }
        return BenchCluster(
            seeds: seeds.split(separator: ",").compactMap { NodeAddress($0) }, tls: configuration,
            state: state, madeCertificates: made
        )
    }

    func stop() {
        if let state { _ = try? Self.script(["stop", "--state", state]) }
        if let madeCertificates { try? FileManager.default.removeItem(atPath: madeCertificates) }
    }

    /// How redis-benchmark reaches the nodes over TLS: `--tls --cacert …`, and the client certificate when there is one.
    var redisBenchmarkTLSArguments: [String] {
        guard let tls else { return [] }
        var arguments = ["--tls", "--cacert", tls.caBundlePath]
        if let certificate = tls.clientCertificatePath, let key = tls.clientPrivateKeyPath { arguments += ["--cert", certificate, "--key", key] }
        return arguments
    }

    /// `redis-benchmark --cluster` against this cluster (over TLS when the
    /// client uses it), as CSV; returns its rows by test name.
    func redisBenchmark(_ arguments: [String]) throws -> [String: RedisBenchmarkRow] {
        let node = seeds[0]
        let output = try Self.run(["redis-benchmark", "--cluster", "-h", node.host, "-p", String(node.port), "--csv"] + redisBenchmarkTLSArguments + arguments)
        return RedisBenchmarkRow.parse(csv: output)
    }

    private static func script(_ arguments: [String]) throws -> String {
        let candidates: [String?] = [ProcessInfo.processInfo.environment["KACHE_REDIS_CLUSTER_SCRIPT"], "scripts/redis-cluster.sh",
                          URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../scripts/redis-cluster.sh").standardized.path]
        guard let path = candidates.compactMap({ $0 }).first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw BenchClusterError("scripts/redis-cluster.sh not found: run from the repository, or set KACHE_REDIS_CLUSTER_SCRIPT")
        }
        return try run(["bash", path] + arguments)
    }

    /// Runs `command` to its end; its output goes to a file, not a pipe: the
    /// servers the script daemonizes would hold a pipe open, and a read to its
    /// end would never return.
    private static func run(_ command: [String]) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kache-bench-redis-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try FileHandle(forWritingTo: file)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let data = try Data(contentsOf: file)
        guard process.terminationStatus == 0 else {
            throw BenchClusterError("\(command.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

struct BenchClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One line of `redis-benchmark --csv`: a test's requests per second and latency percentiles.
struct RedisBenchmarkRow {
    var requestsPerSecond: Double
    var p50Milliseconds: Double

    /// Reads `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",…` rows.
    static func parse(csv: String) -> [String: RedisBenchmarkRow] {
        var rows: [String: RedisBenchmarkRow] = [:]
        for line in csv.split(separator: "\n") {
            let cells = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" \r")) }
            guard cells.count >= 5, let rps = Double(cells[1]), let p50 = Double(cells[4]) else { continue }
            rows[cells[0]] = RedisBenchmarkRow(requestsPerSecond: rps, p50Milliseconds: p50)
        }
        return rows
    }
}
