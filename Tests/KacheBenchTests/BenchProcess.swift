import Foundation
import KacheTestSupport
import Testing

/// Runs the built `kache-bench` as a user would, with `$TMPDIR` pointing at a
/// folder of the test's own, so that what the run leaves behind can be checked.
struct BenchProcess {
    /// What one run printed and returned.
    struct Outcome: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    /// The executable: `$KACHE_BENCH_BINARY`, else `kache-bench` beside the test
    /// bundle (`swift build --build-tests` builds both into the same products folder).
    static let executable = ChildProcess.product(named: "kache-bench", environment: "KACHE_BENCH_BINARY")

    /// A fresh folder for this test: the run's `$TMPDIR`, its JSON, its `--dir`.
    let scratch: URL
    /// The `$TMPDIR` the run sees; it must be empty again when the run is over.
    let temporary: URL

    /// Where scratch folders go: /dev/shm where there is one, so that the runs
    /// wait on no disk (these tests check what the tool does, not how fast:
    /// a `save()` flushes the whole file system, and on a machine shared with
    /// builds that alone can take seconds), else the usual temporary folder.
    static let scratchRoot: URL = {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
           FileManager.default.isWritableFile(atPath: "/dev/shm") {
            return URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        }
        return FileManager.default.temporaryDirectory
    }()

    init() throws {
        scratch = Self.scratchRoot.appendingPathComponent("kache-bench-test-\(UUID().uuidString)")
        temporary = scratch.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    /// Removes the scratch folder.
    func cleanUp() {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// What is left in the run's `$TMPDIR`.
    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: temporary.path)
    }

    /// Starts `kache-bench` with `arguments`; its output goes to files in the scratch folder.
    func start(_ arguments: [String]) throws -> ChildProcess {
        let executable = try #require(Self.executable, "kache-bench was not found beside the tests; run `swift build --build-tests`")
        return try ChildProcess(
            [executable] + arguments, environment: ["TMPDIR": temporary.path],
            stdout: .file(scratch.appendingPathComponent("stdout").path), stderr: .file(scratch.appendingPathComponent("stderr").path)
        )
    }

    /// Waits for `process` (at most `timeout` seconds, then kills it) and collects what it printed.
    func finish(_ process: ChildProcess, timeout: Double = 120) throws -> Outcome {
        do {
            try process.wait(timeout: .seconds(timeout))
        } catch {
            try process.kill()
            Issue.record("kache-bench ran longer than \(Int(timeout)) s and was killed")
        }
        return Outcome(
            status: process.exitStatus ?? -1,
            stdout: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("stdout")), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("stderr")), as: UTF8.self)
        )
    }

    /// Runs `kache-bench` with `arguments` to the end.
    func run(_ arguments: [String], timeout: Double = 120) throws -> Outcome {
        try finish(try start(arguments), timeout: timeout)
    }
}
