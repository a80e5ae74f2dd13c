import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A running child process (the crash harness, or the `kache` tool), its
/// stdout going to a file.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, so that the
/// test owns the pid outright: it sends SIGKILL itself and reaps the child
/// with `waitpid`, never racing a run loop for its exit status.
final class ChildProcess {
    let pid: pid_t
    /// Where the child's stdout goes.
    let outputPath: String
    private(set) var exitStatus: Int32?

    /// The package's executable `name`: `$environment` when set, else the file
    /// of that name in the products folder beside the test bundle (`swift
    /// build --build-tests` builds them all there).
    static func product(named name: String, environment: String) -> String? {
        if let path = ProcessInfo.processInfo.environment[environment] { return path }
        var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        folders += [argument0.deletingLastPathComponent(), argument0.deletingLastPathComponent().deletingLastPathComponent()]
        return folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `KacheCrashHarness` (`$KACHE_CRASH_HARNESS` overrides where it is) with `arguments`.
    static func harness(_ arguments: [String], outputPath: String) throws -> ChildProcess {
        let executable = try #require(
            product(named: "KacheCrashHarness", environment: "KACHE_CRASH_HARNESS"),
            "KacheCrashHarness was not found beside the test bundle; build it with `swift build --build-tests` or set KACHE_CRASH_HARNESS"
        )
        return try ChildProcess(executable: executable, arguments: arguments, outputPath: outputPath)
    }

    /// Starts the `kache` tool (`$KACHE_BINARY` overrides where it is) with `arguments`.
    static func kache(_ arguments: [String], outputPath: String) throws -> ChildProcess {
        let executable = try #require(
            product(named: "kache", environment: "KACHE_BINARY"),
            "kache was not found beside the test bundle; build it with `swift build --build-tests` or set KACHE_BINARY"
        )
        return try ChildProcess(executable: executable, arguments: arguments, outputPath: outputPath)
    }

    /// Starts `executable` with `arguments`, its stdout into `outputPath` (truncated).
    init(executable: String, arguments: [String], outputPath: String) throws {
        self.outputPath = outputPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv + [nil], environ)
        guard code == 0 else { throw ChildProcessError.spawnFailed(errno: code) }
        pid = child
    }

    deinit {
        if exitStatus == nil {
            Glibc.kill(pid, SIGKILL)
            _ = try? wait(timeout: 10)
        }
    }

    /// What the child printed so far.
    func output() -> String {
        String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
    }

    /// Waits until the child printed a line starting with `prefix`, or exited,
    /// or `timeout` seconds passed; returns that line.
    func waitForLine(startingWith prefix: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = output().split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            if hasExited() { return nil }
            usleep(1000)
        }
        return nil
    }

    /// Kills the child with SIGKILL and reaps it.
    func kill() throws {
        guard exitStatus == nil else { return }
        Glibc.kill(pid, SIGKILL)
        try wait(timeout: 10)
    }

    /// Waits for the child to end; throws when it is still running after `timeout` seconds.
    @discardableResult
    func wait(timeout: Double) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while !hasExited() {
            guard Date() < deadline else { throw ChildProcessError.stillRunning(pid: pid, seconds: timeout) }
            usleep(1000)
        }
        return exitStatus!
    }

    /// Whether the child ended (reaping it if so).
    private func hasExited() -> Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        guard reaped == pid else { return false }
        // WIFEXITED / WTERMSIG by hand: Glibc's macros are not imported.
        let signal = status & 0x7F
        exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        return true
    }
}

enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(errno: Int32)
    case stillRunning(pid: pid_t, seconds: Double)

    var description: String {
        switch self {
        case let .spawnFailed(code): return "posix_spawn failed: \(String(cString: strerror(code)))"
        case let .stillRunning(pid, seconds): return "the child process (pid \(pid)) was still running after \(seconds) s"
        }
    }
}
