import Foundation
import KacheTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why the test server could not be used.
struct TestServerError: Error, CustomStringConvertible {
    let description: String
}

/// The scripted HTTP server of `Server/test_server.py`, on 127.0.0.1 and a
/// free port, for the life of one test. It is found next to this file (through
/// `#filePath`), so it works from a fresh clone without SwiftPM resources.
///
/// ```swift
/// let server = try TestServer()
/// defer { server.stop() }
/// let url = server.url("/r/a?cc=max-age%3D60")
/// #expect(try await server.requestCount("/r/a") == 1)
/// ```
final class TestServer: Sendable {
    /// The port the server listens on.
    let port: Int
    /// The interpreter's own pid: `python3` may be a wrapper (a pyenv shim is a
    /// bash script) whose process is not the server's, and a shell waiting for its
    /// child would not pass a termination on.
    let pid: Int32
    private let process: ChildProcess
    /// Holds the file the server's stdout goes to.
    private let scratch: URL
    private let stopped = Mutex(false)
    /// A session for the control paths, with no cache of any kind.
    private let control: URLSession

    /// The script, located from this source file.
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Server/test_server.py")

    /// Starts the server with `interpreter` (looked up on `PATH`); it exits by
    /// itself after `idleTimeout` seconds without a request, or when this test
    /// process exits. The timeout is generous because a test may wait a long
    /// time between requests when the whole suite runs in parallel on 2 cores.
    /// - Throws: ``TestServerError`` saying what is missing when the interpreter
    ///   or the script can't be found, or the server does not report its port in time.
    init(interpreter: String = "python3", idleTimeout: Int = 300) throws {
        guard FileManager.default.fileExists(atPath: TestServer.script.path) else {
            throw TestServerError(description: "The test server script is missing at \(TestServer.script.path).")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-test-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let process: ChildProcess
        do {
            process = try ChildProcess(
                [
                    "/usr/bin/env", interpreter, TestServer.script.path,
                    "--idle-timeout", String(idleTimeout), "--owner-pid", String(ProcessInfo.processInfo.processIdentifier),
                ],
                stdout: .file(scratch.appendingPathComponent("stdout").path)
            )
        } catch {
            try? FileManager.default.removeItem(at: scratch)
            throw TestServerError(description: "Could not start \(interpreter) through /usr/bin/env: \(error).")
        }
        let words = TestServer.firstLine(of: process, timeout: .seconds(10))?.split(separator: " ") ?? []
        guard words.count == 2, let port = Int(words[0]), let pid = Int32(words[1]) else {
            try? process.kill()
            try? FileManager.default.removeItem(at: scratch)
            if process.exitStatus == 127 {
                throw TestServerError(description:
                    "\(interpreter) was not found on PATH. The KacheHTTP tests need Python 3 to run their HTTP server (Tests/KacheHTTPTests/Server/test_server.py); install python3.")
            }
            throw TestServerError(description:
                "The test server (\(interpreter) \(TestServer.script.path)) did not report its port and pid within 10 seconds (exit status \(process.exitStatus ?? -1)).")
        }
        self.scratch = scratch
        self.process = process
        self.port = port
        self.pid = pid
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 10
        control = URLSession(configuration: configuration)
    }

    deinit { stop() }

    /// A URL on the server; `pathAndQuery` starts with `/`.
    func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// How many requests reached `path` (its query not counted), and the fields
    /// of the last one, names lowercased.
    func stats(_ path: String) async throws -> (count: Int, last: [String: String]) {
        let (data, _) = try await control.data(from: url("/__stats?path=\(path)"))
        struct Stats: Decodable {
            var count: Int
            var last: [String: String]
        }
        let stats = try JSONDecoder().decode(Stats.self, from: data)
        return (stats.count, stats.last)
    }

    /// How many requests reached `path`.
    func requestCount(_ path: String) async throws -> Int {
        try await stats(path).count
    }

    /// Gives `path` a new version: a new `ETag` (`etag=auto`) and `Last-Modified` (`lm_age`).
    func bump(_ path: String) async throws {
        _ = try await control.data(from: url("/__bump?path=\(path)"))
    }

    /// Lets the bodies of `path` that `stall_after` holds back go on (and those to come).
    func release(_ path: String) async throws {
        _ = try await control.data(from: url("/__release?path=\(path)"))
    }

    /// Moves the server's clock forward (its `Date` and `Expires` fields); does
    /// nothing once the server is stopped.
    func advance(by seconds: Int) async throws {
        guard !stopped.withLock({ $0 }) else { return }
        _ = try await control.data(from: url("/__advance?seconds=\(seconds)"))
    }

    /// Stops the server (by the interpreter's pid) and waits for the launched
    /// process to exit, which follows at once. Idempotent.
    func stop() {
        let first = stopped.withLock { wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }
        guard first else { return }
        kill(pid, SIGTERM)
        // Bounded: a server that ignores SIGTERM gets SIGKILL after 2 seconds.
        for _ in 0 ..< 200 where TestServer.isAlive(pid) {
            usleep(10_000)
        }
        if TestServer.isAlive(pid) { kill(pid, SIGKILL) }
        // The launched process (env's, or a wrapper's) ends with the server.
        if (try? process.wait(timeout: .seconds(5))) == nil { try? process.kill() }
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Whether `pid` names a process that has not exited (a zombie, exited but
    /// not yet reaped by the wrapper, counts as gone).
    private static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        // The state follows the command name in parentheses: "1234 (python3) Z ...".
        guard let close = status.lastIndex(of: ")") else { return true }
        return !status[close...].dropFirst().trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// The first whole line `process` printed, or nil when it exited first or
    /// after `timeout`.
    private static func firstLine(of process: ChildProcess, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            let output = process.output()
            if let newline = output.firstIndex(of: "\n") { return output[..<newline].trimmingCharacters(in: .whitespaces) }
            if process.hasExited() { return nil }
            usleep(5_000)
        } while ContinuousClock.now < deadline
        return nil
    }
}
