import Testing

/// The helper every live-cluster test starts its servers with. Its exit status
/// is what those tests trust, so it is checked under the load of many
/// children ending at once (a status of -1 for a child that exited 0 once
/// failed a CI run).
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
        #expect(outcome.stdout == "out here\n")
        #expect(outcome.stderr == "err\n")
    }

    /// The child never ends by itself (`sleep` is spawned directly, no shell,
    /// so SIGKILL ends it): only the helper's kill can end it. No bound on the
    /// wall time here: under the whole suite the test pool's two threads can
    /// be busy for longer than any child here takes.
    @Test func aChildThatOutlivesItsTimeIsKilled() async throws {
        await #expect(throws: ChildProcess.TimedOut.self) {
            _ = try await ChildProcess.run(["sleep", "600"], timeout: .milliseconds(200))
        }
    }

    /// The test pool's threads block signals; a child (and the servers the
    /// cluster script daemonizes from it) must not inherit that, or a
    /// SIGTERM from `stop` or from `timeout` would never reach them.
    @Test func aChildStartsWithNoSignalBlockedOrIgnored() async throws {
        let outcome = try await ChildProcess.run(["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"], timeout: .seconds(20))
        let masks = outcome.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").last.flatMap { UInt64($0, radix: 16) } }
        // Signals 1 to 31, the standard ones (glibc keeps two real-time signals of its own ignored).
        let standard: UInt64 = 1 << 31 - 1
        #expect(outcome.status == 0 && masks.count == 2 && masks.allSatisfy { $0 & standard == 0 }, "\(outcome.stdout)")
    }

    @Test func aMissingCommandIsATypedError() async throws {
        await #expect(throws: ChildProcess.SpawnFailed.self) {
            _ = try await ChildProcess.run(["kache-no-such-command"], timeout: .seconds(5))
        }
    }
}
