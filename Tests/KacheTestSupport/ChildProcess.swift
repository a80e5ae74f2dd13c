import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A process a test starts: a tool of ours (`kache`, `kache-bench`, the crash
/// harness), a system command, a server. The one way the tests start children.
///
/// Spawned with `posix_spawnp` and reaped only by our own `waitpid`, never by
/// Foundation's `Process`. `Process` learns of its child's exit through a
/// socket watched by a CoreFoundation thread with `select`, and reaps it there.
/// Two faults of that came out in this suite: a `waitpid` of ours found the
/// child already reaped (a cluster that had started reported status -1), and
/// a `chattr` that had exited stayed a zombie, its `waitUntilExit` never
/// returned, and with the other cooperative thread blocked the whole test run
/// hung. A `waitpid` needs no other thread, so no wait here can deadlock.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let command: [String]
    /// The file the child's stdout goes to, when it goes to one.
    public let outputPath: String?
    private let status = Mutex<Int32?>(nil)

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// /dev/null.
        case null
        /// A file: read from for stdin; created or truncated for stdout and stderr.
        case file(String)
        /// A descriptor of the caller's (a pipe's end), duplicated into the child.
        case descriptor(Int32)
    }

    /// Starts `command` (its first word looked up on `PATH` unless it holds a
    /// `/`), with the test process's environment plus `environment`.
    ///
    /// The child gets only its three standard streams (no descriptor of the
    /// test process: a cache's lock would stay held while the child lives),
    /// and every signal unblocked and at its default (the test pool's threads
    /// block nearly all, and a child, and every server it daemonizes, would
    /// inherit that mask and ignore SIGTERM).
    public init(
        _ command: [String], environment: [String: String] = [:],
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws(ChildProcessError) {
        precondition(!command.isEmpty, "a command has at least its name")
        self.command = command
        if case let .file(path) = stdout { outputPath = path } else { outputPath = nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(STDIN_FILENO, stdin), (STDOUT_FILENO, stdout), (STDERR_FILENO, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0)
            case let .file(path):
                let flags = descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o600)
            case let .descriptor(source):
                posix_spawn_file_actions_adddup2(&actions, source, descriptor)
            }
        }
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, STDERR_FILENO + 1) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = command.map { strdup($0) }, envp = variables.map { strdup($0) }
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawnp(&child, command[0], &actions, &attributes, argv + [nil], envp + [nil])
        guard code == 0 else { throw .spawnFailed(command: command, code: code) }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which
    /// Swift's Glibc module does not import; nil where the C library lacks it.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// A child still running when its last reference goes is killed and reaped.
    deinit {
        if !hasExited() {
            Glibc.kill(pid, SIGKILL)
            _ = try? wait(timeout: .seconds(10))
        }
    }

    /// The exit status (128 + the signal for a child a signal ended), or nil while it runs.
    public var exitStatus: Int32? {
        _ = hasExited()
        return status.withLock { $0 }
    }

    /// Whether the child ended, reaping it if so.
    @discardableResult
    public func hasExited() -> Bool {
        status.withLock { status in
            if status != nil { return true }
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                // WIFEXITED / WTERMSIG by hand: Glibc's macros are not imported.
                status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            } else if reaped == -1 && errno == ECHILD {
                status = -1   // not ours to wait for: only when something else reaped it
            }
            return status != nil
        }
    }

    /// What the child printed on stdout so far (when it goes to a file).
    public func output() -> String {
        guard let outputPath else { return "" }
        return String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
    }

    /// Waits until the child printed a line starting with `prefix`, or exited,
    /// or `timeout` passed; returns that line.
    public func waitForLine(startingWith prefix: String, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if let line = output().split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            if hasExited() { return nil }
            usleep(1000)
        } while ContinuousClock.now < deadline
        return nil
    }

    /// Sends `signal` to the child, if it has not been reaped yet.
    public func signal(_ signal: Int32) {
        status.withLock { if $0 == nil { _ = Glibc.kill(pid, signal) } }
    }

    /// Kills the child with SIGKILL and reaps it.
    public func kill() throws(ChildProcessError) {
        signal(SIGKILL)
        try wait(timeout: .seconds(10))
    }

    /// Waits for the child to end, polling every millisecond; throws when it
    /// still runs after `timeout`. Blocks the calling thread, but waits on
    /// nothing another thread must do.
    @discardableResult
    public func wait(timeout: Duration) throws(ChildProcessError) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while !hasExited() {
            guard ContinuousClock.now < deadline else { throw .stillRunning(command: command, pid: pid, timeout: timeout) }
            usleep(1000)
        }
        return exitStatus!
    }

    /// Waits for the child to end without holding a thread, polling every 20 ms;
    /// throws when it still runs after `timeout`.
    @discardableResult
    public func exit(within timeout: Duration) async throws(ChildProcessError) -> Int32 {
        // The exit is checked before the deadline: a poll that comes late on a
        // loaded machine still reports a child that ended as ended.
        let deadline = ContinuousClock.now + timeout
        while !hasExited() {
            guard ContinuousClock.now < deadline else { throw .stillRunning(command: command, pid: pid, timeout: timeout) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return exitStatus!
    }
}

extension ChildProcess {
    /// What a command run to its end printed, and its exit status.
    public struct Outcome: Sendable, CustomStringConvertible {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
        public var output: String { String(decoding: stdout, as: UTF8.self) }

        public var description: String { "exit \(status)\n--- stdout\n\(output)\n--- stderr\n\(stderr)" }
    }

    /// Runs `command` to its end, `input` on its stdin, and collects what it
    /// printed. A command that outlives `timeout` is killed, and `timedOut` thrown.
    public static func run(
        _ command: [String], input: Data? = nil, environment: [String: String] = [:], timeout: Duration
    ) throws -> Outcome {
        let files = try StreamFiles(input: input)
        defer { files.remove() }
        let child = try files.start(command, environment: environment)
        let ended = (try? child.wait(timeout: timeout)) != nil
        return try files.outcome(of: child, ended: ended, timeout: timeout)
    }

    /// `run` without holding a thread while the command runs.
    public static func run(
        _ command: [String], input: Data? = nil, environment: [String: String] = [:], timeout: Duration
    ) async throws -> Outcome {
        let files = try StreamFiles(input: input)
        defer { files.remove() }
        let child = try files.start(command, environment: environment)
        let ended = (try? await child.exit(within: timeout)) != nil
        return try files.outcome(of: child, ended: ended, timeout: timeout)
    }

    /// Files, not pipes, for a run's streams: nothing fills up and blocks the child.
    private struct StreamFiles {
        let folder: URL
        let stdin: Stream
        var stdout: String { folder.appendingPathComponent("stdout").path }
        var stderr: String { folder.appendingPathComponent("stderr").path }

        init(input: Data?) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("kache-child-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            if let input {
                let path = folder.appendingPathComponent("stdin")
                try input.write(to: path)
                stdin = .file(path.path)
            } else {
                stdin = .null
            }
        }

        func start(_ command: [String], environment: [String: String]) throws -> ChildProcess {
            try ChildProcess(command, environment: environment, stdin: stdin, stdout: .file(stdout), stderr: .file(stderr))
        }

        /// What `child` printed, once it `ended`; a child that did not is killed, and `timedOut` thrown.
        func outcome(of child: ChildProcess, ended: Bool, timeout: Duration) throws -> Outcome {
            guard ended else {
                try child.kill()
                throw ChildProcessError.timedOut(command: child.command, timeout: timeout)
            }
            return Outcome(
                status: child.exitStatus!,
                stdout: try Data(contentsOf: URL(fileURLWithPath: stdout)),
                stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: stderr)), as: UTF8.self)
            )
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// The package's executable `name`: `$environment` when set, else the file
    /// of that name in the products folder beside the test bundle (`swift
    /// build --build-tests` builds them all there).
    public static func product(named name: String, environment: String) -> String? {
        if let path = ProcessInfo.processInfo.environment[environment] { return path }
        var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        folders += [argument0.deletingLastPathComponent(), argument0.deletingLastPathComponent().deletingLastPathComponent()]
        return folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(command: [String], code: Int32)
    case stillRunning(command: [String], pid: pid_t, timeout: Duration)
    case timedOut(command: [String], timeout: Duration)

    public var description: String {
        switch self {
        case let .spawnFailed(command, code):
            return "\(command.joined(separator: " ")) could not be started: \(String(cString: strerror(code)))"
        case let .stillRunning(command, pid, timeout):
            return "\(command.joined(separator: " ")) (pid \(pid)) was still running after \(timeout)"
        case let .timedOut(command, timeout):
            return "\(command.joined(separator: " ")) did not finish within \(timeout) and was killed"
        }
    }
}
