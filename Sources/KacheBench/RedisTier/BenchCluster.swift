import Foundation
import KacheRedis

/// The Redis Cluster a `--tier redis` run measures: one given by
/// `--redis-seeds`, or one started by scripts/redis-cluster.sh for the run
/// (3 masters, no replicas) and stopped by ``stop()`` (by the script, which
/// ends exactly the servers it started).
struct BenchCluster {
    let seeds: [NodeAddress]
    private let state: String?

    static func start(seeds: String?) throws -> BenchCluster {
        if let seeds {
            let nodes = seeds.split(separator: ",").compactMap { NodeAddress($0) }
            guard !nodes.isEmpty else { throw BenchClusterError("--redis-seeds has no host:port") }
            return BenchCluster(seeds: nodes, state: nil)
        }
        let output = try Self.script(["start", "--replicas", "0", "--owner-pid", String(getpid())])
        var fields: [String: String] = [:]
        for line in output.split(separator: "\n") {
            if let equals = line.firstIndex(of: "=") { fields[String(line[..<equals])] = String(line[line.index(after: equals)...]) }
        }
        guard let state = fields["KACHE_REDIS_STATE"], let seeds = fields["KACHE_REDIS_SEEDS"] else {
            throw BenchClusterError("scripts/redis-cluster.sh start printed no cluster: \(output)")
        }
        return BenchCluster(seeds: seeds.split(separator: ",").compactMap { NodeAddress($0) }, state: state)
    }

    func stop() {
        guard let state else { return }
        _ = try? Self.script(["stop", "--state", state])
    }

    /// `redis-benchmark --cluster` against this cluster, as CSV; returns its rows by test name.
    func redisBenchmark(_ arguments: [String]) throws -> [String: RedisBenchmarkRow] {
        let node = seeds[0]
        let output = try Self.run(["redis-benchmark", "--cluster", "-h", node.host, "-p", String(node.port), "--csv"] + arguments)
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
