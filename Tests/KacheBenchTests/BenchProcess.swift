import Foundation
import Testing

/// Runs the built `kache-bench` as a user would, with `$TMPDIR` pointing at a
/// folder of the test's own, so that what the run leaves behind can be checked.
struct BenchProcess {
    /// What one run printed and returned.
    struct Outcome: CustomStringConvertible {
        var status: Int32
        var reason: Process.TerminationReason
        var stdout: String
        var stderr: String

        var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    /// The executable: `$KACHE_BENCH_BINARY`, else `kache-bench` beside the test
    /// bundle (`swift build --build-tests` builds both into the same products folder).
    static let executable: URL? = {
        if let path = ProcessInfo.processInfo.environment["KACHE_BENCH_BINARY"] { return URL(fileURLWithPath: path) }
        let bundle = Bundle.main.bundleURL
        let arguments0 = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle, bundle.deletingLastPathComponent(), arguments0, arguments0.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("kache-bench") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

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
    func start(_ arguments: [String]) throws -> Process {
        let executable = try #require(Self.executable, "kache-bench was not found beside the tests; run `swift build --build-tests`")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        process.environment = environment
        _ = FileManager.default.createFile(atPath: scratch.appendingPathComponent("stdout").path, contents: nil)
        _ = FileManager.default.createFile(atPath: scratch.appendingPathComponent("stderr").path, contents: nil)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: scratch.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: scratch.appendingPathComponent("stderr"))
        try process.run()
        return process
    }

    /// Waits for `process` (at most `timeout` seconds, then kills it) and collects what it printed.
    func finish(_ process: Process, timeout: Double = 120) throws -> Outcome {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            Issue.record("kache-bench ran longer than \(Int(timeout)) s and was stopped")
        }
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, reason: process.terminationReason,
            stdout: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("stdout")), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: scratch.appendingPathComponent("stderr")), as: UTF8.self)
        )
    }

    /// Runs `kache-bench` with `arguments` to the end.
    func run(_ arguments: [String], timeout: Double = 120) throws -> Outcome {
        try finish(try start(arguments), timeout: timeout)
    }
}
