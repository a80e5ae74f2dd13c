import Foundation
import KacheTestSupport
import Testing

/// The helper every test starts its children with (tools, servers, the Redis
/// cluster). The exit status is what those tests trust, so it is checked under
/// the load of many children ending at once (a status of -1 for a child that
/// exited 0 once failed a CI run).
@Suite struct ChildProcessTests {
    @Test func everyChildsOwnStatusIsReported() async throws {
        try await withThrowingTaskGroup(of: [Int32].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var statuses: [Int32] = []
                    for round in 0..<40 {
                        let code = round % 3
                        statuses.append(try await ChildProcess.run(["sh", "-c", "exit \(code)"], timeout: .seconds(20)).status - Int32(code))
                    }
                    return statuses
                }
            }
            for try await differences in group {
                #expect(differences.allSatisfy { $0 == 0 }, "statuses off by \(differences.filter { $0 != 0 })")
            }
        }
    }

    @Test func outputAndEnvironmentReachTheCaller() async throws {
        let outcome = try await ChildProcess.run(
            ["sh", "-c", "echo \"out $KACHE_TEST_WORD\"; echo err >&2; exit 7"], environment: ["KACHE_TEST_WORD": "here"], timeout: .seconds(20)
        )
        #expect(outcome.status == 7)
        #expect(outcome.output == "out here\n")
        #expect(outcome.stderr == "err\n")
    }

    /// The child never ends by itself (`sleep` is spawned directly, no shell,
    /// so SIGKILL ends it): only the helper's kill can end it. No bound on the
    /// wall time here: under the whole suite the test pool's two threads can
    /// be busy for longer than any child here takes.
    @Test func aChildThatOutlivesItsTimeIsKilled() async throws {
        let error = await #expect(throws: ChildProcessError.self) {
            _ = try await ChildProcess.run(["sleep", "600"], timeout: .milliseconds(200))
        }
        guard case .timedOut = error else { Issue.record("\(String(describing: error))"); return }
    }

    /// The test pool's threads block signals; a child (and the servers the
    /// cluster script daemonizes from it) must not inherit that, or a
    /// SIGTERM from `stop` or from `timeout` would never reach them.
    @Test func aChildStartsWithNoSignalBlockedOrIgnored() async throws {
        let outcome = try await ChildProcess.run(["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"], timeout: .seconds(20))
        let masks = outcome.output.split(separator: "\n").compactMap { $0.split(separator: "\t").last.flatMap { UInt64($0, radix: 16) } }
        // Signals 1 to 31, the standard ones (glibc keeps two real-time signals of its own ignored).
        let standard: UInt64 = 1 << 31 - 1
        #expect(outcome.status == 0 && masks.count == 2 && masks.allSatisfy { $0 & standard == 0 }, "\(outcome.output)")
    }

    @Test func aMissingCommandIsATypedError() async throws {
        let error = await #expect(throws: ChildProcessError.self) {
            _ = try await ChildProcess.run(["kache-no-such-command"], timeout: .seconds(5))
        }
        guard case .spawnFailed(_, ENOENT) = error else { Issue.record("\(String(describing: error))"); return }
    }

    /// A child holds none of the test process's descriptors: one inherited
    /// would keep, say, a cache's lock held for as long as the child lives.
    @Test func aChildGetsOnlyItsThreeStandardStreams() throws {
        let descriptor = open("/dev/null", O_RDONLY)   // without O_CLOEXEC
        defer { close(descriptor) }
        #expect(descriptor > 2)
        let outcome = try ChildProcess.run(["ls", "/proc/self/fd"], timeout: .seconds(20))
        // 0, 1, 2, and the one `ls` opened to read the folder.
        let open = outcome.output.split(separator: "\n").compactMap { Int32($0) }
        #expect(outcome.status == 0 && open.count == 4 && !open.contains(descriptor), "\(outcome)")
    }

    /// A synchronous wait blocks its thread but needs no other: children end
    /// and are seen while every thread of the cooperative pool waits in one.
    /// (Foundation's `Process` needs a CoreFoundation thread to reap; a
    /// `chattr` it never reaped once hung the whole test run.)
    @Test func synchronousWaitsOnEveryThreadOfThePoolAllReturn() async throws {
        let waits = 2 * ProcessInfo.processInfo.activeProcessorCount
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for code in 0..<waits {
                group.addTask { try ChildProcess.run(["sh", "-c", "sleep 0.2; exit \(code)"], timeout: .seconds(60)).status }
            }
            var statuses: [Int32] = []
            for try await status in group { statuses.append(status) }
            #expect(statuses.sorted() == (0..<Int32(waits)).map { $0 })
        }
    }
}
