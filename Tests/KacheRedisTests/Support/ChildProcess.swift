import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to its end without blocking a thread of the test pool:
/// its exit is polled, and a command that outlives `timeout` is killed (by
/// its own pid) and reported.
///
/// Spawned with `posix_spawnp`, not Foundation's `Process`: `Process` reaps
/// its child on a thread of its own, so a `waitpid` of ours could find the
/// child already gone while `isRunning` still said otherwise, and a cluster
/// that had started was reported as failed with status -1 (seen in CI).
/// Here the test is the only one that waits for the pid.
enum ChildProcess {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    struct TimedOut: Error, CustomStringConvertible {
        var command: [String]
        var description: String { "\(command.joined(separator: " ")) did not finish in time and was killed" }
    }

    struct SpawnFailed: Error, CustomStringConvertible {
        var command: [String]
        var code: Int32
        var description: String { "\(command.joined(separator: " ")) could not be started: \(String(cString: strerror(code)))" }
    }

    static func run(_ command: [String], environment: [String: String] = [:], timeout: Duration) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-redis-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("out").path, errPath = scratch.appendingPathComponent("err").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = command.map { strdup($0) }, envp = variables.map { strdup($0) }
        defer { (argv + envp).forEach { free($0) } }
        // The calling thread (one of the test pool's) blocks nearly every
        // signal, and a spawned child would inherit that mask, and so would
        // the servers it daemonizes: every signal starts at its default, unblocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, command[0], &actions, &attributes, argv + [nil], envp + [nil])
        guard code == 0 else { throw SpawnFailed(command: command, code: code) }

        let deadline = ContinuousClock.now + timeout
        var status: Int32 = -1
        var timedOut = false
        // Polled, each wait 20 ms of sleep, so no thread of the pool is blocked.
        while true {
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                // WIFEXITED / WTERMSIG by hand: Glibc's macros are not imported.
                status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
                break
            }
            if reaped == -1 && errno != EINTR { break }   // not ours to wait for: cannot happen, reported as -1
            if ContinuousClock.now >= deadline && !timedOut {
                kill(pid, SIGKILL)
                timedOut = true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let outcome = Outcome(
            status: status,
            stdout: String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self),
            stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        )
        if timedOut { throw TimedOut(command: command) }
        return outcome
    }
}
