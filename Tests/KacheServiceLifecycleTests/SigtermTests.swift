import Foundation
import Kache
import KacheTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real SIGTERM to a process that runs its cache in a `ServiceGroup`
/// (`KacheLifecycleFixture`, `async` durability): the group shuts down
/// gracefully, the cache's service saves and closes it, and the process exits 0.
@Suite struct SigtermTests {
    private static let fixture = ChildProcess.product(named: "KacheLifecycleFixture", environment: "KACHE_LIFECYCLE_FIXTURE")

    @Test(.timeLimit(.minutes(1))) func sigtermWhileSettingKeepsEveryAcknowledgedSetAndExitsZero() async throws {
        let fixture = try #require(Self.fixture, "KacheLifecycleFixture was not built beside the tests")
        let directory = TemporaryDirectory()
        let streams = TemporaryDirectory("streams")
        try FileManager.default.createDirectory(at: streams.url, withIntermediateDirectories: true)
        let stderrPath = streams.url.appendingPathComponent("stderr").path
        let child = try ChildProcess(
            [fixture, directory.path], stdout: .file(streams.url.appendingPathComponent("stdout").path), stderr: .file(stderrPath)
        )
        defer { if !child.hasExited() { try? child.kill() } }

        // The signal comes while the writer is still setting keys: it stops at
        // its limit of 100,000 only long after this.
        try await waitUntil("the fixture acknowledged 200 sets", timeout: .seconds(20)) {
            child.output().contains("\nset key-199 ") || child.hasExited()
        }
        try #require(!child.hasExited(), "the fixture exited before the signal: \(Self.text(atPath: stderrPath))")
        child.signal(SIGTERM)
        let status = try await child.exit(within: .seconds(10))
        #expect(status == 0, "stderr: \(Self.text(atPath: stderrPath))")

        let lines = child.output().split(separator: "\n")
        let acknowledged = lines.filter { $0.hasPrefix("set ") }.map { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            return (key: String(fields[1]), value: Data(fields[2].utf8))
        }
        #expect(acknowledged.count >= 200)
        #expect(acknowledged.count < 100_000, "the writer reached its limit: the signal came after the writes, not during them")
        #expect(lines.last == "stopped \(acknowledged.count)", "the writer saw the graceful shutdown")

        var configuration = Kache.Configuration()
        configuration.durability = .async
        let reopened = try Kache(directory: directory.url, configuration: configuration)
        defer { try? reopened.close() }
        // Read with the blocking call: the async one returns nil once the
        // test's task is cancelled (its time limit), and a loaded machine
        // then reported the keys after that point as lost.
        let read: (String) -> Data? = { reopened.data(forKey: $0) }
        let missing = acknowledged.filter { read($0.key) != $0.value }.map(\.key)
        #expect(missing.count == 0, "\(missing.count) of \(acknowledged.count) acknowledged sets lost, the first \(missing.prefix(5))")
        #expect(reopened.statistics.entries == acknowledged.count, "no key but the acknowledged ones")
    }

    private static func text(atPath path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
}
